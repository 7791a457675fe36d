// The router's guards over real HTTP on 127.0.0.1: failed authentication throttled per client
// address, and requests whose client hung up dropped (the cap on a key's requests in flight: in-flight.test.ts).
import { describe, expect, it } from 'vitest';
import type { ApiHarness } from './support/harness.js';
import { call, closeAfterEach, gate, hangUp, start as startRouter, stop } from './support/guard-calls.js';
import type { VigilRouterOptions } from '../src/index.js';

let h: ApiHarness;
const start = async (options: VigilRouterOptions) => {
  h = await startRouter(options);
};
closeAfterEach();

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
    await stop();

    await start({ authThrottle: { limit: 2 }, trustProxy: true });
    h.app.set('trust proxy', true);
    for (let i = 0; i < 2; i++) expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.1' })).status).toBe(401);
    expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.1' })).status).toBe(429);
    expect((await call('/v1/checks', wrong(h.a.accountId), '127.0.0.1', { 'x-forwarded-for': '10.0.0.2' })).status).toBe(401);
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

  it('makes no further query for a read whose client left while it ran, and answers nothing', async () => {
    await start({});
    const knex = (h.vigil.storage as unknown as { knex: import('knex').Knex }).knex;
    const queries: string[] = [];
    knex.on('query', (q: { sql: string }) => queries.push(q.sql));
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } });
    // The results of a check: the check is read first, then its results.
    const getCheck = h.vigil.storage.checks.get.bind(h.vigil.storage.checks);
    const held = gate();
    const reached = gate();
    h.vigil.storage.checks.get = async (accountId, id) => {
      reached.open();
      await held.opened;
      return getCheck(accountId, id);
    };
    await hangUp(`/v1/check-results/${check.id}`, h.a, reached.opened);
    const before = queries.length;
    held.open();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(queries.slice(before).filter((sql) => /vigil_check_results|vigil_checks/.test(sql))).toEqual([]);
  });

  it('completes a write whose client left while it ran', async () => {
    await start({});
    const create = h.vigil.checks.create.bind(h.vigil.checks);
    const held = gate();
    const reached = gate();
    h.vigil.checks.create = (async (...args: Parameters<typeof create>) => {
      reached.open();
      await held.opened;
      return create(...args);
    }) as typeof create;
    await hangUp('/v1/checks/tcp', h.a, reached.opened, 'POST', { name: 'kept', request: { hostname: '127.0.0.1', port: 5432 } });
    held.open();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await h.vigil.checks.list(h.a.accountId, {})).items.map((c) => c.name)).toEqual(['kept']);
  });
});
