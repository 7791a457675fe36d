/**
 * The check-result and check-status routes of the HTTP API through the real Express router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import { describe, expect, it } from 'vitest';
import { checkResultFixture, checkStatusFixture } from '@vigil/core/testing';
import { expect400, expect404 } from './support/expect.js';
import { T0, T0_MS, MISSING_UUID, created, tcpBody, describeOnBackends } from './support/routes.js';
import { heartbeatBody } from './support/checks.js';

describeOnBackends('check routes on %s', {}, (h) => {

  describe('check results and statuses', () => {
    async function seedResults() {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const at = (min: number) => new Date(T0_MS + min * 60_000).toISOString();
      const results = [
        checkResultFixture(check.id, { startedAt: at(0), name: 'orders-db' }),
        checkResultFixture(check.id, { startedAt: at(10), name: 'orders-db', hasFailures: true, errorMessage: 'Connection refused', resultType: 'ATTEMPT' }),
        checkResultFixture(check.id, { startedAt: at(20), name: 'orders-db' }),
      ];
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, results);
      return { check, results, at };
    }

    it('GET /v1/check-results/{checkId} lists a check\'s results newest first, paged with Content-Range', async () => {
      const { check, results, at } = await seedResults();
      const other = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'other' })));
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [checkResultFixture(other.id)]);
      const all = await h.a.get(`/api/v1/check-results/${check.id}`).expect(200);
      expect(all.headers['content-range']).toBe('0-2/3');
      expect(all.body.map((r: { id: string }) => r.id)).toEqual([results[2]!.id, results[1]!.id, results[0]!.id]);
      const { accountId: _ignored, ...expected } = { ...results[1]!, accountId: '' };
      expect(all.body[1]).toEqual(expected);
      expect(all.body[1]).not.toHaveProperty('accountId');
      const page2 = await h.a.get(`/api/v1/check-results/${check.id}?limit=2&page=2`).expect(200);
      expect(page2.headers['content-range']).toBe('2-2/3');
      expect(page2.body.map((r: { id: string }) => r.id)).toEqual([results[0]!.id]);
      const attempts = await h.a.get(`/api/v1/check-results/${check.id}?resultType=ATTEMPT`).expect(200);
      expect(attempts.body.map((r: { id: string }) => r.id)).toEqual([results[1]!.id]);
      expect(attempts.headers['content-range']).toBe('0-0/1');
      const windowed = await h.a.get(`/api/v1/check-results/${check.id}?from=${at(5)}&to=${at(25)}`).expect(200);
      expect(windowed.body.map((r: { id: string }) => r.id)).toEqual([results[2]!.id, results[1]!.id]);
      const none = await h.a.get(`/api/v1/check-results/${check.id}?from=2026-06-01`).expect(200);
      expect(none.body).toEqual([]);
      expect(none.headers['content-range']).toBe('*/0');
    });

    it('GET /v1/check-results/{checkId} answers 400 for a bad query and 404 for an unknown or another account\'s check', async () => {
      const { check } = await seedResults();
      const path = `/api/v1/check-results/${check.id}`;
      expect400(await h.a.get(`${path}?limit=0`), 'query', 'limit');
      expect400(await h.a.get(`${path}?limit=101`), 'query', 'limit');
      expect400(await h.a.get(`${path}?page=0`), 'query', 'page');
      expect400(await h.a.get(`${path}?resultType=FIRST`), 'query', 'resultType');
      expect400(await h.a.get(`${path}?from=last-tuesday`), 'query', 'from');
      expect400(await h.a.get(`${path}?from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z`), 'query', 'to');
      expect404(await h.a.get(`/api/v1/check-results/${MISSING_UUID}`));
      expect404(await h.b.get(path));
    });

    it('GET /v1/check-results/{checkId}/{checkResultId} answers the result, and 404 through another check, for an unknown id or for account b', async () => {
      const { check, results } = await seedResults();
      const other = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'other' })));
      const res = await h.a.get(`/api/v1/check-results/${check.id}/${results[1]!.id}`).expect(200);
      const { accountId: _ignored, ...expected } = { ...results[1]!, accountId: '' };
      expect(res.body).toEqual(expected);
      expect404(await h.a.get(`/api/v1/check-results/${other.id}/${results[1]!.id}`));
      expect404(await h.a.get(`/api/v1/check-results/${check.id}/${MISSING_UUID}`));
      expect404(await h.b.get(`/api/v1/check-results/${check.id}/${results[1]!.id}`));
    });

    it('GET /v1/check-statuses answers every check of the account: its stored status, or a no-runs-yet one', async () => {
      const failing = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'failing' })));
      const fresh = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody({ name: 'fresh' })));
      await created(h.b.post('/api/v1/checks/tcp', tcpBody({ name: "b's" })));
      const status = checkStatusFixture(failing.id, { name: 'stale name', hasFailures: true, longestRun: 900, shortestRun: 15, lastRunLocation: 'eu-west-1', updated_at: T0 });
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, status);
      const res = await h.a.get('/api/v1/check-statuses').expect(200);
      const byId = new Map<string, any>(res.body.map((s: { checkId: string }) => [s.checkId, s]));
      expect(res.body).toHaveLength(2);
      expect(byId.get(failing.id)).toEqual({
        name: 'failing',
        checkId: failing.id,
        hasFailures: true,
        hasErrors: false,
        isDegraded: false,
        longestRun: 900,
        shortestRun: 15,
        lastRunLocation: 'eu-west-1',
        lastCheckRunId: status.lastCheckRunId,
        sslDaysRemaining: null,
        created_at: status.created_at,
        updated_at: T0,
      });
      expect(byId.get(fresh.id)).toEqual({
        name: 'fresh',
        checkId: fresh.id,
        hasFailures: false,
        hasErrors: false,
        isDegraded: false,
        longestRun: null,
        shortestRun: null,
        lastRunLocation: null,
        lastCheckRunId: null,
        sslDaysRemaining: null,
        created_at: T0,
        updated_at: null,
      });
      const theirs = await h.b.get('/api/v1/check-statuses').expect(200);
      expect(theirs.body.map((s: { name: string }) => s.name)).toEqual(["b's"]);
    });

    it('GET /v1/check-statuses/{checkId} answers the check\'s status, and 404 for an unknown or another account\'s check', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const fresh = await h.a.get(`/api/v1/check-statuses/${check.id}`).expect(200);
      expect(fresh.body).toMatchObject({ checkId: check.id, name: 'orders-db', hasFailures: false, lastCheckRunId: null, updated_at: null });
      const status = checkStatusFixture(check.id, { isDegraded: true, sslDaysRemaining: 12 });
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, status);
      const res = await h.a.get(`/api/v1/check-statuses/${check.id}`).expect(200);
      expect(res.body).toMatchObject({ checkId: check.id, name: 'orders-db', isDegraded: true, sslDaysRemaining: 12, lastCheckRunId: status.lastCheckRunId });
      expect(res.body).not.toHaveProperty('accountId');
      expect404(await h.a.get(`/api/v1/check-statuses/${MISSING_UUID}`));
      expect404(await h.b.get(`/api/v1/check-statuses/${check.id}`));
    });
  });
});
