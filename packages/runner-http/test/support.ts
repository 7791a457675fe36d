import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiAssertion, ApiCheck, ApiRequest, RunJob } from '@vigil/core';
import { apiCheckFixture, runJobFixture } from '@vigil/core/testing';
import { afterEach } from 'vitest';

/** What a test server saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The subject CN of the client certificate it presented, if any. */
  clientCertificate: string | null;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export interface TestServer {
  port: number;
  /** `http://127.0.0.1:port` or `https://127.0.0.1:port`. */
  origin: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

async function listen(server: http.Server, scheme: 'http' | 'https', handler: Handler): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const socket = req.socket as import('node:tls').TLSSocket;
      const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : null;
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, clientCertificate: peer?.subject?.CN ? String(peer.subject.CN) : null });
      handler(req, res, body);
    });
  });
  // A client that goes away mid-answer is what several cases test; the server shrugs.
  server.on('clientError', (_err, socket) => socket.destroy());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `${scheme}://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A real HTTP server on 127.0.0.1 and a free port; `handler` plays the API. */
export function startHttp(handler: Handler): Promise<TestServer> {
  return listen(http.createServer(), 'http', handler);
}

/** `serve(handler)` starts a local HTTP server that is closed after the test (call at the top of a file or describe). */
export function localServers(): (handler: Handler) => Promise<TestServer> {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  return async (handler) => {
    const s = await startHttp(handler);
    servers.push(s);
    return s;
  };
}

/** A real HTTPS server with the test CA's certificate; with `clientCa` it demands a client certificate that CA signed. */
export function startHttps(pki: TestPki, handler: Handler, options: { clientCa?: string } = {}): Promise<TestServer> {
  const server = https.createServer({
    key: pki.serverKey,
    cert: pki.serverCert,
    ...(options.clientCa ? { requestCert: true, rejectUnauthorized: true, ca: options.clientCa } : {}),
  });
  return listen(server as unknown as http.Server, 'https', handler);
}

/** Answers JSON with a status. */
export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(value));
};

/** Certificates made for one test file: a CA, a server certificate it signed, and client certificates. */
export interface TestPki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** Signed by the CA; its key is encrypted with `clientPassphrase`. */
  clientCert: string;
  clientKey: string;
  clientPassphrase: string;
  /** A client certificate of another CA, which the server does not trust. */
  strangerCert: string;
  strangerKey: string;
}

/**
 * Makes a throwaway PKI with the openssl command line (as the other packages' TLS tests do): a
 * CA, a server certificate for localhost, 127.0.0.1 and *.mtls.test, and client certificates.
 */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-http-pki-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
  try {
    const ca = (name: string, cn: string) => ssl('req', '-x509', ...ec, '-nodes', '-days', '2', '-subj', `/CN=${cn}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout', f(`${name}.key`), '-out', f(`${name}.crt`));
    const sign = (name: string, caName: string, cn: string, ext: string, keyArgs: string[]) => {
      writeFileSync(f(`${name}.ext`), ext);
      ssl('req', ...ec, ...keyArgs, '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
      ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f(`${caName}.crt`), '-CAkey', f(`${caName}.key`), '-CAcreateserial',
        '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.crt`));
    };
    ca('ca', 'Vigil Test CA');
    ca('other-ca', 'Some Other CA');
    sign('server', 'ca', 'localhost', 'subjectAltName=DNS:localhost,DNS:*.mtls.test,DNS:mtls.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n', ['-nodes']);
    sign('client', 'ca', 'vigil-client', 'extendedKeyUsage=clientAuth\n', ['-passout', 'pass:s3cret-pass']);
    sign('stranger', 'other-ca', 'stranger', 'extendedKeyUsage=clientAuth\n', ['-nodes']);
    const read = (name: string) => readFileSync(f(name), 'utf8');
    return {
      caCert: read('ca.crt'),
      serverCert: read('server.crt'),
      serverKey: read('server.key'),
      clientCert: read('client.crt'),
      clientKey: read('client.key'),
      clientPassphrase: 's3cret-pass',
      strangerCert: read('stranger.crt'),
      strangerKey: read('stranger.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function assertion(source: ApiAssertion['source'], comparison: ApiAssertion['comparison'], target = '', extra: Partial<Pick<ApiAssertion, 'property' | 'regex'>> = {}): ApiAssertion {
  return { source, comparison, target, property: extra.property ?? '', regex: extra.regex ?? null };
}

export interface ApiJobOptions {
  request: Partial<ApiRequest> & { url: string };
  check?: Partial<Omit<ApiCheck, 'request'>>;
  job?: Partial<Omit<RunJob, 'check'>>;
}

/** A RunJob for an API check, built from the core fixture so every field has its schema default. */
export function apiJob({ request, check = {}, job = {} }: ApiJobOptions): RunJob {
  const base = apiCheckFixture();
  const full: ApiCheck = { ...base, accountId: 'account-1', ...check, request: { ...base.request, ...request } };
  return runJobFixture(full, job);
}
