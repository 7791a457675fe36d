import { once } from 'node:events';
import net from 'node:net';
import type { RunJob, TcpAssertion, TcpCheck, TcpRequest } from '@vigil/core';
import { runJobFixture, tcpCheckFixture } from '@vigil/core/testing';

export interface TestServer {
  host: string;
  port: number;
  /** Server-side sockets, in the order they connected. */
  sockets: net.Socket[];
  /** Everything clients sent, per connection. */
  received: string[];
  /** Resolves with the n-th (0-based) server-side socket once it has connected. */
  connection(n?: number): Promise<net.Socket>;
  /** Resolves once the n-th server-side socket is closed. */
  closed(n?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real TCP server on a loopback address and a free port; `onConnection` plays the service. */
export async function startServer(host: string, onConnection: (socket: net.Socket) => void): Promise<TestServer> {
  const sockets: net.Socket[] = [];
  const received: string[] = [];
  const closes: Promise<void>[] = [];
  const waiting: ((s: net.Socket) => void)[] = [];
  const server = net.createServer((socket) => {
    const i = sockets.push(socket) - 1;
    received[i] = '';
    // Not events.once: it would reject on the 'error' a reset brings before 'close'.
    closes[i] = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk) => (received[i] += chunk.toString('utf8')));
    // A client that goes away mid-answer is what several cases test; the server shrugs.
    socket.on('error', () => undefined);
    onConnection(socket);
    for (const w of waiting.splice(0)) w(socket);
  });
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const connection = async (n = 0) => {
    while (!sockets[n]) await new Promise<net.Socket>((resolve) => waiting.push(resolve));
    return sockets[n]!;
  };
  return {
    host,
    port,
    sockets,
    received,
    connection,
    async closed(n = 0) {
      await connection(n);
      await closes[n];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers every chunk with the same bytes and keeps the connection open, as RFC 862 echo does. */
export const echo = (socket: net.Socket) => {
  socket.on('data', (chunk) => socket.write(chunk));
};

/** Accepts and then says nothing, ever. */
export const silent = () => undefined;

/** Writes `payload` once the client has spoken (or at once when `greet`), then closes. */
export const answer = (payload: string | Buffer, options: { greet?: boolean; delayMs?: number } = {}) => (socket: net.Socket) => {
  const reply = () => setTimeout(() => socket.end(payload), options.delayMs ?? 0);
  if (options.greet) reply();
  else socket.once('data', reply);
};

/** A port on `host` that nothing listens on (it was free a moment ago). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer().listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether this machine can listen on ::1 (containers without IPv6 cannot). */
export async function ipv6Loopback(): Promise<boolean> {
  const server = net.createServer();
  try {
    server.listen(0, '::1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

export function assertion(
  source: TcpAssertion['source'],
  comparison: TcpAssertion['comparison'],
  target = '',
  extra: Partial<Pick<TcpAssertion, 'property' | 'regex'>> = {},
): TcpAssertion {
  return { source, comparison, target, property: extra.property ?? '', regex: extra.regex ?? null };
}

export interface JobOptions {
  request: Partial<TcpRequest> & { port: number };
  check?: Partial<Omit<TcpCheck, 'request'>>;
  job?: Partial<Omit<RunJob, 'check'>>;
}

/** A RunJob for a TCP check, built from the core fixture so every field has its schema default. */
export function tcpJob({ request, check = {}, job = {} }: JobOptions): RunJob {
  const base = tcpCheckFixture();
  const fullCheck: TcpCheck = {
    ...base,
    accountId: 'account-1',
    ...check,
    request: { ...base.request, hostname: '127.0.0.1', ...request },
  };
  return runJobFixture(fullCheck, job);
}
