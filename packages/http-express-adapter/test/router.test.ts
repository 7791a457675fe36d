import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { agentHealthServer, vigilAdminRouter, vigilRouter } from '../src/index.js';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';

const tcpBody = { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } };
const SECRET = 'a'.repeat(64);

afterAll(dropPostgresSchema);

function expectErrorShape(body: unknown, status: number): void {
  expect(body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String) });
}

describe.each(BACKENDS)('router on %s', (backend) => {
  let h: ApiHarness;
  beforeEach(async () => {
    h = await apiHarness(backend);
  });
  afterEach(() => h.close());

  it('creates a TCP check and reads it back', async () => {
    const created = await h.a.post('/api/v1/checks/tcp', tcpBody).expect(201);
    expect(created.body).toMatchObject({ name: 'orders-db', checkType: 'TCP', request: { hostname: '127.0.0.1', port: 5432 } });
    const read = await h.a.get(`/api/v1/checks/${created.body.id}`).expect(200);
    expect(read.body.id).toBe(created.body.id);
  });

  it('answers 401 without a key, with a malformed header, an unknown key and a revoked key', async () => {
    const none = await h.a.anonymous('get', '/api/v1/checks').expect(401);
    expect(none.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    await request(h.app).get('/api/v1/checks').set('Authorization', h.a.key).set('x-service-account', h.a.accountId).expect(401);
    await request(h.app).get('/api/v1/checks').set('Authorization', `Bearer ${h.a.key}x`).set('x-service-account', h.a.accountId).expect(401);
    const [key] = await h.vigil.apiKeys.list(h.a.accountId);
    await h.vigil.apiKeys.revoke(h.a.accountId, key!.id);
    const revoked = await h.a.get('/api/v1/checks').expect(401);
    expect(revoked.body.message).toBe('Invalid API key');
  });

  it('trusts a verified key for 5 s: a revoke by another process takes effect after it, lastUsedAt is written once a minute', async () => {
    await h.a.get('/api/v1/checks').expect(200);
    const [key] = await h.vigil.storage.apiKeys.list(h.a.accountId);
    expect(key!.lastUsedAt).toBe(h.clock.now().toISOString());
    const firstUse = key!.lastUsedAt;
    // Another process revokes the key straight in the database.
    await h.vigil.storage.apiKeys.revoke(h.a.accountId, key!.id, h.clock.now().toISOString());
    h.clock.advance(4_000);
    await h.a.get('/api/v1/checks').expect(200);
    h.clock.advance(1_000);
    await h.a.get('/api/v1/checks').expect(401);
    // b's key: used twice within a minute, written once; again after the minute.
    await h.b.get('/api/v1/checks').expect(200);
    const stamp = async () => (await h.vigil.storage.apiKeys.list(h.b.accountId))[0]!.lastUsedAt;
    const first = await stamp();
    h.clock.advance(30_000);
    await h.b.get('/api/v1/checks').expect(200);
    expect(await stamp()).toBe(first);
    h.clock.advance(31_000);
    await h.b.get('/api/v1/checks').expect(200);
    expect(await stamp()).toBe(h.clock.now().toISOString());
    expect(firstUse).not.toBeNull();
  });

  it('answers 401 without x-service-account and 403 with another account in it', async () => {
    await request(h.app).get('/api/v1/checks').set('Authorization', `Bearer ${h.a.key}`).expect(401);
    const res = await h.a.asAccount(h.b.accountId, 'get', '/api/v1/checks').expect(403);
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String) });
  });

  it("answers 404 for another account's check and leaves it as it was", async () => {
    const { body: check } = await h.a.post('/api/v1/checks/tcp', tcpBody).expect(201);
    const read = await h.b.get(`/api/v1/checks/${check.id}`).expect(404);
    expect(read.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Check not found' });
    await h.b.put(`/api/v1/checks/tcp/${check.id}`, { name: 'taken over' }).expect(404);
    await h.b.delete(`/api/v1/checks/${check.id}`).expect(404);
    const still = await h.a.get(`/api/v1/checks/${check.id}`).expect(200);
    expect(still.body.name).toBe('orders-db');
  });

  it('names every offending field of a bad body and stores nothing', async () => {
    const res = await h.a.post('/api/v1/checks/tcp', { name: '', request: { hostname: '', port: 70000 }, frequency: 7 }).expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', validation: { source: 'payload' } });
    expect(res.body.validation.keys).toEqual(expect.arrayContaining(['name', 'request.hostname', 'request.port', 'frequency']));
    expect((await h.a.get('/api/v1/checks').expect(200)).body).toEqual([]);
  });

  it('names a bad query parameter and a bad path id', async () => {
    const q = await h.a.get('/api/v1/checks?limit=101').expect(400);
    expect(q.body.validation).toEqual({ source: 'query', keys: ['limit'] });
    const p = await h.a.get('/api/v2/check-groups/abc').expect(400);
    expect(p.body.validation).toEqual({ source: 'params', keys: ['id'] });
  });

  it('answers 400 for malformed JSON, for a body that is not JSON, and 413 over the limit', async () => {
    const bad = await h.a.post('/api/v1/checks/tcp').set('Content-Type', 'application/json').send('{"name": ').expect(400);
    expect(bad.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Malformed JSON in request body' });
    const text = await h.a.post('/api/v1/checks/tcp').set('Content-Type', 'text/plain').send('name=x').expect(400);
    expectErrorShape(text.body, 400);
    const big = await h.a.post('/api/v1/checks/browser', { name: 'big', script: 'x'.repeat(1_100_000) }).expect(413);
    expect(big.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'Request body is too large' });
    expect((await h.a.get('/api/v1/checks').expect(200)).body).toEqual([]);
  });

  it('answers an unknown route under the router with the API 404 and leaves the host routes alone', async () => {
    const res = await h.a.get('/api/v1/nothing-here').expect(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'No route GET /api/v1/nothing-here' });
    await h.a.patch('/api/v1/checks').expect(404);
    const other = await h.a.get('/api/elsewhere').expect(404);
    expectErrorShape(other.body, 404);
    expect((await request(h.app).get('/host-route').expect(200)).body).toEqual({ host: true });
  });

  it('pages lists with Content-Range', async () => {
    for (let i = 0; i < 3; i++) await h.a.post('/api/v1/checks/tcp', { ...tcpBody, name: `c${i}` }).expect(201);
    const page = await h.a.get('/api/v1/checks?limit=2&page=2').expect(200);
    expect(page.body).toHaveLength(1);
    expect(page.headers['content-range']).toBe('2-2/3');
    const empty = await h.a.get('/api/v1/checks?limit=2&page=5').expect(200);
    expect(empty.body).toEqual([]);
    expect(empty.headers['content-range']).toBe('*/3');
  });
});

describe('host integration', () => {
  async function vigilWithKey() {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET });
    const account = await vigil.accounts.ensure();
    const { key } = await vigil.apiKeys.create(account.id, 'k');
    return { vigil, account, key };
  }

  it("keeps the host's own body parser, error handler and routes", async () => {
    const { vigil, account, key } = await vigilWithKey();
    const app = express();
    app.use(express.json({ limit: '10kb' }));
    app.post('/echo', (req, res) => {
      res.json({ echoed: req.body });
    });
    app.use('/monitoring', vigilRouter(vigil));
    app.get('/boom', () => {
      throw new Error('host failure');
    });
    app.use((_err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).type('text').send('host error page');
    });
    expect((await request(app).post('/echo').send({ a: 1 }).expect(200)).body).toEqual({ echoed: { a: 1 } });
    await request(app).post('/monitoring/v1/checks/tcp').set('Authorization', `Bearer ${key}`).set('x-service-account', account.id)
      .send(tcpBody).expect(201);
    expect((await request(app).get('/boom').expect(500)).text).toBe('host error page');
  });

  it('takes a container as well as a Vigil instance', async () => {
    const { vigil, account, key } = await vigilWithKey();
    const app = express().use('/api', vigilRouter(vigil.container));
    await request(app).get('/api/v1/checks').set('Authorization', `Bearer ${key}`).set('x-service-account', account.id).expect(200);
  });

  it('with fallthrough passes paths outside /v1 and /v2 on to the host', async () => {
    const { vigil } = await vigilWithKey();
    const app = express().use(vigilRouter(vigil, { fallthrough: true }));
    app.get('/about', (_req, res) => {
      res.send('host page');
    });
    expect((await request(app).get('/about').expect(200)).text).toBe('host page');
    expectErrorShape((await request(app).get('/v1/unknown').expect(404)).body, 404);
  });

  it('limits requests per key with the RateLimit headers and Retry-After', async () => {
    const { vigil, account, key } = await vigilWithKey();
    const { key: other } = await vigil.apiKeys.create(account.id, { name: 'second' });
    const app = express().use('/api', vigilRouter(vigil, { rateLimit: { limit: 3, windowMs: 60_000 } }));
    const call = (k: string) => request(app).get('/api/v1/checks').set('Authorization', `Bearer ${k}`).set('x-service-account', account.id);
    for (let i = 0; i < 3; i++) {
      const ok = await call(key).expect(200);
      expect(ok.headers['ratelimit-limit']).toBe('3');
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const limited = await call(key).expect(429);
    expect(limited.body).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringContaining('3 requests per 60 s') });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    // Another key of the same account has its own budget.
    await call(other).expect(200);
  });

  it('answers an internal failure with 500 and a body that leaks nothing', async () => {
    const storage = memoryStorage();
    const vigil = createVigil({ storage, secretKey: SECRET });
    const account = await vigil.accounts.ensure();
    const { key } = await vigil.apiKeys.create(account.id, 'k');
    storage.checks.list = async () => {
      throw new Error('select * from checks where password = hunter2');
    };
    const errors: unknown[] = [];
    const app = express().use('/api', vigilRouter(vigil, {
      logger: { error: (msg, meta) => errors.push([msg, meta]), warn() {}, info() {}, debug() {}, child() { return this; } },
    }));
    const res = await request(app).get('/api/v1/checks').set('Authorization', `Bearer ${key}`).set('x-service-account', account.id).expect(500);
    expect(res.body).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'Internal error' });
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(errors).toHaveLength(1);
  });

  it('records heartbeat pings without credentials and 404s an unknown token', async () => {
    const { vigil, account } = await vigilWithKey();
    const check = await vigil.checks.create(account.id, 'HEARTBEAT', {
      name: 'nightly backup', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' },
    });
    const token = (await vigil.storage.checks.get(account.id, check.id) as { heartbeat: { pingToken: string } }).heartbeat.pingToken;
    const app = express().use('/api', vigilRouter(vigil));
    const res = await request(app).post(`/api/ping/${token}`).expect(200);
    expect(res.body).toEqual({ ok: true, at: expect.any(String) });
    await request(app).get(`/api/ping/${token}`).expect(200);
    const pings = await vigil.storage.heartbeats.listPings(account.id, check.id, new Date(0), new Date(Date.now() + 60_000));
    expect(pings).toHaveLength(2);
    expectErrorShape((await request(app).get('/api/ping/not-a-token').expect(404)).body, 404);
  });
});

describe('admin router', () => {
  it('issues, lists and revokes keys only for requests the host authorizes', async () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET });
    const app = express();
    app.use('/admin', vigilAdminRouter(vigil, { authorize: (req) => req.get('x-admin') === 'yes' }));
    app.use('/api', vigilRouter(vigil));
    await request(app).post('/admin/accounts').send({ id: 'acme' }).expect(403);
    const account = await request(app).post('/admin/accounts').set('x-admin', 'yes').send({ id: 'acme', name: 'Acme' }).expect(201);
    expect(account.body).toMatchObject({ id: 'acme', name: 'Acme' });
    const issued = await request(app).post('/admin/accounts/acme/api-keys').set('x-admin', 'yes').send({ name: 'ci' }).expect(201);
    expect(issued.body.key).toMatch(/^vgl_/);
    const list = await request(app).get('/admin/accounts/acme/api-keys').set('x-admin', 'yes').expect(200);
    expect(list.body).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(issued.body.key);
    expect(list.body[0]).not.toHaveProperty('hash');
    const use = () => request(app).get('/api/v1/checks').set('Authorization', `Bearer ${issued.body.key}`).set('x-service-account', 'acme');
    await use().expect(200);
    await request(app).delete(`/admin/accounts/acme/api-keys/${issued.body.id}`).set('x-admin', 'yes').expect(204);
    await use().expect(401);
    const missing = await request(app).post('/admin/accounts/nobody/api-keys').set('x-admin', 'yes').send({ name: 'x' }).expect(404);
    expectErrorShape(missing.body, 404);
    const bad = await request(app).post('/admin/accounts/acme/api-keys').set('x-admin', 'yes').send({}).expect(400);
    expect(bad.body.validation.keys).toEqual(['name']);
  });

  it('refuses to be built without an authorize function', () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET });
    expect(() => vigilAdminRouter(vigil, {} as never)).toThrow(/authorize/);
  });
});

describe('agent health server', () => {
  it('serves liveness, health and readiness, which turns 503 on shutdown', async () => {
    let dbUp = true;
    const probes = await agentHealthServer({ port: 0, host: '127.0.0.1', ready: () => dbUp });
    const base = `http://127.0.0.1:${probes.port}`;
    try {
      expect((await fetch(`${base}/-/liveness`)).status).toBe(200);
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect((await fetch(`${base}/-/readiness`)).status).toBe(200);
      dbUp = false;
      expect((await fetch(`${base}/-/readiness`)).status).toBe(503);
      dbUp = true;
      probes.shutdown();
      expect(probes.shuttingDown).toBe(true);
      expect((await fetch(`${base}/-/readiness`)).status).toBe(503);
      expect((await fetch(`${base}/-/liveness`)).status).toBe(200);
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await probes.close();
    }
  });

  it('listens on AGENT_HEALTH_PORT when no port is given', async () => {
    const taken = express().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const free = (taken.address() as AddressInfo).port;
    taken.close();
    await once(taken, 'close');
    process.env.AGENT_HEALTH_PORT = String(free);
    try {
      const probes = await agentHealthServer({ host: '127.0.0.1' });
      expect(probes.port).toBe(free);
      expect((await fetch(`http://127.0.0.1:${free}/health`)).status).toBe(200);
      await probes.close();
    } finally {
      delete process.env.AGENT_HEALTH_PORT;
    }
  });
});
