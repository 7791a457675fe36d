import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import net from 'node:net';

export interface SlowTcpServer {
  readonly port: number;
  /** Connections accepted so far, and how many are still held open. */
  readonly accepted: number;
  readonly open: number;
  /** Resolves at the next connection. */
  nextConnection(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP service that answers "pong" and closes only `holdMs` after a client connected: a slow check target. */
export async function slowTcpServer(holdMs: number): Promise<SlowTcpServer> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let waiters: (() => void)[] = [];
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    const timer = setTimeout(() => socket.end('pong\n'), holdMs);
    socket.on('close', () => clearTimeout(timer));
    for (const w of waiters.splice(0)) w();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() { return accepted; },
    get open() { return sockets.size; },
    nextConnection: () => new Promise<void>((resolve) => waiters.push(resolve)),
    close: async () => {
      waiters = [];
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** A TCP service that echoes what it reads and closes: a fast check target. */
export async function echoTcpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (d) => socket.end(d));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((done) => {
      for (const s of sockets) s.destroy();
      server.close(() => done());
    }),
  };
}

export interface WebhookCall {
  alertId: string;
  checkId: string;
  alertType: string;
  checkResultId: string | null;
  /** The receiver's clock when the request arrived. */
  at: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  /** Requests answered 2xx, in the order they arrived. */
  readonly delivered: WebhookCall[];
  /** Requests answered with an error status (while `status` was set to one). */
  readonly refused: WebhookCall[];
  /** The status the receiver answers: 204 (default) or an error status to refuse. */
  status: number;
  /** Stops listening: new connections are refused (ECONNREFUSED) and open ones dropped. */
  stop(): Promise<void>;
  /** Listens again, on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A webhook endpoint on 127.0.0.1 that records the alerts Vigil's WEBHOOK transport sends it. */
export async function webhookReceiver(): Promise<WebhookReceiver> {
  const delivered: WebhookCall[] = [];
  const refused: WebhookCall[] = [];
  let server: HttpServer | null = null;
  let port = 0;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const json = JSON.parse(body) as Record<string, unknown>;
      const call: WebhookCall = {
        alertId: String(req.headers['x-vigil-alert-id']),
        checkId: String(json.CHECK_ID),
        alertType: String(json.ALERT_TYPE),
        checkResultId: (json.CHECK_RESULT_ID as string | null | undefined) || null,
        at: Date.now(),
      };
      const status = receiver.status;
      (status >= 200 && status < 300 ? delivered : refused).push(call);
      res.writeHead(status).end();
    });
  };
  const start = async () => {
    if (server) return;
    const s = createHttpServer(handle);
    s.listen(port, '127.0.0.1');
    await once(s, 'listening');
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = null;
    if (!s) return;
    await new Promise<void>((done) => {
      s.close(() => done());
      s.closeAllConnections();
    });
  };
  await start();
  const receiver: WebhookReceiver = {
    get url() { return `http://127.0.0.1:${port}/alerts`; },
    get port() { return port; },
    delivered,
    refused,
    status: 204,
    stop,
    start,
    close: stop,
  };
  return receiver;
}
