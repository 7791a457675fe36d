import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The exact body bytes. */
  raw: Buffer;
  text: string;
  /** The body parsed as JSON, or as a form, or null. */
  json: unknown;
  form: Record<string, string> | null;
  at: number;
}

export interface Answer {
  status: number;
  body?: unknown;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
}

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers from a script: the next
 * scripted answer if there is one, else `fallback` (200 unless set).
 */
export class Receiver {
  readonly requests: Received[] = [];
  /** TCP connections accepted, whether or not a request followed. */
  connections = 0;
  private script: Answer[] = [];
  fallback: Answer | ((r: Received) => Answer) = { status: 200, body: { ok: true } };
  private server: Server | null = null;
  port = 0;
  private waiters: { n: number; resolve: () => void }[] = [];

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    await r.listen(0);
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Answers the next requests with these, in order. */
  answer(...answers: Answer[]): this {
    this.script.push(...answers);
    return this;
  }

  /** Resolves once `n` requests arrived in all. */
  waitFor(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        const isForm = String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
        const received: Received = {
          method: req.method ?? '',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          raw,
          text,
          json,
          form: isForm ? Object.fromEntries(new URLSearchParams(text)) : null,
          at: performance.now(),
        };
        this.requests.push(received);
        const answer = this.script.shift() ?? (typeof this.fallback === 'function' ? this.fallback(received) : this.fallback);
        const reply = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
        };
        if (answer.delayMs) setTimeout(reply, answer.delayMs);
        else reply();
        for (const w of this.waiters.filter((w) => this.requests.length >= w.n)) w.resolve();
        this.waiters = this.waiters.filter((w) => this.requests.length < w.n);
      });
    });
    server.on('connection', () => this.connections++);
    server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening (the port refuses connections) until `up()`. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.down();
  }
}

/** A `receiver()` for a test file: each one is closed after its test. */
export function receiversPerTest(): () => Promise<Receiver> {
  const open: Receiver[] = [];
  afterEach(async () => {
    for (const r of open.splice(0)) await r.close();
  });
  return async () => {
    const r = await Receiver.start();
    open.push(r);
    return r;
  };
}
