/**
 * A host registers the SMTP check type and its runner; SMTP checks are then created through the
 * public API like the built-in types, and the engine runs them against an SMTP server on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
import { knexStorage } from '@vigil/storage-knex';
import { registerSmtpChecks } from '../src/index.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';

let vigil: Vigil | undefined;
let smtp: TestSmtpServer | undefined;
afterEach(async () => {
  await vigil?.close();
  await smtp?.close();
  vigil = smtp = undefined;
});

/** The host as an app would build it: its store, the SMTP plugin, and the API under /api. */
async function startHost() {
  smtp = await startSmtpServer({ banner: 'Vigil test' });
  const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  const host = createVigil({ storage, secretKey: randomBytes(32).toString('hex') }, (container) => {
    registerSmtpChecks(container);
  });
  vigil = host;
  await host.start();
  const account = await host.accounts.ensure();
  const { key } = await host.apiKeys.create(account.id, { name: 'test' });
  const app = express().use('/api', vigilRouter(host));
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
  return {
    port: smtp.port,
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

describe('a host with the SMTP plugin', () => {
  it('creates SMTP checks through the API, validates them, and runs them in the engine', async () => {
    const api = await startHost();
    const created = await api.post('/v1/checks/smtp', {
      name: 'mail', frequency: 5, tags: ['mail'],
      request: { hostname: '127.0.0.1', port: api.port, expectedBanner: 'ESMTP Vigil test' },
    }).expect(201);
    expect(created.body).toMatchObject({
      checkType: 'SMTP', name: 'mail', frequency: 5, activated: true,
      request: { hostname: '127.0.0.1', port: api.port, tls: 'NONE', expectedBanner: 'ESMTP Vigil test' },
      degradedResponseTime: 2000, maxResponseTime: 5000, alertChannels: { email: [], webhook: [], chat: [], sms: [] },
    });
    const id = created.body.id as string;

    // The schema and the runner's own rule both answer 400 with the fields named.
    const bad = await api.post('/v1/checks/smtp', { name: 'x', request: { hostname: 'smtp://mail', tls: 'SSL' } }).expect(400);
    expect(bad.body.validation.keys.sort()).toEqual(['request.hostname', 'request.tls']);
    const smtps = await api.post('/v1/checks/smtp', { name: 'x', request: { hostname: 'mx.example.test', port: 465 } }).expect(400);
    expect(smtps.body.validation.keys).toEqual(['request.port']);

    const passed = await runNow(api, id);
    expect(passed).toMatchObject({ checkType: 'SMTP', status: 'PASSED' });
    const [result] = (await api.get(`/v1/check-results/${id}`).expect(200)).body;
    expect(result).toMatchObject({
      checkType: 'SMTP', hasFailures: false,
      details: { address: '127.0.0.1', greeting: '220 mx.example.test ESMTP Vigil test', extensions: expect.arrayContaining(['PIPELINING']) },
    });
    expect(Object.keys(result.phases).sort()).toEqual(['banner', 'connection', 'ehlo', 'total']);

    // The server's banner changes: the check fails, and its status says so.
    await api.put(`/v1/checks/smtp/${id}`, { request: { hostname: '127.0.0.1', port: api.port, expectedBanner: 'Postfix' } }).expect(200);
    const failed = await runNow(api, id);
    expect(failed.status).toBe('FAILED');
    const status = (await api.get(`/v1/check-statuses/${id}`).expect(200)).body;
    expect(status).toMatchObject({ hasFailures: true });
    const latest = (await api.get(`/v1/check-results/${id}`).expect(200)).body[0];
    expect(latest.errorMessage).toBe(`The greeting of 127.0.0.1:${api.port}, "220 mx.example.test ESMTP Vigil test", does not contain "Postfix"`);

    // Every run spoke to the server on 127.0.0.1: one for the pass, two for the failure
    // (doubleCheck, on by default, retries a failed run once).
    await vi.waitFor(() => expect(smtp!.sessions).toHaveLength(3));
    expect(smtp!.sessions.every((s) => s.ehloName === 'vigil.local')).toBe(true);
    expect(failed.results.map((r: { resultType: string }) => r.resultType).sort()).toEqual(['ATTEMPT', 'FINAL']);
  });

  it('documents the SMTP routes in its OpenAPI document', async () => {
    const api = await startHost();
    const doc = (await api.get('/openapi.json').expect(200)).body;
    expect(doc.paths['/v1/checks/smtp'].post.operationId).toBe('createSmtpCheck');
    expect(Object.keys(doc.components.schemas.SmtpCheckCreate.properties)).toEqual(expect.arrayContaining(['name', 'request', 'maxResponseTime']));
  });
});
