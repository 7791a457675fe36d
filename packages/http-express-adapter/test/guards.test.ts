// The router's guards over real HTTP on 127.0.0.1: failed authentication throttled per client
// address, the cap on one key's requests in flight, and requests whose client hung up dropped.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { VigilRouterOptions } from '../src/index.js';
import { apiHarness, type ApiHarness } from './support/harness.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

let h: ApiHarness;
let server: Server;
let port: number;

async function start(options: VigilRouterOptions): Promise<void> {
  h = await apiHarness('sqlite', options);
  server = h.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await h?.close();
});

/** A request from `from` (any 127.x address) with these credentials; `key: null` sends none. */
function call(path: string, creds: { key: string | null; accountId: string }, from = '127.0.0.1', headers: Record<string, string> = {}): Promise<Answer> {
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
async function hangUp(path: string, creds: { key: string; accountId: string }, reached: Promise<unknown>): Promise<void> {
  const req = http.request({ host: '127.0.0.1', port, path: `/api${path}`, agent: false, headers: { authorization: `Bearer ${creds.key}`, 'x-service-account': creds.accountId } });
  req.on('error', () => {});
  req.end();
  await reached;
  req.destroy();
  // Long enough for the server to see the connection close.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const wrong = (accountId: string) => ({ key: `vgl_${'x'.repeat(43)}`, accountId });

describe('failed authentication throttled per client address', () => {
  it('answers 429 with Retry-After after 30 failures from one address; a right key from another address still gets 200', async () => {
    await start({});
    for (let i = 0; i < 30; i++) expect((await call('/v1/checks', wrong(h.a.accountId))).status).toBe(401);
    const refused = await call('/v1/checks', wrong(h.a.accountId));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.any(String) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // No key at all counts as a failure too, and is refused the same way.
    expect((await call('/v1/checks', { key: null, accountId: h.a.accountId })).status).toBe(429);

    expect((await call('/v1/checks', h.a, '127.0.0.2')).status).toBe(200);
    expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.2')).status).toBe(401);
  });

  it('lets in, from a throttled address, a key that authenticated within the window; others wait until it passes', async () => {
    await start({ authThrottle: { limit: 3, windowMs: 1_000 } });
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call('/v1/checks', wrong(h.a.accountId))).status).toBe(401);
    expect((await call('/v1/checks', wrong(h.a.accountId))).status).toBe(429);
    // a's key authenticated a moment ago; b's key has not been seen and waits like a guess.
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    expect((await call('/v1/checks', h.b)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await call('/v1/checks', h.b)).status).toBe(200);
    expect((await call('/v1/checks', wrong(h.a.accountId))).status).toBe(401);
  });

  it('counts a key of another account (403) as a failure', async () => {
    await start({ authThrottle: { limit: 2 } });
    for (let i = 0; i < 2; i++) expect((await call('/v1/checks', { key: h.a.key, accountId: h.b.accountId }, '127.0.0.3')).status).toBe(403);
    expect((await call('/v1/checks', { key: h.b.key, accountId: h.a.accountId }, '127.0.0.3')).status).toBe(429);
  });

  it('keys on the socket address unless trustProxy is set, then on req.ip', async () => {
    await start({ authThrottle: { limit: 2 } });
    h.app.set('trust proxy', true);
    for (const forwarded of ['10.0.0.1', '10.0.0.2']) {
      expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': forwarded })).status).toBe(401);
    }
    expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.3' })).status).toBe(429);
    server.close();
    await h.close();

    await start({ authThrottle: { limit: 2 }, trustProxy: true });
    h.app.set('trust proxy', true);
    for (let i = 0; i < 2; i++) expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.1' })).status).toBe(401);
    expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.1' })).status).toBe(429);
    expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.2' })).status).toBe(401);
  });
});

describe('requests of one key in flight', () => {
  it('answers 429 with Retry-After: 1 beyond the cap, to that key only, and serves it again once a slot is free', async () => {
    await start({ maxInFlight: 2 });
    const list = h.vigil.checks.list.bind(h.vigil.checks);
    const held = gate();
    let waiting = 0;
    const reached = gate();
    h.vigil.checks.list = async (accountId, query) => {
      if (accountId === h.a.accountId && ++waiting <= 2) {
        if (waiting === 2) reached.open();
        await held.opened;
      }
      return list(accountId, query);
    };
    const slow = [call('/v1/checks', h.a), call('/v1/checks', h.a)];
    await reached.opened;
    const refused = await call('/v1/checks', h.a);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect((await call('/v1/checks', h.b)).status).toBe(200);
    held.open();
    expect((await Promise.all(slow)).map((a) => a.status)).toEqual([200, 200]);
    expect((await call('/v1/checks', h.a)).status).toBe(200);
  });

  it('frees the slot of a request whose client hung up', async () => {
    await start({ maxInFlight: 1 });
    const list = h.vigil.checks.list.bind(h.vigil.checks);
    const held = gate();
    const reached = gate();
    let calls = 0;
    h.vigil.checks.list = async (accountId, query) => {
      if (++calls === 1) {
        reached.open();
        await held.opened;
      }
      return list(accountId, query);
    };
    await hangUp('/v1/checks', h.a, reached.opened);
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    held.open();
  });
});

describe('a request whose client hung up', () => {
  it('is dropped before its handler runs when the client left while it waited for authentication', async () => {
    await start({});
    const authenticate = h.vigil.authenticator.authenticate.bind(h.vigil.authenticator);
    const held = gate();
    const reached = gate();
    h.vigil.authenticator.authenticate = async (request) => {
      reached.open();
      await held.opened;
      return authenticate(request);
    };
    const list = h.vigil.checks.list.bind(h.vigil.checks);
    let listed = 0;
    h.vigil.checks.list = async (accountId, query) => {
      listed++;
      return list(accountId, query);
    };
    await hangUp('/v1/checks', h.a, reached.opened);
    held.open();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(listed).toBe(0);
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    expect(listed).toBe(1);
  });
});
