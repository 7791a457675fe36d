/**
 * The reporting route of the HTTP API through the real Express router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { checkResultFixture } from '@vigil/core/testing';
import { expect400, expectAuthGuards } from './support/expect.js';
import { T0, T0_MS, HOUR, ok, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newCheck } = resourceBuilders(() => h);

  describe('reporting', () => {
    /** Results of a check at hours before T0 with a response time, failing or not. */
    const results = (accountId: string, checkId: string, runs: [hoursAgo: number, responseTime: number, failed?: boolean][]) =>
      h.vigil.storage.checkResults.insertMany(accountId, runs.map(([hoursAgo, responseTime, failed]) => checkResultFixture(checkId, {
        startedAt: new Date(T0_MS - hoursAgo * HOUR).toISOString(), responseTime, hasFailures: failed ?? false,
      })));

    it('GET /v1/reporting defaults to last24Hrs and answers one entry per check with successRatio in percent and times in ms', async () => {
      const db = await newCheck(h.a, { name: 'db', tags: ['db', 'prod'] });
      const idle = await newCheck(h.a, { name: 'idle', tags: ['prod'] });
      await results(h.a.accountId, db.id, [[1, 100], [2, 300, true], [48, 1000]]);
      const report = await ok(h.a.get('/api/v1/reporting'));
      expect(report).toHaveLength(2);
      const entry = report.find((e: { checkId: string }) => e.checkId === db.id);
      expect(entry).toEqual({
        name: 'db', checkId: db.id, checkType: 'TCP', deactivated: false, tags: ['db', 'prod'],
        aggregate: { successRatio: 50, avg: 200, p95: expect.any(Number), p99: expect.any(Number) },
      });
      expect(entry.aggregate.p95).toBeGreaterThanOrEqual(200);
      expect(entry.aggregate.p95).toBeLessThanOrEqual(300);
      expect(entry.aggregate.p99).toBeGreaterThanOrEqual(entry.aggregate.p95);
      expect(report.find((e: { checkId: string }) => e.checkId === idle.id)).toEqual({
        name: 'idle', checkId: idle.id, checkType: 'TCP', deactivated: false, tags: ['prod'], aggregate: { successRatio: 0, avg: 0, p95: 0, p99: 0 },
      });
      expect(await ok(h.a.get('/api/v1/reporting?quickRange=last24Hrs'))).toEqual(report);

      const week = (await ok(h.a.get('/api/v1/reporting?quickRange=last7Days'))).find((e: { checkId: string }) => e.checkId === db.id);
      expect(week.aggregate.successRatio).toBeCloseTo(66.67, 1);
      expect(week.aggregate.avg).toBeCloseTo(466.67, 1);
      for (const range of ['last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth']) {
        expect(await ok(h.a.get(`/api/v1/reporting?quickRange=${range}`)), range).toHaveLength(2);
      }
      // from/to override the quick range, as unix seconds or ISO 8601.
      const from = Math.floor((T0_MS - 72 * HOUR) / 1000);
      const to = Math.floor((T0_MS - 24 * HOUR) / 1000);
      const old = (await ok(h.a.get(`/api/v1/reporting?from=${from}&to=${to}`))).find((e: { checkId: string }) => e.checkId === db.id);
      expect(old.aggregate).toEqual({ successRatio: 100, avg: 1000, p95: 1000, p99: 1000 });
      const iso = (await ok(h.a.get('/api/v1/reporting?from=2026-04-28T00:00:00Z&to=2026-04-30T12:00:00Z'))).find((e: { checkId: string }) => e.checkId === db.id);
      expect(iso.aggregate).toEqual(old.aggregate);
      expect(await ok(h.b.get('/api/v1/reporting'))).toEqual([]);
    });

    it('GET /v1/reporting filters by deactivated and by tags', async () => {
      const on = await newCheck(h.a, { name: 'on', tags: ['db', 'prod'] });
      const off = await newCheck(h.a, { name: 'off', tags: ['web'], activated: false });
      const names = async (query: string) => ((await ok(h.a.get(`/api/v1/reporting${query}`))) as { name: string }[]).map((e) => e.name).sort();
      expect(await names('')).toEqual(['off', 'on']);
      expect(await names('?deactivated=true')).toEqual(['off']);
      expect(await names('?deactivated=false')).toEqual(['on']);
      expect(await names('?filterByTags=web')).toEqual(['off']);
      expect(await names('?filterByTags=db')).toEqual(['on']);
      expect(await names('?filterByTags=db,prod')).toEqual(['on']);
      expect(await names('?filterByTags=db&filterByTags=prod')).toEqual(['on']);
      expect(await names('?filterByTags=staging')).toEqual([]);
      expect(await names('?filterByTags=web&deactivated=false')).toEqual([]);
      const entry = (await ok(h.a.get('/api/v1/reporting?deactivated=true')))[0];
      expect(entry).toMatchObject({ checkId: off.id, deactivated: true, tags: ['web'] });
      expect(on.activated).toBe(true);
    });

    it('GET /v1/reporting refuses a bad quickRange, deactivated, from or to, naming the parameter', async () => {
      await newCheck();
      expect400(await h.a.get('/api/v1/reporting?quickRange=last24Hours'), 'query', 'quickRange');
      expect400(await h.a.get('/api/v1/reporting?quickRange=yesterday'), 'query', 'quickRange');
      expect400(await h.a.get('/api/v1/reporting?deactivated=maybe'), 'query', 'deactivated');
      expect400(await h.a.get('/api/v1/reporting?from=last-tuesday'), 'query', 'from');
      expect400(await h.a.get('/api/v1/reporting?to=2026-02-30'), 'query', 'to');
      expect400(await h.a.get('/api/v1/reporting?from=2026-05-01T00:00:00Z&to=2026-04-30T00:00:00Z'), 'query', 'to');
    });

    it('401 and 403 on GET /v1/reporting', async () => {
      await expectAuthGuards(h, [['get', '/api/v1/reporting'], ['get', '/api/v1/reporting?quickRange=last7Days']]);
    });
  });
});
