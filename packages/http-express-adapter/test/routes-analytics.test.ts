/**
 * The analytics routes of the HTTP API (TCP and API checks) through the real Express router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { checkResultFixture, tcpCheckFixture } from '@vigil/core/testing';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, HOUR, MISSING_UUID, ok, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newCheck } = resourceBuilders(() => h);

  describe('analytics', () => {
    const at = (hoursAgo: number, minutes = 0) => new Date(T0_MS - hoursAgo * HOUR + minutes * 60_000).toISOString();

    /** A TCP check of a with four results: two in one hour, one an hour later (failing), one in another location. */
    async function tcpWithResults() {
      const check = await newCheck(h.a, { name: 'db', tags: ['db'] });
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [
        checkResultFixture(check.id, { startedAt: at(3), responseTime: 100, phases: { dns: 10, connection: 20, data: 70, total: 100 } }),
        checkResultFixture(check.id, { startedAt: at(3, 30), responseTime: 300, phases: { dns: 30, connection: 40, data: 230, total: 300 } }),
        checkResultFixture(check.id, { startedAt: at(1), responseTime: 500, hasFailures: true, phases: { dns: 50, connection: 60, data: 390, total: 500 } }),
        checkResultFixture(check.id, { startedAt: at(1, 10), responseTime: 700, runLocation: 'eu-west-1', phases: { dns: 70, connection: 80, data: 550, total: 700 } }),
      ]);
      return check;
    }

    /** A check of type API as stored by a runner plugin (no create route for it in this build). */
    async function apiCheck() {
      const check = await h.vigil.storage.checks.insert(h.a.accountId, { ...tcpCheckFixture({ name: 'public api' }), checkType: 'API' } as never);
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [
        checkResultFixture(check.id, { checkType: 'API', startedAt: at(2), responseTime: 200, statusCode: 200 }),
        checkResultFixture(check.id, { checkType: 'API', startedAt: at(2, 5), responseTime: 400, statusCode: 500, hasFailures: true }),
      ]);
      return check;
    }

    it('GET /v1/analytics/tcp-checks/{id} answers the requested metrics per aggregationInterval bucket with their metadata', async () => {
      const check = await tcpWithResults();
      const res = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total,availability,dns_max&aggregationInterval=60`));
      expect(res).toEqual({
        checkId: check.id, name: 'db', checkType: 'TCP', activated: true, muted: false, frequency: 10,
        from: new Date(T0_MS - 24 * HOUR).toISOString(), to: T0, tags: ['db'],
        series: [
          { startedAt: at(3), total: 200, availability: 100, dns_max: 30 },
          { startedAt: at(1), total: 600, availability: 50, dns_max: 70 },
        ],
        pagination: { page: 1, limit: 10 },
        metadata: {
          total: { label: expect.any(String), unit: 'milliseconds' },
          availability: { label: expect.any(String), unit: 'percent' },
          dns_max: { label: expect.any(String), unit: 'milliseconds' },
        },
      });
      // Without an interval, one bucket over the whole window.
      const whole = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total_max&metrics=retries`));
      expect(whole.series).toEqual([{ startedAt: whole.from, total_max: 700, retries: 0 }]);
      expect(Object.keys(whole.metadata).sort()).toEqual(['retries', 'total_max']);
      // Bounds of aggregationInterval are accepted.
      expect((await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=1`))).series).toHaveLength(4);
      expect((await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=43200`))).series).toHaveLength(1);
      // groupBy runLocation, filterByStatus, paging of the series, windows.
      const grouped = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=60&groupBy=runLocation`));
      expect(grouped.series).toEqual([
        { startedAt: at(3), runLocation: 'us-east-1', total: 200 },
        { startedAt: at(1), runLocation: 'eu-west-1', total: 700 },
        { startedAt: at(1), runLocation: 'us-east-1', total: 500 },
      ].sort((x, y) => x.startedAt.localeCompare(y.startedAt) || x.runLocation.localeCompare(y.runLocation)));
      const failures = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&filterByStatus=failure`));
      expect(failures.series).toEqual([{ startedAt: failures.from, total: 500 }]);
      const paged = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=60&limit=1&page=2`));
      expect(paged.series).toEqual([{ startedAt: at(1), total: 600 }]);
      expect(paged.pagination).toEqual({ page: 2, limit: 1 });
      const week = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&quickRange=last7Days`));
      expect(week.from).toBe(new Date(T0_MS - 7 * 24 * HOUR).toISOString());
      const from = Math.floor((T0_MS - 2 * HOUR) / 1000);
      const window = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&from=${from}&to=${T0}`));
      expect(window.series).toEqual([{ startedAt: new Date(from * 1000).toISOString(), total: 600 }]);
    });

    it('GET /v1/analytics/tcp-checks/{id} refuses a missing or unknown metric and out-of-range parameters, naming them', async () => {
      const check = await tcpWithResults();
      const path = `/api/v1/analytics/tcp-checks/${check.id}`;
      expect400(await h.a.get(path), 'query', 'metrics');
      expect400(await h.a.get(`${path}?metrics=`), 'query', 'metrics');
      const unknown = await h.a.get(`${path}?metrics=total,responseTime`);
      expect400(unknown, 'query', 'metrics');
      expect(unknown.body.message).toContain('responseTime');
      expect400(await h.a.get(`${path}?metrics=total_p42`), 'query', 'metrics');
      expect400(await h.a.get(`${path}?metrics=total&aggregationInterval=0`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=total&aggregationInterval=43201`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=total&aggregationInterval=1.5`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=total&groupBy=statusCode`), 'query', 'groupBy');
      expect400(await h.a.get(`${path}?metrics=total&quickRange=last24Hrs`), 'query', 'quickRange');
      expect400(await h.a.get(`${path}?metrics=total&limit=0`), 'query', 'limit');
      expect400(await h.a.get(`${path}?metrics=total&limit=101`), 'query', 'limit');
      expect400(await h.a.get(`${path}?metrics=total&page=0`), 'query', 'page');
      expect400(await h.a.get(`${path}?metrics=total&from=nope`), 'query', 'from');
      expect400(await h.a.get(`${path}?metrics=total&from=2026-05-01T00:00:00Z&to=2026-04-30T00:00:00Z`), 'query', 'to');
      const status = await h.a.get(`${path}?metrics=total&filterByStatus=pending`);
      expect(status.status).toBe(400);
      expect(status.body.validation.source).toBe('query');
      expect(status.body.validation.keys.every((k: string) => k.startsWith('filterByStatus'))).toBe(true);
      expect404(await h.a.get(`/api/v1/analytics/tcp-checks/${MISSING_UUID}?metrics=total`));
    });

    it('GET /v1/analytics/api-checks/{id} answers API metrics, groups by statusCode, and refuses TCP metrics', async () => {
      const check = await apiCheck();
      const path = `/api/v1/analytics/api-checks/${check.id}`;
      const res = await ok(h.a.get(`${path}?metrics=responseTime,responseTime_max,availability&groupBy=statusCode`));
      expect(res).toMatchObject({ checkId: check.id, name: 'public api', checkType: 'API', pagination: { page: 1, limit: 10 } });
      expect(res.series).toEqual([
        { startedAt: res.from, statusCode: '200', responseTime: 200, responseTime_max: 200, availability: 100 },
        { startedAt: res.from, statusCode: '500', responseTime: 400, responseTime_max: 400, availability: 0 },
      ]);
      expect(res.metadata).toEqual({
        responseTime: { label: expect.any(String), unit: 'milliseconds' },
        responseTime_max: { label: expect.any(String), unit: 'milliseconds' },
        availability: { label: expect.any(String), unit: 'percent' },
      });
      expect((await ok(h.a.get(`${path}?metrics=responseTime&groupBy=runLocation`))).series).toEqual([
        { startedAt: res.from, runLocation: 'us-east-1', responseTime: 300 },
      ]);
      expect400(await h.a.get(path), 'query', 'metrics');
      const tcpMetric = await h.a.get(`${path}?metrics=total`);
      expect400(tcpMetric, 'query', 'metrics');
      expect(tcpMetric.body.message).toContain('total');
      expect400(await h.a.get(`${path}?metrics=responseTime&groupBy=region`), 'query', 'groupBy');
      expect400(await h.a.get(`${path}?metrics=responseTime&aggregationInterval=43201`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=responseTime&quickRange=yesterday`), 'query', 'quickRange');
      // Each route reaches only checks of its type.
      const tcp = await newCheck();
      expect404(await h.a.get(`/api/v1/analytics/api-checks/${tcp.id}?metrics=responseTime`));
      expect404(await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total`));
    });

    it('401 and 403 on both analytics routes; 404 for another account\'s check', async () => {
      const tcp = await tcpWithResults();
      const api = await apiCheck();
      await expectAuthGuards(h, [
        ['get', `/api/v1/analytics/tcp-checks/${tcp.id}?metrics=total`],
        ['get', `/api/v1/analytics/api-checks/${api.id}?metrics=responseTime`],
      ]);
      await expectHiddenFromB(h, [
        ['get', `/api/v1/analytics/tcp-checks/${tcp.id}?metrics=total`],
        ['get', `/api/v1/analytics/api-checks/${api.id}?metrics=responseTime`],
      ]);
    });
  });
});
