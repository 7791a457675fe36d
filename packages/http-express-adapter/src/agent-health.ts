import { createServer, type Server } from 'node:http';

export interface AgentHealthOptions {
  /** Default: `AGENT_HEALTH_PORT` from the environment, else 8081. */
  port?: number;
  host?: string;
  /**
   * Extra readiness condition (e.g. the database answers). Readiness is 503 while it resolves
   * false or throws, and always while shutting down.
   */
  ready?: () => boolean | Promise<boolean>;
}

export interface AgentHealthServer {
  readonly server: Server;
  /** The port it listens on (useful with port 0). */
  readonly port: number;
  /** From now on readiness answers 503, so a balancer stops sending work; liveness stays 200. */
  shutdown(): void;
  readonly shuttingDown: boolean;
  close(): Promise<void>;
}

function send(res: import('node:http').ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/**
 * The probes of a private-location agent: `GET /-/readiness` (200, 503 while shutting down),
 * `GET /-/liveness` and `GET /health` (200), on `AGENT_HEALTH_PORT` (default 8081).
 */
export async function agentHealthServer(options: AgentHealthOptions = {}): Promise<AgentHealthServer> {
  const port = options.port ?? Number(process.env.AGENT_HEALTH_PORT ?? 8081);
  let shuttingDown = false;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { statusCode: 405, error: 'Method Not Allowed', message: 'Use GET' });
    if (path === '/-/liveness' || path === '/health') return send(res, 200, { status: 'ok' });
    if (path === '/-/readiness') {
      if (shuttingDown) return send(res, 503, { status: 'shutting down' });
      Promise.resolve()
        .then(() => (options.ready ? options.ready() : true))
        .then(
          (ok) => send(res, ok ? 200 : 503, { status: ok ? 'ready' : 'not ready' }),
          () => send(res, 503, { status: 'not ready' }),
        );
      return;
    }
    send(res, 404, { statusCode: 404, error: 'Not Found', message: `No probe at ${path}` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : port,
    shutdown() {
      shuttingDown = true;
    },
    get shuttingDown() {
      return shuttingDown;
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
