// GET /v1/check-statuses is written once from the stored status documents: its body is exactly the
// JSON of vigil.checkStatuses.list (fields, order, names), whatever the names hold, and a host's
// own JSON settings still apply.
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { checkStatusFixture, memoryStorage } from '@vigil/core/testing';
import { vigilRouter } from '../src/index.js';
import { apiHarness, dropPostgresSchema } from './support/harness.js';
import { T0, created, tcpBody, describeOnBackends } from './support/routes.js';

afterAll(() => dropPostgresSchema());

describeOnBackends('GET /v1/check-statuses written once', {}, (h) => {
  it('answers the text JSON.stringify gives of the listed statuses: in creation order, stored, renamed and no-runs-yet ones, only the account\'s own', async () => {
    const names = ['plain', 'quote " and \\ backslash', 'unicode ✓ \u2028 ünïcödé', 'renamed', 'no runs yet'];
    const checks = [];
    for (const name of names) checks.push(await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody({ name }))));
    const theirs = await created(h.b.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody({ name: 'plain' })));
    for (const check of checks.slice(0, 4)) {
      const stored = check.name === 'renamed' ? 'the old name' : check.name;
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, checkStatusFixture(check.id, { name: stored, hasFailures: true, updated_at: T0 }));
    }
    await h.vigil.storage.checkStatuses.upsert(h.b.accountId, checkStatusFixture(theirs.id, { name: 'plain', updated_at: T0 }));

    const res = await h.a.get('/api/v1/check-statuses').expect(200).expect('Content-Type', 'application/json; charset=utf-8');
    const listed = await h.vigil.checkStatuses.list(h.a.accountId);
    expect(res.text).toBe(JSON.stringify(listed));
    expect(res.body.map((s: { name: string }) => s.name)).toEqual(names);
    expect(res.body.map((s: { checkId: string }) => s.checkId)).toEqual(checks.map((c) => c.id));
    expect(Object.keys(res.body[0])).toEqual([
      'name', 'checkId', 'hasFailures', 'hasErrors', 'isDegraded', 'longestRun', 'shortestRun', 'lastRunLocation',
      'lastCheckRunId', 'sslDaysRemaining', 'created_at', 'updated_at',
    ]);
    expect(res.body[3]).toMatchObject({ name: 'renamed', hasFailures: true });
    expect(res.body[4]).toMatchObject({ name: 'no runs yet', lastCheckRunId: null, updated_at: null });
    expect(res.text).not.toContain('accountId');
    expect(await h.vigil.checkStatuses.listJson(h.a.accountId)).toBe(res.text);

    const other = await h.b.get('/api/v1/check-statuses').expect(200);
    expect(other.body.map((s: { checkId: string }) => s.checkId)).toEqual([theirs.id]);
  });

  it('answers an empty array for an account without checks, and the same ETag as the body sent through res.json', async () => {
    const res = await h.a.get('/api/v1/check-statuses').expect(200);
    expect(res.text).toBe('[]');
    await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody()));
    const first = await h.a.get('/api/v1/check-statuses').expect(200);
    const again = await h.a.get('/api/v1/check-statuses').set('If-None-Match', String(first.headers.etag)).expect(304);
    expect(again.text).toBe('');
    h.app.get('/same-body', async (_req, out) => {
      out.json(await h.vigil.checkStatuses.list(h.a.accountId));
    });
    const reference = await h.a.get('/same-body').expect(200);
    expect(first.headers.etag).toBe(reference.headers.etag);
  });
  it('answers, with the Content-Type and ETag res.json gives, a list where every status was stored under its check\'s current name', async () => {
    for (const name of ['orders-db', 'quote " ✓ \u2028 in'] as const) {
      const check = await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody({ name })));
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, checkStatusFixture(check.id, { name: check.name, updated_at: T0 }));
    }
    const res = await h.a.get('/api/v1/check-statuses').expect(200).expect('Content-Type', 'application/json; charset=utf-8');
    expect(res.text).toBe(JSON.stringify(await h.vigil.checkStatuses.list(h.a.accountId)));
    h.app.get('/same-list', async (_req, out) => {
      out.json(await h.vigil.checkStatuses.list(h.a.accountId));
    });
    const reference = await h.a.get('/same-list').expect(200);
    expect(res.headers.etag).toBe(reference.headers.etag);
    await h.a.get('/api/v1/check-statuses').set('If-None-Match', String(res.headers.etag)).expect(304);
  });
});

describe('GET /v1/check-statuses under a host that sets how res.json writes', () => {
  it('writes the statuses the host\'s way (json spaces)', async () => {
    const h = await apiHarness('sqlite');
    try {
      h.app.set('json spaces', 2);
      const check = await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody()));
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, checkStatusFixture(check.id, { name: 'orders-db' }));
      const res = await h.a.get('/api/v1/check-statuses').expect(200);
      expect(res.text).toBe(JSON.stringify(await h.vigil.checkStatuses.list(h.a.accountId), null, 2));
    } finally {
      await h.close();
    }
  });
});

describe('GET /v1/check-statuses on a store that does not hand over its documents', () => {
  it('answers the listed statuses, written by the service', async () => {
    const vigil = createVigil({ storage: memoryStorage(), secretKey: randomBytes(32) });
    try {
      const account = await vigil.accounts.ensure(undefined, 'memory');
      const { key } = await vigil.apiKeys.create(account.id, { name: 'test' });
      const stored = await vigil.checks.create(account.id, 'TCP', { name: 'stored', request: { hostname: 'db.internal', port: 5432 } }, { autoAssignAlerts: false });
      await vigil.checks.create(account.id, 'TCP', { name: 'fresh', request: { hostname: 'db.internal', port: 5432 } }, { autoAssignAlerts: false });
      await vigil.storage.checkStatuses.upsert(account.id, checkStatusFixture(stored.id, { name: 'stored', hasErrors: true }));
      const app = express().use('/api', vigilRouter(vigil));
      const res = await request(app).get('/api/v1/check-statuses').set('Authorization', `Bearer ${key}`).set('x-service-account', account.id).expect(200);
      expect(res.text).toBe(JSON.stringify(await vigil.checkStatuses.list(account.id)));
      expect(res.body.map((s: { name: string; hasErrors: boolean }) => [s.name, s.hasErrors])).toEqual([['stored', true], ['fresh', false]]);
    } finally {
      await vigil.close();
    }
  });
});
