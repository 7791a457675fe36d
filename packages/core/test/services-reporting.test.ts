import { describe, expect, it, vi } from 'vitest';
import type { TcpCheck } from '../src/model/check.js';
import type { NewRecord } from '../src/ports/storage.js';
import { ReportingService } from '../src/services/reporting.js';
import { checkResultFixture, tcpCheckFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  const addCheck = (overrides: Partial<NewRecord<TcpCheck>> = {}) => storage.checks.insert(ACCOUNT_A, tcpCheckFixture(overrides));
  return { storage, reporting: new ReportingService(deps), addCheck };
}

/** Results of a check, one per minute from `start`, failing where `failed` says. */
function results(checkId: string, times: number[], start = '2026-05-01T11:00:00.000Z', failed: number[] = []) {
  return times.map((t, i) =>
    checkResultFixture(checkId, {
      startedAt: new Date(Date.parse(start) + i * 60_000).toISOString(),
      responseTime: t,
      hasFailures: failed.includes(i),
    }),
  );
}

describe('ReportingService.report', () => {
  it('gives each check successRatio in percent and avg/p95/p99 in ms over the window', async () => {
    const { reporting, storage, addCheck } = setup();
    const c = await addCheck({ name: 'api', tags: ['prod'] });
    await storage.checkResults.insertMany(ACCOUNT_A, results(c.id, [10, 20, 30, 40], undefined, [3]));
    const [entry] = await reporting.report(ACCOUNT_A, {});
    expect(entry).toEqual({
      name: 'api', checkId: c.id, checkType: 'TCP', deactivated: false, tags: ['prod'],
      aggregate: { successRatio: 75, avg: 25, p95: 38.5, p99: 39.7 },
    });
  });

  it('counts only final results inside the window, rounded to two decimals', async () => {
    const { reporting, storage, addCheck } = setup();
    const c = await addCheck();
    await storage.checkResults.insertMany(ACCOUNT_A, [
      ...results(c.id, [10, 10, 11], undefined, [0]),
      checkResultFixture(c.id, { startedAt: '2026-04-30T11:59:59.000Z', responseTime: 5000 }),
      checkResultFixture(c.id, { startedAt: '2026-05-01T11:30:00.000Z', responseTime: 5000, resultType: 'ATTEMPT', hasFailures: true }),
    ]);
    const [entry] = await reporting.report(ACCOUNT_A, {});
    expect(entry!.aggregate).toEqual({ successRatio: 66.67, avg: 10.33, p95: 10.9, p99: 10.98 });
  });

  it('a check without results in the window reports 0 for all four', async () => {
    const { reporting, addCheck } = setup();
    await addCheck();
    expect((await reporting.report(ACCOUNT_A, {}))[0]!.aggregate).toEqual({ successRatio: 0, avg: 0, p95: 0, p99: 0 });
  });

  it('filters by tags (any of them) and by deactivated', async () => {
    const { reporting, addCheck } = setup();
    await addCheck({ name: 'api', tags: ['prod', 'api'] });
    await addCheck({ name: 'web', tags: ['web'] });
    await addCheck({ name: 'off', tags: ['prod'], activated: false });
    const names = async (q: object) => (await reporting.report(ACCOUNT_A, q)).map((e) => e.name).sort();
    expect(await names({})).toEqual(['api', 'off', 'web']);
    expect(await names({ filterByTags: 'prod' })).toEqual(['api', 'off']);
    expect(await names({ filterByTags: 'api,web' })).toEqual(['api', 'web']);
    expect(await names({ filterByTags: ['web', 'nothing'] })).toEqual(['web']);
    expect(await names({ deactivated: 'true' })).toEqual(['off']);
    expect(await names({ deactivated: 'false' })).toEqual(['api', 'web']);
    expect(await names({ deactivated: 'false', filterByTags: 'prod' })).toEqual(['api']);
    expect((await reporting.report(ACCOUNT_A, { deactivated: 'true' }))[0]!.deactivated).toBe(true);
  });

  it('asks the store once for all checks of the account, and only of that account', async () => {
    const { reporting, storage, addCheck } = setup();
    const a1 = await addCheck();
    const a2 = await addCheck();
    const theirs = await storage.checks.insert(ACCOUNT_B, tcpCheckFixture());
    await storage.checkResults.insertMany(ACCOUNT_B, results(theirs.id, [1, 2]));
    const spy = vi.spyOn(storage.checkResults, 'aggregate');
    const report = await reporting.report(ACCOUNT_A, {});
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls[0]![0]).toBe(ACCOUNT_A);
    expect(spy.mock.calls[0]![1].checkIds.sort()).toEqual([a1.id, a2.id].sort());
    expect(report.map((e) => e.checkId)).not.toContain(theirs.id);
    expect(await reporting.report(ACCOUNT_B, { filterByTags: 'nothing' })).toEqual([]);
  });

  it('takes the window from quickRange, or from/to in ISO or unix seconds', async () => {
    const { reporting, storage, addCheck } = setup();
    const c = await addCheck();
    await storage.checkResults.insertMany(ACCOUNT_A, [
      ...results(c.id, [100], '2026-04-28T12:00:00.000Z'),
      ...results(c.id, [10], '2026-05-01T11:00:00.000Z'),
    ]);
    const avg = async (q: object) => (await reporting.report(ACCOUNT_A, q))[0]!.aggregate.avg;
    expect(await avg({})).toBe(10);
    expect(await avg({ quickRange: 'last7Days' })).toBe(55);
    expect(await avg({ from: '2026-04-28T00:00:00Z', to: '2026-04-29T00:00:00Z' })).toBe(100);
    expect(await avg({ from: String(Date.parse('2026-04-28T00:00:00Z') / 1000), to: String(Date.parse('2026-04-29T00:00:00Z') / 1000) })).toBe(100);
    expect(await code(reporting.report(ACCOUNT_A, { quickRange: 'last24Hours' }))).toBe('VALIDATION');
    expect(await code(reporting.report(ACCOUNT_A, { from: '2026-05-01T00:00:00Z', to: '2026-04-01T00:00:00Z' }))).toBe('VALIDATION');
    expect(await code(reporting.report(ACCOUNT_A, { deactivated: 'yes' }))).toBe('VALIDATION');
  });
});
