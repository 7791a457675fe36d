/**
 * A host registers the DNS check type and its runner; DNS checks are then created through the
 * public API like the built-in types, and the engine runs them against a name server on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
import { knexStorage } from '@vigil/storage-knex';
import { registerDnsChecks } from '../src/index.js';
import { startDnsServer, type DnsServer } from './support/dns-server.js';

let vigil: Vigil | undefined;
let dns: DnsServer | undefined;
afterEach(async () => {
  await vigil?.close();
  await dns?.close();
  vigil = dns = undefined;
});

/** The host as an app would build it: its store, the DNS plugin, and the API under /api. */
async function startHost() {
  dns = await startDnsServer({ 'shop.example.test': { A: ['10.0.0.1'] } });
  const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  const host = createVigil({ storage, secretKey: randomBytes(32).toString('hex') }, (container) => {
    registerDnsChecks(container, { servers: [dns!.address] });
  });
  vigil = host;
  await host.start();
  const account = await host.accounts.ensure();
  const { key } = await host.apiKeys.create(account.id, { name: 'test' });
  const app = express().use('/api', vigilRouter(host));
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
  return {
    get: (path: string) => auth(request(app).get(`/api${path}`)),
    post: (path: string, body: object) => auth(request(app).post(`/api${path}`)).send(body),
    put: (path: string, body: object) => auth(request(app).put(`/api${path}`)).send(body),
  };
}

type Api = Awaited<ReturnType<typeof startHost>>;

/** Runs the check now (a check session, through the engine) and answers the finished session. */
async function runNow(api: Api, checkId: string) {
  const trigger = await api.post('/v1/check-sessions/trigger', { target: { checkId: [checkId] } }).expect(201);
  const done = await api.get(`/v1/check-sessions/${trigger.body.sessions[0].checkSessionId}/completion?maxWaitSeconds=10`).expect(200);
  return done.body;
}

describe('a host with the DNS plugin', () => {
  it('creates DNS checks through the API, validates them, and runs them in the engine', async () => {
    const api = await startHost();
    const created = await api.post('/v1/checks/dns', {
      name: 'shop DNS', frequency: 5, tags: ['dns'],
      request: { hostname: 'shop.example.test', expectedValues: ['10.0.0.1'] },
    }).expect(201);
    expect(created.body).toMatchObject({
      checkType: 'DNS', name: 'shop DNS', frequency: 5, activated: true,
      request: { hostname: 'shop.example.test', recordType: 'A', expectedValues: ['10.0.0.1'] },
      degradedResponseTime: 1000, maxResponseTime: 3000, alertChannels: { email: [], webhook: [], chat: [], sms: [] },
    });
    const id = created.body.id as string;

    // The schema and the runner's own rule both answer 400 with the fields named.
    const bad = await api.post('/v1/checks/dns', { name: 'x', request: { hostname: 'https://shop', recordType: 'SOA' } }).expect(400);
    expect(bad.body.validation.keys.sort()).toEqual(['request.hostname', 'request.recordType']);
    const wrongValue = await api.post('/v1/checks/dns', { name: 'x', request: { hostname: 'shop.example.test', expectedValues: ['mail.example.test'] } }).expect(400);
    expect(wrongValue.body.validation.keys).toEqual(['request.expectedValues.0']);

    const passed = await runNow(api, id);
    expect(passed).toMatchObject({ checkType: 'DNS', status: 'PASSED' });
    const [result] = (await api.get(`/v1/check-results/${id}`).expect(200)).body;
    expect(result).toMatchObject({ checkType: 'DNS', hasFailures: false, details: { answers: ['10.0.0.1'] } });
    expect(result.phases.dns).toBeGreaterThanOrEqual(0);

    // The record moves: the check fails, and its status says so.
    await api.put(`/v1/checks/dns/${id}`, { request: { hostname: 'shop.example.test', expectedValues: ['10.0.0.9'] } }).expect(200);
    const failed = await runNow(api, id);
    expect(failed.status).toBe('FAILED');
    const status = (await api.get(`/v1/check-statuses/${id}`).expect(200)).body;
    expect(status).toMatchObject({ hasFailures: true });
    const latest = (await api.get(`/v1/check-results/${id}`).expect(200)).body[0];
    expect(latest.errorMessage).toBe('A records of shop.example.test are 10.0.0.1; expected 10.0.0.9 among them');

    // Every query went to the name server on 127.0.0.1: one for the pass, two for the failure
    // (doubleCheck, on by default, retries a failed run once).
    expect(dns!.questions).toEqual(['shop.example.test A', 'shop.example.test A', 'shop.example.test A']);
    expect(failed.results.map((r: { resultType: string }) => r.resultType).sort()).toEqual(['ATTEMPT', 'FINAL']);
  });

  it('documents the DNS routes in its OpenAPI document', async () => {
    const api = await startHost();
    const doc = (await api.get('/openapi.json').expect(200)).body;
    expect(doc.paths['/v1/checks/dns'].post.operationId).toBe('createDnsCheck');
    expect(Object.keys(doc.components.schemas.DnsCheckCreate.properties)).toEqual(expect.arrayContaining(['name', 'request', 'maxResponseTime']));
  });
});
