import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { AnalyticsService } from '../src/services/analytics.js';
import { browserCheckFixture, checkResultFixture, tcpCheckFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

/** Four TCP runs at 11:00..11:03; the last failed after two retries. */
async function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  const check = await storage.checks.insert(ACCOUNT_A, tcpCheckFixture({ name: 'db', tags: ['prod'], frequency: 5 }));
  const totals = [10, 20, 30, 40];
  await storage.checkResults.insertMany(ACCOUNT_A, totals.map((t, i) => checkResultFixture(check.id, {
    startedAt: `2026-05-01T11:0${i}:00.000Z`,
    responseTime: t,
    phases: { total: t, dns: i + 1, connection: t / 2, data: 2 },
    hasFailures: i === 3,
    attempts: i === 3 ? 3 : 1,
    runLocation: i % 2 ? 'us-east-1' : 'eu-west-1',
  })));
  return { storage, check, analytics: new AnalyticsService(deps) };
}

describe('AnalyticsService.query (TCP)', () => {
  it('answers the check, the window and one row for the whole window by default', async () => {
    const { analytics, check } = await setup();
    const out = await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: 'total' });
    expect(out).toEqual({
      checkId: check.id, name: 'db', checkType: 'TCP', activated: true, muted: false, frequency: 5, tags: ['prod'],
      from: '2026-04-30T12:00:00.000Z', to: '2026-05-01T12:00:00.000Z',
      series: [{ startedAt: '2026-04-30T12:00:00.000Z', total: 25 }],
      pagination: { page: 1, limit: 10 },
      metadata: { total: { label: 'Total (average)', unit: 'milliseconds' } },
    });
  });

  it('computes each metric: base is the average, a suffix names the function; availability and retries', async () => {
    const { analytics, check } = await setup();
    const metrics = 'total_max,total_min,total_sum,total_median,total_p50,total_p90,dns,connection_p95,data_stddev,availability,retries';
    const [row] = (await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics })).series;
    expect(row).toMatchObject({
      total_max: 40, total_min: 10, total_sum: 100, total_median: 25, total_p50: 25, total_p90: 37,
      dns: 2.5, connection_p95: 19.25, data_stddev: 0, availability: 75, retries: 2,
    });
    const meta = (await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: ['availability', 'retries', 'dns_p99'] })).metadata;
    expect(meta).toEqual({
      availability: { label: 'Availability', unit: 'percent' },
      retries: { label: 'Retries', unit: 'count' },
      dns_p99: { label: 'DNS (p99)', unit: 'milliseconds' },
    });
  });

  it('buckets by aggregationInterval minutes, sorted by startedAt, paged by limit and page', async () => {
    const { analytics, check } = await setup();
    const window = { from: '2026-05-01T11:00:00Z', to: '2026-05-01T11:04:00Z', metrics: 'total' };
    const all = await analytics.query(ACCOUNT_A, 'tcp', check.id, { ...window, aggregationInterval: '1' });
    expect(all.series).toEqual([
      { startedAt: '2026-05-01T11:00:00.000Z', total: 10 },
      { startedAt: '2026-05-01T11:01:00.000Z', total: 20 },
      { startedAt: '2026-05-01T11:02:00.000Z', total: 30 },
      { startedAt: '2026-05-01T11:03:00.000Z', total: 40 },
    ]);
    expect((await analytics.query(ACCOUNT_A, 'tcp', check.id, { ...window, aggregationInterval: '2' })).series.map((s) => s.total)).toEqual([15, 35]);
    const paged = await analytics.query(ACCOUNT_A, 'tcp', check.id, { ...window, aggregationInterval: '1', limit: '3', page: '2' });
    expect(paged.series.map((s) => s.total)).toEqual([40]);
    expect(paged.pagination).toEqual({ page: 2, limit: 3 });
  });

  it('groups by runLocation and filters by status', async () => {
    const { analytics, check } = await setup();
    const grouped = await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: 'total,availability', groupBy: 'runLocation' });
    expect(grouped.series.map((s) => [s.runLocation, s.total, s.availability]).sort()).toEqual([['eu-west-1', 20, 100], ['us-east-1', 30, 50]]);
    const failures = await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: 'total,retries', filterByStatus: 'failure' });
    expect(failures.series).toEqual([{ startedAt: '2026-04-30T12:00:00.000Z', total: 40, retries: 2 }]);
    expect((await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: 'total', filterByStatus: 'success' })).series[0]!.total).toBe(20);
    expect((await analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: 'total', from: '2026-05-01T11:30:00Z' })).series).toEqual([]);
  });

  it('the check must be a TCP check of the account; API analytics find no API check', async () => {
    const { analytics, storage, check } = await setup();
    const browser = await storage.checks.insert(ACCOUNT_A, browserCheckFixture());
    const theirs = await storage.checks.insert(ACCOUNT_B, tcpCheckFixture());
    expect(await code(analytics.query(ACCOUNT_A, 'tcp', browser.id, { metrics: 'total' }))).toBe('NOT_FOUND');
    expect(await code(analytics.query(ACCOUNT_A, 'tcp', theirs.id, { metrics: 'total' }))).toBe('NOT_FOUND');
    expect(await code(analytics.query(ACCOUNT_B, 'tcp', check.id, { metrics: 'total' }))).toBe('NOT_FOUND');
    expect(await code(analytics.query(ACCOUNT_A, 'tcp', 'unknown', { metrics: 'total' }))).toBe('NOT_FOUND');
    expect(await code(analytics.query(ACCOUNT_A, 'api', check.id, { metrics: 'responseTime' }))).toBe('NOT_FOUND');
    expect(await code(analytics.query(ACCOUNT_A, 'api', browser.id, { metrics: 'responseTime' }))).toBe('NOT_FOUND');
  });

  it('validates the query: metrics of the type, groupBy, ranges of aggregationInterval and limit', async () => {
    const { analytics, check } = await setup();
    const q = (extra: object) => analytics.query(ACCOUNT_A, 'tcp', check.id, { metrics: 'total', ...extra });
    const err = await analytics.query(ACCOUNT_A, 'tcp', check.id, {}).catch((e: ValidationError) => e);
    expect(err).toMatchObject({ source: 'query', keys: ['metrics'] });
    expect(await code(q({ metrics: 'responseTime' }))).toBe('VALIDATION');
    expect(await code(q({ metrics: 'total_p42' }))).toBe('VALIDATION');
    expect(await code(q({ groupBy: 'statusCode' }))).toBe('VALIDATION');
    expect(await code(q({ filterByStatus: 'broken' }))).toBe('VALIDATION');
    expect(await code(q({ quickRange: 'last24Hrs' }))).toBe('VALIDATION');
    expect(await code(q({ aggregationInterval: '0' }))).toBe('VALIDATION');
    expect(await code(q({ aggregationInterval: '1' }))).toBe('OK');
    expect(await code(q({ aggregationInterval: '43200' }))).toBe('OK');
    expect(await code(q({ aggregationInterval: '43201' }))).toBe('VALIDATION');
    expect(await code(q({ limit: '0' }))).toBe('VALIDATION');
    expect(await code(q({ limit: '1' }))).toBe('OK');
    expect(await code(q({ limit: '100' }))).toBe('OK');
    expect(await code(q({ limit: '101' }))).toBe('VALIDATION');
    expect(await code(q({ page: '0' }))).toBe('VALIDATION');
    expect(await code(q({ from: '2026-05-01T11:00:00Z', to: '2026-05-01T10:00:00Z' }))).toBe('VALIDATION');
  });
});
