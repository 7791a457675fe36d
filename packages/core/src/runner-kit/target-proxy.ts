import net from 'node:net';
import { systemLookupAll, type LookupAllFunction } from './target-lookup.js';
import { targetRefusalMessage, type TargetPolicy } from './target-policy.js';

// A local SOCKS5 proxy that holds a browser's traffic to the target policy: the browser runner's
// pooled browsers and the Playwright runner's suites send every connection through one.

/** A connection the target policy refused: where the run's pages (or its script) tried to go, and why not. */
export interface RefusedTarget {
  /** `browser`: the pages, through the proxy; `script`: the script's own process, which may open no connection under a policy. */
  source: 'browser' | 'script';
  host: string;
  port: number;
  address: string;
  reason: string;
  /** `targetRefusalMessage`: the run's error message. */
  message: string;
}

/** A connection the proxy could not open for the run (Chromium only says net::ERR_SOCKS_CONNECTION_FAILED). */
export interface ProxyConnectionError {
  host: string;
  port: number;
  error: string;
}

/** The most of each a run keeps; a page that retries one address is recorded once. */
const MAX_RECORDS = 20;

/** SOCKS5 (RFC 1928) reply codes. */
const REPLY = { ok: 0, failure: 1, notAllowed: 2, networkUnreachable: 3, hostUnreachable: 4, refused: 5, timedOut: 6, commandNotSupported: 7 } as const;

const replyCode = (code: string | undefined): number => {
  switch (code) {
    case 'ECONNREFUSED':
      return REPLY.refused;
    case 'ENETUNREACH':
      return REPLY.networkUnreachable;
    case 'EHOSTUNREACH':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return REPLY.hostUnreachable;
    case 'ETIMEDOUT':
      return REPLY.timedOut;
    default:
      return REPLY.failure;
  }
};

/** A failed request's reply (RFC 1928 §6); the connection ends with it. */
function fail(client: net.Socket, code: number): void {
  client.end(Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]), () => client.destroy());
}
const SUCCESS_REPLY = Buffer.from([5, REPLY.ok, 0, 1, 0, 0, 0, 0, 0, 0]);

interface SocksRequest {
  command: number;
  host: string;
  port: number;
  /** Bytes the request took. */
  length: number;
}

/** The CONNECT request at the start of `data` (RFC 1928 §4), null while incomplete, 'bad' when it is not one. */
export function parseSocksRequest(data: Buffer): SocksRequest | null | 'bad' {
  if (data.length < 5) return null;
  if (data[0] !== 5) return 'bad';
  const command = data[1]!;
  const type = data[3];
  let host: string;
  let at: number;
  if (type === 1) {
    if (data.length < 10) return null;
    host = [...data.subarray(4, 8)].join('.');
    at = 8;
  } else if (type === 3) {
    const length = data[4]!;
    if (data.length < 5 + length + 2) return null;
    host = data.subarray(5, 5 + length).toString('latin1');
    at = 5 + length;
  } else if (type === 4) {
    if (data.length < 22) return null;
    const groups = Array.from({ length: 8 }, (_, i) => data.readUInt16BE(4 + 2 * i).toString(16));
    host = groups.join(':');
    at = 20;
  } else {
    return 'bad';
  }
  return { command, host: host.replace(/^\[|\]$/g, ''), port: data.readUInt16BE(at), length: at + 2 };
}

/** What the proxy saw of one run: refusals, failed connections, and the connections still open. */
export class ProxyRun {
  readonly refused: RefusedTarget[] = [];
  readonly connectionErrors: ProxyConnectionError[] = [];
  /** @internal The run's open connections, cut when it ends. */
  readonly sockets = new Set<net.Socket>();
  ended = false;

  constructor(
    readonly policy: TargetPolicy,
    private readonly onEnd: (run: ProxyRun) => void,
  ) {}

  /** Records a refusal: the proxy's own, or one of the script's process that the runner reports. */
  refuse(target: RefusedTarget): void {
    if (this.refused.length < MAX_RECORDS && !this.refused.some((r) => r.host === target.host && r.port === target.port)) this.refused.push(target);
  }

  /** @internal */
  failed(error: ProxyConnectionError): void {
    if (this.connectionErrors.length < MAX_RECORDS && !this.connectionErrors.some((e) => e.host === error.host && e.port === error.port)) this.connectionErrors.push(error);
  }

  /** The run is over: whatever it left open is cut, and the proxy refuses everything until the next run begins. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.onEnd(this);
  }
}

/**
 * The way out of a browser under a target policy: a SOCKS5 proxy on 127.0.0.1 that the browser
 * sends all its traffic through (`--proxy-server=socks5://…`), loopback included. Chromium sends
 * it names, not addresses (SOCKS5 resolves on the proxy's side), so the lookup is the proxy's
 * own: it looks the name up, checks every address with the policy of the run the browser serves,
 * and connects to the address it checked. A name that answers a public address to a check and an
 * internal one to the connection (DNS rebinding) is no way around it. One proxy serves one browser,
 * which serves one run at a time; between runs it refuses every connection.
 */
export class TargetProxy {
  private current: ProxyRun | null = null;
  private readonly clients = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
    private readonly lookup: LookupAllFunction,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(lookup: LookupAllFunction = systemLookupAll): Promise<TargetProxy> {
    // Half-open connections are carried as they are: each side's end is passed on by pipe().
    const server = net.createServer({ allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        // An accept that fails (out of file descriptors) must not end the host: that connection is lost, the proxy goes on.
        server.on('error', () => {});
        resolve();
      });
    });
    return new TargetProxy(server, (server.address() as net.AddressInfo).port, lookup);
  }

  /** The browser's `--proxy-server`. */
  get url(): string {
    return `socks5://127.0.0.1:${this.port}`;
  }

  /** The connections from now on are the run's, judged by its policy, until `end()`. */
  beginRun(policy: TargetPolicy): ProxyRun {
    this.current?.end();
    const run = new ProxyRun(policy, (ended) => {
      if (this.current === ended) this.current = null;
    });
    this.current = run;
    return run;
  }

  close(): void {
    this.current?.end();
    this.server.close();
    for (const client of this.clients) client.destroy();
  }

  private accept(client: net.Socket): void {
    this.clients.add(client);
    client.once('close', () => this.clients.delete(client));
    client.on('error', () => {});
    client.setNoDelay(true);
    // A client that opens a connection and never asks for anything is let go.
    client.setTimeout(10_000, () => client.destroy());
    // A client that leaves before its request is answered is let go.
    const onEnd = () => client.destroy();
    client.once('end', onEnd);
    let buffer = Buffer.alloc(0);
    let greeted = false;
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!greeted) {
        if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return;
        const methods = buffer.subarray(2, 2 + buffer[1]!);
        // Version 5, without authentication: the proxy listens on loopback and reaches only what the policy allows.
        if (buffer[0] !== 5 || !methods.includes(0)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 0]));
        buffer = buffer.subarray(2 + buffer[1]!);
        greeted = true;
      }
      const request = parseSocksRequest(buffer);
      if (request === null) {
        if (buffer.length > 300) client.destroy();
        return;
      }
      client.off('data', onData);
      client.off('end', onEnd);
      client.setTimeout(0);
      client.pause();
      if (request === 'bad') return void client.destroy();
      void this.open(client, request, buffer.subarray(request.length));
    };
    client.on('data', onData);
  }

  private async open(client: net.Socket, request: SocksRequest, early: Buffer): Promise<void> {
    const run = this.current;
    const { host, port } = request;
    // Between runs (and after one ended) nothing goes out.
    if (!run) return fail(client, REPLY.notAllowed);
    if (request.command !== 1) return fail(client, REPLY.commandNotSupported);
    run.sockets.add(client);
    client.once('close', () => run.sockets.delete(client));

    let address: string;
    let family: number;
    try {
      const literal = net.isIP(host);
      // Every address of a name is checked, so a name with one internal address among public ones is refused.
      const found = literal ? [{ address: host, family: literal }] : await this.lookup(host, 0);
      if (found.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      for (const f of found) {
        const refusal = run.policy.checkAddress(f.address);
        if (!refusal) continue;
        const message = targetRefusalMessage(refusal, host);
        run.refuse({ source: 'browser', host, port, address: refusal.address, reason: refusal.reason, message });
        return fail(client, REPLY.notAllowed);
      }
      ({ address, family } = found[0]!);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      run.failed({ host, port, error: e.message });
      return fail(client, replyCode(e.code));
    }
    if (run.ended || client.destroyed) return void client.destroy();

    const upstream = net.connect({ host: address, port, family, noDelay: true, allowHalfOpen: true });
    run.sockets.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.write(SUCCESS_REPLY);
      if (early.length > 0) upstream.write(early);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (connected) return void client.destroy();
      run.failed({ host, port, error: err.message });
      fail(client, replyCode(err.code));
    });
    upstream.once('close', () => run.sockets.delete(upstream));
    client.once('close', () => upstream.destroy());
    client.once('end', () => {
      if (!connected) client.destroy();
    });
  }
}
