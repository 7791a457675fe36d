/**
 * The analytics routes checked number by number. A varied set of API and TCP results is stored
 * (phase timings with ties, missing phases, statuses pass / fail / error / degraded, status codes,
 * run locations, retries, ATTEMPT rows, results at the window's edges, other checks' and accounts'
 * results), every metric and suffix is computed again here by a small reference implementation
 * over the same results, and the API's answers must match it to floating-point precision for
 * windows, quick ranges, buckets, groupings, status filters and pages, on SQLite and, with
 * VIGIL_PG_URL, on PostgreSQL. Bad query input must answer the spec's 400 naming the field.
 *
 * Percentiles follow the definition Vigil documents (PostgreSQL's percentile_cont, also known as
 * R-7 / Excel PERCENTILE.INC): over the n values of a bucket sorted ascending (0-based), the p-th
 * percentile sits at rank h = p * (n - 1) and is x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]).
 * median is p50. stddev is the sample standard deviation (n - 1), absent (null) below two values.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { BACKENDS, dropPostgresSchema } from './support/harness.js';
import { allMetrics, BASES, DAY, HOUR, NOW, type Kind, type Point } from './support/analytics-results.js';
import { analyticsUnderTest, differences } from './support/analytics-reference.js';

afterAll(dropPostgresSchema);

describe.each(BACKENDS)('analytics numbers on %s match a reference computed from the same results', (backend) => {
  const { get, verify, last24 } = analyticsUnderTest(backend);

  describe.each(['api', 'tcp'] as Kind[])('%s checks', (kind) => {
    it('every metric and suffix over the default window (last24Hours), one bucket', async () => {
      const [point] = await verify(kind, {}, last24);
      // The window holds failures, retries and every phase: none of the numbers is trivially empty.
      expect(point!.availability).toBeLessThan(100);
      expect(point!.retries).toBeGreaterThan(0);
      for (const base of BASES[kind]) expect(point![`${base}_stddev`], base).toBeGreaterThan(0);
    });

    it('aggregationInterval buckets, aligned to the window start', async () => {
      await verify(kind, { aggregationInterval: 60 }, { ...last24, intervalMinutes: 60 });
      await verify(kind, { aggregationInterval: 7 }, { ...last24, intervalMinutes: 7 });
      await verify(kind, { aggregationInterval: 1 }, { ...last24, intervalMinutes: 1 });
      await verify(kind, { aggregationInterval: 43200 }, { ...last24, intervalMinutes: 43200 });
    });

    it('groupBy runLocation, alone and with buckets; near-equal timeouts keep their spread', async () => {
      await verify(kind, { groupBy: 'runLocation' }, { ...last24, groupBy: 'runLocation' });
      const rows = await verify(kind, { groupBy: 'runLocation', aggregationInterval: 60 }, { ...last24, groupBy: 'runLocation', intervalMinutes: 60 });
      const timeoutBucket = rows.find((r) => r.runLocation === 'af-south-1')!;
      expect(timeoutBucket[`${BASES[kind][0]}_stddev`]).toBeGreaterThan(0);
    });

    it('filterByStatus success, failure and both, with and without grouping', async () => {
      await verify(kind, { filterByStatus: 'success' }, { ...last24, statuses: ['success'] });
      await verify(kind, { filterByStatus: 'failure' }, { ...last24, statuses: ['failure'] });
      await verify(kind, { filterByStatus: 'success,failure' }, { ...last24, statuses: ['success', 'failure'] });
      await verify(kind, { filterByStatus: ['failure', 'success'] }, { ...last24, statuses: ['success', 'failure'] });
      await verify(kind, { filterByStatus: 'failure', groupBy: 'runLocation', aggregationInterval: 240 }, { ...last24, statuses: ['failure'], groupBy: 'runLocation', intervalMinutes: 240 });
    });

    it('from and to (ISO or unix seconds) override the quick range', async () => {
      const from = Date.parse('2026-04-12T03:17:30.000Z');
      const to = Date.parse('2026-04-30T18:00:00.000Z');
      await verify(kind, { from: new Date(from).toISOString(), to: new Date(to).toISOString(), aggregationInterval: 720 }, { from, to, intervalMinutes: 720 });
      await verify(kind, { from: from / 1000, to: to / 1000, aggregationInterval: 1440 }, { from, to, intervalMinutes: 1440 });
      // A UTC offset names the same instant.
      await verify(kind, { from: '2026-04-12T05:17:30+02:00', to: '2026-04-30T20:00:00.000+02:00', aggregationInterval: 720 }, { from, to, intervalMinutes: 720 });
      // from alone runs to now, whatever the quick range.
      await verify(kind, { from: '2026-04-29', quickRange: 'lastMonth' }, { from: Date.parse('2026-04-29T00:00:00Z'), to: NOW });
    });

    it('quick ranges name their windows (UTC, weeks from Monday)', async () => {
      const now = new Date(NOW);
      const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const monday = midnight - ((now.getUTCDay() + 6) % 7) * DAY;
      const windows: Record<string, { from: number; to: number }> = {
        last24Hours: { from: NOW - DAY, to: NOW },
        last7Days: { from: NOW - 7 * DAY, to: NOW },
        last30Days: { from: NOW - 30 * DAY, to: NOW },
        thisWeek: { from: monday, to: NOW },
        lastWeek: { from: monday - 7 * DAY, to: monday },
        thisMonth: { from: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), to: NOW },
        lastMonth: { from: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1), to: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) },
      };
      for (const [quickRange, w] of Object.entries(windows)) {
        await verify(kind, { quickRange, aggregationInterval: 1440 }, { ...w, intervalMinutes: 1440 });
      }
      await verify(kind, { quickRange: 'last30Days', groupBy: 'runLocation', filterByStatus: 'success' }, { ...windows.last30Days!, groupBy: 'runLocation', statuses: ['success'] });
    });

    it('limit and page cut the same series into pages; the default page holds 10', async () => {
      const metrics = ['availability', `${BASES[kind][1]}_p95`, 'retries'];
      const ref = { ...last24, groupBy: 'runLocation' as const, intervalMinutes: 60 };
      const whole = await verify(kind, { groupBy: 'runLocation', aggregationInterval: 60 }, ref, metrics);
      expect(whole.length).toBeGreaterThan(20);
      const q = { groupBy: 'runLocation', aggregationInterval: 60, metrics: metrics.join(',') };
      const first = await get(kind, q);
      expect(first.pagination).toEqual({ page: 1, limit: 10 });
      expect(differences(first.series, whole.slice(0, 10))).toEqual([]);
      const pages: Point[] = [];
      for (let page = 1; page <= Math.ceil(whole.length / 7); page++) {
        const body = await get(kind, { ...q, limit: 7, page });
        expect(body.pagination).toEqual({ page, limit: 7 });
        expect(body.series.length).toBe(Math.min(7, whole.length - (page - 1) * 7));
        pages.push(...body.series);
      }
      expect(differences(pages, whole)).toEqual([]);
      expect((await get(kind, { ...q, limit: 7, page: Math.ceil(whole.length / 7) + 1 })).series).toEqual([]);
      expect((await get(kind, { ...q, limit: 1, page: 3 })).series).toHaveLength(1);
    });

    it('metadata names every requested metric with its unit, and a point holds only those metrics', async () => {
      const metrics = allMetrics(kind);
      const body = await get(kind, { metrics: metrics.join(',') });
      expect(Object.keys(body.metadata).sort()).toEqual([...metrics].sort());
      for (const m of metrics) {
        const unit = m === 'availability' ? 'percent' : m === 'retries' ? 'count' : 'milliseconds';
        expect(body.metadata[m], m).toEqual({ label: expect.any(String), unit });
      }
      expect(Object.keys(body.series[0]!).sort()).toEqual(['startedAt', ...metrics].sort());
    });
  });

  it('API checks group by statusCode (none for a connection error), alone, with buckets and with a filter', async () => {
    const rows = await verify('api', { groupBy: 'statusCode' }, { ...last24, groupBy: 'statusCode' });
    expect(rows.map((r) => r.statusCode)).toContain(null);
    expect(rows.find((r) => r.statusCode === '504')!.responseTime_stddev).toBeGreaterThan(0);
    await verify('api', { groupBy: 'statusCode', aggregationInterval: 180 }, { ...last24, groupBy: 'statusCode', intervalMinutes: 180 });
    await verify('api', { groupBy: 'statusCode', filterByStatus: 'success', quickRange: 'last7Days' }, { from: NOW - 7 * DAY, to: NOW, groupBy: 'statusCode', statuses: ['success'] });
  });
});
