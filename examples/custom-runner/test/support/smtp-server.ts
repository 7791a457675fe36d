import { execFileSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Pem {
  cert: string;
  key: string;
}

/**
 * A self-signed certificate for `mx.example.test` and 127.0.0.1 (openssl, as Vigil's other TLS
 * tests make theirs). A runner trusts it when given it as `ca`.
 */
export function selfSigned(): Pem {
  const out = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=mx.example.test', '-addext', 'subjectAltName=DNS:mx.example.test,IP:127.0.0.1', '-days', '2', '-keyout', '-', '-out', '-'],
  { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const block = (re: RegExp) => `${out.match(re)![0]}\n`;
  return { cert: block(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/), key: block(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/) };
}

/** A port on 127.0.0.1 that nothing listens on: connections to it are refused at once. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export interface SmtpServerOptions {
  /** The text after `220 mx.example.test ESMTP`. */
  banner?: string;
  /**
   * How the server greets: `'now'` (default) with 220; a number of ms to wait first; `'never'`
   * says nothing at all; `{ code, message }` refuses the session with that reply and closes.
   */
  greet?: 'now' | 'never' | number | { code: number; message: string };
  /** Offer STARTTLS with this certificate; without it the server does not offer STARTTLS. */
  tls?: Pem;
}

/** What one client session did, read when it closed. */
export interface SmtpSession {
  ehloName: string | false;
  secure: boolean;
}

/** A real SMTP server (the smtp-server package) on 127.0.0.1, counting what reaches it. */
export interface TestSmtpServer {
  port: number;
  /** Connections accepted, greeted or not. */
  connections: number;
  /** Sessions that ended, in the order they ended. */
  sessions: SmtpSession[];
  close(): Promise<void>;
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const greet = options.greet ?? 'now';
  const state = { connections: 0, sessions: [] as SmtpSession[] };
  const server = new SMTPServer({
    name: 'mx.example.test',
    banner: options.banner,
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    closeTimeout: 100,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    onConnect(_session, callback) {
      state.connections += 1;
      if (greet === 'never') return;
      if (typeof greet === 'number') setTimeout(() => callback(), greet);
      else if (typeof greet === 'object') callback(Object.assign(new Error(greet.message), { responseCode: greet.code }));
      else callback();
    },
    onClose(session) {
      state.sessions.push({ ehloName: session.hostNameAppearsAs, secure: session.secure });
    },
  });
  // A client that goes away mid-session is what some tests do; the server must not throw for it.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    get connections() {
      return state.connections;
    },
    get sessions() {
      return state.sessions;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
