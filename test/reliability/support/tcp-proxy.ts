import { once } from 'node:events';
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections made through it so far. */
  readonly connections: number;
  /** A network outage: live connections are destroyed and new ones refused. */
  cut(): Promise<void>;
  /** The network is back: connections are accepted again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 in front of `target` that a test cuts and restores. */
export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  let connections = 0;
  const listen = async () => {
    const s = net.createServer((client) => {
      connections++;
      const upstream = net.connect(target.port, target.host);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    s.listen(port, '127.0.0.1');
    await once(s, 'listening');
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  const cut = async () => {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s) await new Promise<void>((done) => s.close(() => done()));
  };
  await listen();
  return {
    get port() { return port; },
    get connections() { return connections; },
    cut,
    restore: async () => {
      if (!server) await listen();
    },
    close: cut,
  };
}
