import { randomUUID } from 'node:crypto';
import express from 'express';
import { Counter, Registry } from 'prom-client';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createVigil, type VigilOptions } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { metricsHandler, prometheusMetrics, vigilRouter, type VigilRouterOptions } from '../src/index.js';

const SECRET = 'b'.repeat(64);
const tcpBody = { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } };

/** A host: Vigil's API under /api, its metrics at /metrics. */
async function host(options: Partial<VigilOptions> = {}, routerOptions: VigilRouterOptions = {}) {
  const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, metrics: prometheusMetrics(), ...options });
  const account = await vigil.accounts.ensure();
  const { key } = await vigil.apiKeys.create(account.id, { name: 'metrics test' });
  const app = express();
  app.use('/api', vigilRouter(vigil, { rateLimit: false, ...routerOptions }));
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
  return { vigil, app, key, auth };
}

/** The value of one series in the exposition text (labels in the order Vigil gives them). */
function series(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metricsHandler and the API request metrics', () => {
  it('counts API requests by method, route template and status, never by the path asked for', async () => {
    const h = await host();
    h.app.get('/metrics', metricsHandler(h.vigil));
    const unknownId = randomUUID();
    await h.auth(request(h.app).get(`/api/v1/checks/${unknownId}`)).expect(404);
    await h.auth(request(h.app).get(`/api/v1/checks/${randomUUID()}`)).expect(404);
    await h.auth(request(h.app).get('/api/v1/checks')).expect(200);
    await request(h.app).get('/api/v1/checks').expect(401);
    const created = await h.auth(request(h.app).post('/api/v1/checks/tcp').send(tcpBody)).expect(201);
    await h.auth(request(h.app).get(`/api/v1/checks/${created.body.id}`)).expect(200);
    await h.auth(request(h.app).get('/api/v1/no-such-thing/42')).expect(404);

    const scrape = await request(h.app).get('/metrics').expect(200);
    expect(scrape.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(scrape.headers['cache-control']).toBe('no-store');
    const text = scrape.text;
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="/v1/checks/:id",status="404"')).toBe(2);
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="/v1/checks/:id",status="200"')).toBe(1);
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="/v1/checks",status="200"')).toBe(1);
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="/v1/checks",status="401"')).toBe(1);
    expect(series(text, 'vigil_api_requests_total', 'method="POST",route="/v1/checks/tcp",status="201"')).toBe(1);
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="unmatched",status="404"')).toBe(1);
    expect(series(text, 'vigil_api_request_duration_seconds_count', 'method="GET",route="/v1/checks/:id"')).toBe(3);
    // Ids and unknown paths stay out of the labels, so the series stay few.
    expect(text).not.toContain(unknownId);
    expect(text).not.toContain(created.body.id);
    expect(text).not.toContain('no-such-thing');
    // The scrape itself is the host's route, not Vigil's API.
    expect(text).not.toContain('route="/metrics"');
    // Vigil's own registry carries the engine's series and Node's process metrics.
    expect(text).toMatch(/^vigil_outbox_depth 0$/m);
    expect(text).toMatch(/^vigil_engine_active_runs 0$/m);
    expect(text).toContain('# TYPE vigil_runs_total counter');
    expect(text).toContain('# TYPE vigil_scheduler_lag_seconds histogram');
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('labels heartbeat pings by their route template and counts unknown tokens, without the token', async () => {
    const h = await host();
    h.app.get('/metrics', metricsHandler(h.vigil));
    await request(h.app).get('/api/ping/not-a-real-token-123').expect(404);
    const text = (await request(h.app).get('/metrics').expect(200)).text;
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="/ping/:token",status="404"')).toBe(1);
    expect(series(text, 'vigil_heartbeat_pings_total', 'result="unknown"')).toBe(1);
    expect(text).not.toContain('not-a-real-token-123');
  });

  it('counts into the host\'s own registry beside the host\'s metrics', async () => {
    const registry = new Registry();
    const orders = new Counter({ name: 'host_orders_total', help: 'Orders taken', registers: [registry] });
    const h = await host({ metrics: prometheusMetrics({ registry }) });
    h.app.post('/orders', (_req, res) => {
      orders.inc();
      res.status(201).end();
    });
    h.app.get('/metrics', metricsHandler(registry));
    await request(h.app).post('/orders').expect(201);
    await h.auth(request(h.app).get('/api/v1/checks')).expect(200);
    const text = (await request(h.app).get('/metrics').expect(200)).text;
    expect(text).toMatch(/^host_orders_total 1$/m);
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="/v1/checks",status="200"')).toBe(1);
    // The host's registry is left without Node's process metrics unless the host asks for them.
    expect(text).not.toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('does not count the host\'s own requests that pass through a router mounted with fallthrough', async () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, metrics: prometheusMetrics({ processMetrics: false }) });
    const app = express();
    app.use(vigilRouter(vigil, { rateLimit: false, fallthrough: true }));
    app.get('/orders/:id', (_req, res) => {
      res.json({ ok: true });
    });
    app.get('/metrics', metricsHandler(vigil));
    await request(app).get('/orders/7').expect(200);
    await request(app).get('/v1/unknown').expect(404);
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(text).not.toContain('/orders');
    expect(series(text, 'vigil_api_requests_total', 'method="GET",route="unmatched",status="404"')).toBe(1);
  });

  it('counts nothing with metrics: false, and metricsHandler refuses a Vigil made without Prometheus metrics', async () => {
    const h = await host({}, { metrics: false });
    h.app.get('/metrics', metricsHandler(h.vigil));
    await h.auth(request(h.app).get('/api/v1/checks')).expect(200);
    const text = (await request(h.app).get('/metrics').expect(200)).text;
    expect(text).not.toMatch(/^vigil_api_requests_total\{/m);

    const plain = createVigil({ storage: memoryStorage(), secretKey: SECRET });
    expect(() => metricsHandler(plain)).toThrow(/prometheusMetrics\(\)/);
  });
});
