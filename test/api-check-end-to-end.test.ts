/**
 * An API check end to end, as a host runs it: the public HTTP API (Express router) on SQLite with
 * the HTTP runner registered; a client certificate, a group with apiCheckDefaults and a member API
 * check made through the API; a check session runs it against a local HTTPS server that demands
 * the certificate; its result and the analytics of its phases are read back through the API. A
 * second group runs a stored snippet and its own setup and teardown scripts around its checks.
 */
import { createHmac } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
import { httpRunner } from '@vigil/runner-http';
import { knexStorage } from '@vigil/storage-knex';
// The runner's own test kit makes the throwaway CA and the servers; a cross-package test may use it.
import { json, makePki, startHttps, type TestServer } from '../packages/runner-http/test/support.js';

let vigil: Vigil;
let server: TestServer;
let call: (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: object) => request.Test;

beforeAll(async () => {
  const pki = makePki();
  server = await startHttps(pki, json(200, { status: 'ok', orders: 3 }), { clientCa: pki.caCert });
  const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  vigil = createVigil({
    storage,
    secretKey: 'e2'.repeat(32),
    // api.mtls.test is this machine: no DNS server is asked.
    runners: [httpRunner({ lookup: async () => ({ address: '127.0.0.1', family: 4 }) })],
    engine: { pollMs: 20 },
  });
  const account = await vigil.accounts.ensure();
  const { key } = await vigil.apiKeys.create(account.id, { name: 'e2e' });
  const app = express().use('/api', vigilRouter(vigil, { rateLimit: false }));
  call = (method, path, body) => {
    const t = request(app)[method](`/api${path}`).set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
    return body ? t.send(body) : t;
  };
  await call('post', '/v1/client-certificates', { host: '*.mtls.test', cert: pki.clientCert, key: pki.clientKey, passphrase: pki.clientPassphrase, ca: pki.caCert }).expect(201);
  await vigil.start();
}, 30_000);

afterAll(async () => {
  await vigil?.close();
  await server?.close();
});

describe('an API check made through the HTTP API', () => {
  it('runs in its group with the stored client certificate, and its result and phase analytics read back', async () => {
    const { body: group } = await call('post', '/v2/check-groups', {
      name: 'shop',
      apiCheckDefaults: {
        url: `https://api.mtls.test:${server.port}/v1`,
        headers: [{ key: 'X-Env', value: 'e2e' }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
    }).expect(201);
    const { body: check } = await call('post', '/v1/checks/api', {
      name: 'orders',
      groupId: group.id,
      frequency: 1440,
      request: { url: '/orders?limit=1', assertions: [{ source: 'JSON_BODY', comparison: 'EQUALS', property: '$.status', target: 'ok' }] },
    }).expect(201);
    expect(check).toMatchObject({ checkType: 'API', request: { url: '/orders?limit=1' } });

    const { body: triggered } = await call('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } }).expect(201);
    const sessionId = triggered.sessions[0].checkSessionId as string;
    const { body: session } = await call('get', `/v1/check-sessions/${sessionId}/completion?maxWaitSeconds=20`).expect(200);
    expect(session.status, JSON.stringify(session)).toBe('PASSED');

    const seen = server.seen.at(-1)!;
    expect(seen).toMatchObject({ url: '/v1/orders?limit=1', clientCertificate: 'vigil-client', headers: { 'x-env': 'e2e' } });

    const { body: results } = await call('get', `/v1/check-results/${check.id}`).expect(200);
    expect(results).toHaveLength(1);
    const result = results[0];
    expect(result).toMatchObject({ checkType: 'API', hasFailures: false, statusCode: 200 });
    expect(Object.keys(result.phases).sort()).toEqual(['dns', 'download', 'firstByte', 'tcp', 'tls', 'total', 'wait']);
    expect(result.phases.total).toBe(result.responseTime);

    const metrics = ['responseTime', 'wait', 'dns', 'tcp', 'firstByte', 'download', 'availability', 'responseTime_max', 'firstByte_p95'];
    const { body: analytics } = await call('get', `/v1/analytics/api-checks/${check.id}?metrics=${metrics.join(',')}&groupBy=statusCode`).expect(200);
    expect(analytics.series).toHaveLength(1);
    const point = analytics.series[0];
    expect(point).toMatchObject({ availability: 100, responseTime: result.responseTime, responseTime_max: result.responseTime });
    expect(String(point.statusCode)).toBe('200');
    for (const phase of ['wait', 'dns', 'tcp', 'firstByte', 'download']) expect(point[phase], phase).toBeCloseTo(result.phases[phase], 5);
    expect(point.firstByte_p95).toBeCloseTo(result.phases.firstByte, 5);
  }, 30_000);
});

describe('a group with setup and teardown code, made through the HTTP API', () => {
  const signingKey = 'e2e-signing-key-value';

  /** Triggers a check and answers its finished session and its newest result. */
  async function runOnce(checkId: string) {
    const { body: triggered } = await call('post', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } }).expect(201);
    const { body: session } = await call('get', `/v1/check-sessions/${triggered.sessions[0].checkSessionId}/completion?maxWaitSeconds=20`).expect(200);
    const { body: results } = await call('get', `/v1/check-results/${checkId}`).expect(200);
    return { session, result: results[0] };
  }

  it('runs the stored snippet and the local scripts around each member check; a failing teardown fails the run', async () => {
    const { body: snippet } = await call('post', '/v1/snippets', {
      name: 'Sign the request',
      script: "request.headers['X-Signature'] = require('node:crypto').createHmac('sha256', process.env.SERVICE_SECRET_SIGNING_KEY).update(request.url).digest('hex');",
    }).expect(201);
    expect(snippet).toMatchObject({ id: expect.any(Number), name: 'Sign the request' });

    const base = { apiCheckDefaults: { url: `https://api.mtls.test:${server.port}/v1` } };
    const { body: unknownSnippet } = await call('post', '/v2/check-groups', { ...base, name: 'bad', setupSnippetId: snippet.id + 100 }).expect(400);
    expect(unknownSnippet.message).toContain('setupSnippetId');
    const { body: unparsable } = await call('post', '/v2/check-groups', { ...base, name: 'bad', localSetupScript: 'request.headers[' }).expect(400);
    expect(unparsable.message).toContain('localSetupScript');

    const { body: group } = await call('post', '/v2/check-groups', {
      ...base,
      name: 'scripted',
      environmentVariables: [{ key: 'SERVICE_SECRET_SIGNING_KEY', value: signingKey, locked: false, secret: true }],
      setupSnippetId: snippet.id,
      localSetupScript: "request.headers['X-Local'] = 'yes';\nconsole.log('signed with', process.env.SERVICE_SECRET_SIGNING_KEY);",
      localTearDownScript: "assert.equal(JSON.parse(response.body).orders, 3);\nconsole.log('orders', JSON.parse(response.body).orders);",
    }).expect(201);
    // A snippet a group runs stays until the group lets go of it.
    await call('delete', `/v1/snippets/${snippet.id}`).expect(409);

    const { body: check } = await call('post', '/v1/checks/api', { name: 'signed orders', groupId: group.id, frequency: 1440, request: { url: '/orders' } }).expect(201);
    const first = await runOnce(check.id);
    expect(first.session.status, JSON.stringify(first.result)).toBe('PASSED');
    const seen = server.seen.at(-1)!;
    expect(seen.url).toBe('/v1/orders');
    expect(seen.headers['x-local']).toBe('yes');
    expect(seen.headers['x-signature']).toBe(createHmac('sha256', signingKey).update(`https://api.mtls.test:${server.port}/v1/orders`).digest('hex'));
    const logs = (first.result.details.logs as { phase: string; text: string }[]).map((l) => `${l.phase}: ${l.text}`);
    expect(logs).toEqual(['setup: signed with ********', 'teardown: orders 3']);
    expect(JSON.stringify(first.result)).not.toContain(signingKey);

    await call('put', `/v2/check-groups/${group.id}`, {
      name: 'scripted',
      localTearDownScript: "assert.equal(JSON.parse(response.body).orders, 4, 'expected 4 orders');",
    }).expect(200);
    const second = await runOnce(check.id);
    expect(second.session.status).toBe('FAILED');
    expect(second.result).toMatchObject({
      hasFailures: true,
      statusCode: 200,
      errorMessage: "Teardown failed: AssertionError: expected 4 orders (the group's localTearDownScript, line 1)",
    });

    await call('put', `/v2/check-groups/${group.id}`, { name: 'scripted', setupSnippetId: null }).expect(200);
    await call('delete', `/v1/snippets/${snippet.id}`).expect(204);
  }, 60_000);
});
