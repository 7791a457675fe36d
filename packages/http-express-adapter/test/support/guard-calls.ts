// Real HTTP calls to a router on 127.0.0.1, for the tests of its guards.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach } from 'vitest';
import type { VigilRouterOptions } from '../../src/index.js';
import { apiHarness, type ApiHarness } from './harness.js';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

let server: Server | undefined;
let port: number;
/** The harness of the router the current test started. */
export const current: { h: ApiHarness } = { h: undefined as unknown as ApiHarness };

/** Starts a router with these options on a port of 127.0.0.1 (closed after each test). */
export async function start(options: VigilRouterOptions): Promise<ApiHarness> {
  current.h = await apiHarness('sqlite', options);
  server = current.h.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  return current.h;
}

/** The port of the router the current test started. */
export const listeningPort = (): number => port;

/** Closes what `start` opened. */
export async function stop(): Promise<void> {
  const [s, h] = [server, current.h];
  [server, current.h] = [undefined, undefined as unknown as ApiHarness];
  s?.closeAllConnections();
  if (s) await new Promise((resolve) => s.close(resolve));
  await h?.close();
}

/** Closes what `start` opened after each test of the file that calls it. */
export function closeAfterEach(): void {
  afterEach(stop);
}

/** A request from `from` (any 127.x address) with these credentials; `key: null` sends none. */
export function call(path: string, creds: { key: string | null; accountId: string }, from = '127.0.0.1', headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path: `/api${path}`, localAddress: from, agent: false,
      headers: { ...(creds.key === null ? {} : { authorization: `Bearer ${creds.key}` }), 'x-service-account': creds.accountId, ...headers },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends a request and hangs up once it has reached the server, without waiting for the answer. */
export async function hangUp(path: string, creds: { key: string; accountId: string }, reached: Promise<unknown>, method = 'GET', body?: unknown): Promise<void> {
  const req = http.request({
    host: '127.0.0.1', port, path: `/api${path}`, method, agent: false,
    headers: { authorization: `Bearer ${creds.key}`, 'x-service-account': creds.accountId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
  });
  req.on('error', () => {});
  req.end(body === undefined ? undefined : JSON.stringify(body));
  await reached;
  req.destroy();
  // Long enough for the server to see the connection close.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** A promise and the function that settles it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

