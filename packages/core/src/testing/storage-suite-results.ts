import type { CheckResult } from '../model/check-result.js';
import type { AggregateFunction, AggregateMeasure, NewRecord, ResultAggregateRow } from '../ports/storage.js';
import { checkResultFixture } from './fixtures.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  checkClose,
  checkRawCount,
  checkRejects,
  checkSame,
  isoAt,
  rawMatching,
  type StorageCase,
} from './storage-suite-support.js';
import { check } from './suite-types.js';

const T0 = '2026-05-01T12:03:00.000Z';
const MIN = 60_000;

/** percentile_cont as PostgreSQL documents it: interpolate between the values around rank p*(n-1). */
function expectedPercentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const rank = p * (s.length - 1);
  const i = Math.floor(rank);
  return i + 1 < s.length ? s[i]! + (rank - i) * (s[i + 1]! - s[i]!) : s[i]!;
}

function expectedStddev(values: number[]): number | null {
  if (values.length < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (values.length - 1));
}

const FUNCTIONS: AggregateFunction[] = ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum', 'count'];

function expected(values: number[], fn: AggregateFunction): number | null {
  if (fn === 'count') return values.length;
  if (values.length === 0) return null;
  const sum = values.reduce((a, b) => a + b, 0);
  const percentiles: Partial<Record<AggregateFunction, number>> = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };
  if (percentiles[fn] !== undefined) return expectedPercentile(values, percentiles[fn]);
  const table: Partial<Record<AggregateFunction, number | null>> = {
    avg: sum / values.length,
    sum,
    min: Math.min(...values),
    max: Math.max(...values),
    stddev: expectedStddev(values),
  };
  return table[fn] ?? null;
}

const measuresOf = (field: string, prefix = field): AggregateMeasure[] =>
  FUNCTIONS.map((fn) => ({ name: `${prefix}_${fn}`, field, fn }));

function checkMeasures(row: ResultAggregateRow | undefined, field: string, values: number[], label: string) {
  check(row !== undefined, `${label}: the row is missing`);
  for (const fn of FUNCTIONS) checkClose(row.values[`${field}_${fn}`], expected(values, fn), `${label} ${field}_${fn}`);
}

function result(checkId: string, minute: number, responseTime: number, extra: Partial<NewRecord<CheckResult>> = {}) {
  return checkResultFixture(checkId, {
    startedAt: isoAt(T0, minute * MIN),
    responseTime,
    phases: { dns: responseTime / 10, total: responseTime },
    ...extra,
  });
}

export function resultCases(c: StorageCase) {
  c('check results: insertMany stores 1,000 rows in one call; a conflict stores none of its batch', async (f) => {
    const rows = Array.from({ length: 1000 }, (_, i) => result('check-bulk', i / 60, 100 + i));
    await f.storage.checkResults.insertMany(ACCOUNT_A, rows);
    await checkRawCount(f.raw, 'check_results', 1000, 'after one insertMany');
    const sample = rows[500]!;
    checkSame(await f.storage.checkResults.get(ACCOUNT_A, sample.id), { ...sample, accountId: ACCOUNT_A }, 'get answers a stored result');
    check((await f.storage.checkResults.get(ACCOUNT_B, sample.id)) === null, 'another account cannot read it');
    check((await rawMatching(f.raw, 'check_results', sample.id, ACCOUNT_A)).length === 1, 'the raw row holds id and account');
    const page = await f.storage.checkResults.listByCheck(ACCOUNT_A, 'check-bulk', { limit: 100, offset: 0 });
    check(page.total === 1000 && page.items.length === 100, `listByCheck counts 1000 and pages 100, got ${page.total}/${page.items.length}`);
    const clash = [result('check-bulk', 2000, 1), rows[0]!];
    await checkRejects(() => f.storage.checkResults.insertMany(ACCOUNT_A, clash), 'CONFLICT', 'a batch with a taken id');
    await checkRawCount(f.raw, 'check_results', 1000, 'a failed batch stores nothing');
  }, 60_000);

  c('check results: listByCheck newest first, with from/to, resultType and checkSessionId', async (f) => {
    const session = '5e55a1b2-0000-4000-8000-000000000001';
    const rows = [
      result('check-1', 0, 10),
      result('check-1', 1, 11, { resultType: 'ATTEMPT' }),
      result('check-1', 2, 12, { checkSessionId: session }),
      result('check-1', 3, 13),
      result('check-1', 4, 14, { checkSessionId: session, resultType: 'ATTEMPT' }),
    ];
    // Stored out of time order: the answer follows startedAt, not insertion.
    await f.storage.checkResults.insertMany(ACCOUNT_A, [rows[3]!, rows[0]!, rows[4]!, rows[1]!, rows[2]!]);
    await f.storage.checkResults.insertMany(ACCOUNT_A, [result('check-2', 2, 99)]);
    await f.storage.checkResults.insertMany(ACCOUNT_B, [result('check-1', 2, 99)]);
    const list = (q: Partial<Parameters<typeof f.storage.checkResults.listByCheck>[2]> = {}) =>
      f.storage.checkResults.listByCheck(ACCOUNT_A, 'check-1', { limit: 10, offset: 0, ...q });
    const ids = (page: { items: CheckResult[] }) => page.items.map((r) => r.id);
    const byIndex = (...i: number[]) => i.map((n) => rows[n]!.id);
    const all = await list();
    checkSame(ids(all), byIndex(4, 3, 2, 1, 0), 'newest first');
    check(all.total === 5, 'total of this check in this account');
    const page = await list({ limit: 2, offset: 1 });
    checkSame(ids(page), byIndex(3, 2), 'limit/offset');
    check(page.total === 5 && page.offset === 1, 'a page carries the total');
    const uncounted = await list({ limit: 2, offset: 1, countTotal: false });
    checkSame(ids(uncounted), byIndex(3, 2), 'a page not counted has the same items');
    check(uncounted.total === -1 || uncounted.total === 5, `a page not counted has -1 or the total, got ${uncounted.total}`);
    checkSame(ids(await list({ from: new Date(rows[1]!.startedAt), to: new Date(rows[3]!.startedAt) })), byIndex(2, 1), 'from is inclusive, to exclusive');
    checkSame(ids(await list({ resultType: 'FINAL' })), byIndex(3, 2, 0), 'resultType FINAL');
    checkSame(ids(await list({ resultType: 'ATTEMPT' })), byIndex(4, 1), 'resultType ATTEMPT');
    checkSame(ids(await list({ checkSessionId: session })), byIndex(4, 2), 'checkSessionId');
    check((await f.storage.checkResults.listByCheck(ACCOUNT_B, 'check-2', { limit: 10, offset: 0 })).total === 0, 'another account sees none of check-2');
  });

  c('check results: aggregate over a window matches percentile_cont, avg, min, max, sum, stddev, count', async (f) => {
    const times = [10, 20, 30, 40, 55, 70, 100, 150, 200, 1000, 7.5];
    await f.storage.checkResults.insertMany(ACCOUNT_A, times.map((t, i) => result('check-1', i, t, { attempts: 1 + (i % 3) })));
    await f.storage.checkResults.insertMany(ACCOUNT_A, [result('check-1', 11, 5)]); // exactly at `to`: outside
    await f.storage.checkResults.insertMany(ACCOUNT_B, [result('check-1', 2, 5000)]);
    const rows = await f.storage.checkResults.aggregate(ACCOUNT_A, {
      checkIds: ['check-1'],
      from: new Date(T0),
      to: new Date(Date.parse(T0) + 11 * MIN),
      measures: [
        ...measuresOf('responseTime'),
        ...measuresOf('attempts'),
        ...measuresOf('total'),
        { name: 'wait_avg', field: 'wait', fn: 'avg' },
        { name: 'wait_count', field: 'wait', fn: 'count' },
      ],
    });
    check(rows.length === 1, `one row without buckets, got ${rows.length}`);
    const row = rows[0]!;
    check(row.checkId === 'check-1' && row.bucketStart === T0 && row.group === null, 'the row names the check and the window start');
    check(row.count === 11 && row.failures === 0, `count 11, failures 0; got ${row.count}, ${row.failures}`);
    checkMeasures(row, 'responseTime', times, 'responseTime');
    checkMeasures(row, 'attempts', times.map((_, i) => 1 + (i % 3)), 'attempts');
    checkMeasures(row, 'total', times, 'phase total');
    checkClose(row.values.wait_avg, null, 'a missing phase gives null');
    checkClose(row.values.wait_count, 0, 'a missing phase counts 0');
    // Anchors computed by hand, so the suite's own formula cannot drift.
    const four = await f.storage.checkResults.aggregate(ACCOUNT_A, {
      checkIds: ['check-1'],
      from: new Date(T0),
      to: new Date(Date.parse(T0) + 4 * MIN),
      measures: [
        { name: 'median', field: 'responseTime', fn: 'median' },
        { name: 'p90', field: 'responseTime', fn: 'p90' },
        { name: 'stddev', field: 'responseTime', fn: 'stddev' },
      ],
    });
    checkClose(four[0]?.values.median, 25, 'median of 10, 20, 30, 40');
    checkClose(four[0]?.values.p90, 37, 'p90 of 10, 20, 30, 40');
    checkClose(four[0]?.values.stddev, Math.sqrt(500 / 3), 'sample stddev of 10, 20, 30, 40');
    const one = await f.storage.checkResults.aggregate(ACCOUNT_A, {
      checkIds: ['check-1'],
      from: new Date(T0),
      to: new Date(Date.parse(T0) + 1 * MIN),
      measures: measuresOf('responseTime'),
    });
    checkMeasures(one[0], 'responseTime', [10], 'a single value');
    checkClose(one[0]?.values.responseTime_stddev, null, 'stddev of one value is null');
  });

  c('check results: aggregate keeps the spread of near-equal large values (runs that all hit a timeout)', async (f) => {
    // A one-pass sum-of-squares variance loses these to cancellation; stddev_samp keeps them.
    const times = [30_000.125, 30_000.25, 30_000.25, 30_000.375, 30_000.5, 30_000.625];
    await f.storage.checkResults.insertMany(ACCOUNT_A, times.map((t, i) => result('check-1', i, t)));
    const rows = await f.storage.checkResults.aggregate(ACCOUNT_A, {
      checkIds: ['check-1'],
      from: new Date(T0),
      to: new Date(Date.parse(T0) + 10 * MIN),
      measures: [...measuresOf('responseTime'), ...measuresOf('dns')],
    });
    checkMeasures(rows[0], 'responseTime', times, 'near-equal timeouts');
    checkMeasures(rows[0], 'dns', times.map((t) => t / 10), 'near-equal timeouts, a phase');
  });

  c('check results: aggregate over more than a day after the store rolls closed hours up (where it does) counts exactly, percentiles within 2%', async (f) => {
    // One run every 5 minutes for 30 hours up to the hour under way, a skewed spread with a slow tail.
    const times = Array.from({ length: 30 * 12 }, (_, i) => 80 + ((i * 37) % 97) ** 2 / 20 + (i % 53 === 0 ? 4000 : 0));
    const start = Date.parse(T0) - 30 * 60 * MIN;
    await f.storage.checkResults.insertMany(ACCOUNT_A, times.map((t, i) => checkResultFixture('check-1', {
      startedAt: new Date(start + i * 5 * MIN).toISOString(), responseTime: t, hasFailures: i % 10 === 0, phases: { dns: t / 10, total: t },
    })));
    for (let after: Date | null = null, done = !f.storage.checkResults.rollUp; !done;) {
      const step = await f.storage.checkResults.rollUp!(ACCOUNT_A, after, new Date(T0), 100);
      ({ done, next: after } = step);
    }
    // Twice: a roll-up replaces its hour.
    if (f.storage.checkResults.rollUp) await f.storage.checkResults.rollUp(ACCOUNT_A, new Date(start), new Date(T0), 10_000);
    const [row] = await f.storage.checkResults.aggregate(ACCOUNT_A, {
      checkIds: ['check-1'], from: new Date(start), to: new Date(Date.parse(T0) + MIN), measures: [...measuresOf('responseTime'), ...measuresOf('dns')],
    });
    check(row?.count === times.length && row.failures === times.length / 10, `every run counted once, got ${row?.count}/${row?.failures}`);
    for (const [field, values] of [['responseTime', times], ['dns', times.map((t) => t / 10)]] as const) {
      for (const fn of ['avg', 'sum', 'min', 'max', 'stddev', 'count'] as const) checkClose(row!.values[`${field}_${fn}`], expected([...values], fn), `${field} ${fn}`);
      for (const fn of ['median', 'p90', 'p95', 'p99'] as const) {
        const exact = expected([...values], fn)!;
        const got = row!.values[`${field}_${fn}`]!;
        check(Math.abs(got - exact) <= 0.02 * exact, `${field} ${fn} within 2% of ${exact}, got ${got}`);
        if (!row!.approximate) checkClose(got, exact, `${field} ${fn} exact when no roll-up took part`);
      }
    }
  });

  c('check results: aggregate buckets align to `from` and skip empty buckets', async (f) => {
    // from is 12:03, so 10-minute buckets start at 12:03, 12:13, 12:23, ... whatever the clock's tens.
    await f.storage.checkResults.insertMany(ACCOUNT_A, [
      result('check-1', 0, 10), result('check-1', 9.99, 20), result('check-1', 10, 30),
      result('check-1', 35, 40), result('check-1', 39, 50, { hasFailures: true }),
      result('check-2', 1, 1000),
    ]);
    const rows = await f.storage.checkResults.aggregate(ACCOUNT_A, {
      checkIds: ['check-1', 'check-2'],
      from: new Date(T0),
      to: new Date(Date.parse(T0) + 60 * MIN),
      bucketMs: 10 * MIN,
      measures: [{ name: 'avg', field: 'responseTime', fn: 'avg' }],
    });
    const shape = rows.map((r) => [r.checkId, r.bucketStart, r.count, r.failures, r.values.avg]);
    checkSame(shape, [
      ['check-1', T0, 2, 0, 15],
      ['check-1', isoAt(T0, 10 * MIN), 1, 0, 30],
      ['check-1', isoAt(T0, 30 * MIN), 2, 1, 45],
      ['check-2', T0, 1, 0, 1000],
    ], 'rows per check and bucket, by check then bucket start');
  });

  c('check results: aggregate groupBy, filterByStatus and includeAttempts', async (f) => {
    await f.storage.checkResults.insertMany(ACCOUNT_A, [
      result('check-1', 0, 10, { runLocation: 'eu-west-1', statusCode: 200 }),
      result('check-1', 1, 20, { runLocation: 'eu-west-1', statusCode: 500, hasErrors: true }),
      result('check-1', 2, 30, { runLocation: 'us-east-1', statusCode: 200, hasFailures: true }),
      result('check-1', 3, 40, { runLocation: 'us-east-1', statusCode: 200 }),
      result('check-1', 4, 50, { runLocation: 'us-east-1', statusCode: 503, resultType: 'ATTEMPT', hasFailures: true }),
    ]);
    const base = {
      checkIds: ['check-1'],
      from: new Date(T0),
      to: new Date(Date.parse(T0) + 60 * MIN),
      measures: [{ name: 'sum', field: 'responseTime', fn: 'sum' as const }],
    };
    const sorted = (rows: ResultAggregateRow[]) =>
      rows.map((r) => [r.group, r.count, r.failures, r.values.sum]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    checkSame(sorted(await f.storage.checkResults.aggregate(ACCOUNT_A, { ...base, groupBy: 'runLocation' })), [
      ['eu-west-1', 2, 1, 30],
      ['us-east-1', 2, 1, 70],
    ], 'groupBy runLocation counts FINAL results only');
    checkSame(sorted(await f.storage.checkResults.aggregate(ACCOUNT_A, { ...base, groupBy: 'statusCode' })), [
      ['200', 3, 1, 80],
      ['500', 1, 1, 20],
    ], 'groupBy statusCode names the code as text');
    checkSame(sorted(await f.storage.checkResults.aggregate(ACCOUNT_A, { ...base, filterByStatus: ['failure'] })), [[null, 2, 2, 50]], 'failure = hasFailures or hasErrors');
    checkSame(sorted(await f.storage.checkResults.aggregate(ACCOUNT_A, { ...base, filterByStatus: ['success'] })), [[null, 2, 0, 50]], 'success');
    checkSame(sorted(await f.storage.checkResults.aggregate(ACCOUNT_A, { ...base, filterByStatus: ['success', 'failure'] })), [[null, 4, 2, 100]], 'both statuses');
    checkSame(sorted(await f.storage.checkResults.aggregate(ACCOUNT_A, { ...base, includeAttempts: true })), [[null, 5, 3, 150]], 'includeAttempts');
    check((await f.storage.checkResults.aggregate(ACCOUNT_B, base)).length === 0, 'another account aggregates nothing');
  });

  c('check results: deleteOlderThan removes results started before, in every account', async (f) => {
    await f.storage.checkResults.insertMany(ACCOUNT_A, [result('check-1', 0, 1), result('check-1', 1, 2), result('check-1', 2, 3)]);
    await f.storage.checkResults.insertMany(ACCOUNT_B, [result('check-9', 0, 1)]);
    const kept = await f.storage.checkResults.listByCheck(ACCOUNT_A, 'check-1', { limit: 10, offset: 0 });
    check((await f.storage.checkResults.deleteOlderThan(new Date(isoAt(T0, MIN)))) === 2, 'answers how many went');
    await checkRawCount(f.raw, 'check_results', 2, 'the raw table lost them');
    checkSame((await f.storage.checkResults.listByCheck(ACCOUNT_A, 'check-1', { limit: 10, offset: 0 })).items, kept.items.slice(0, 2), 'a result started exactly at `before` stays');
    check((await f.storage.checkResults.deleteOlderThan(new Date(isoAt(T0, MIN)))) === 0, 'nothing more to delete');
  });

  c('check results: prune takes one account\'s results before the whole hour of `before`, a batch of whole hours at a time', async (f) => {
    // T0 is 12:03; the minutes below are 09:10, 09:20, 09:30, 10:05, 10:50, 11:15 (an attempt), 11:16 and 12:03.
    await f.storage.checkResults.insertMany(ACCOUNT_A, [
      result('check-1', -173, 1), result('check-1', -163, 2), result('check-2', -153, 3), result('check-1', -118, 4), result('check-2', -73, 5),
      result('check-1', -48, 6, { resultType: 'ATTEMPT' }), result('check-1', -47, 7), result('check-1', 0, 8),
    ]);
    await f.storage.checkResults.insertMany(ACCOUNT_B, [result('check-9', -173, 1)]);
    const at1140 = new Date('2026-05-01T11:40:00.000Z');
    const first = await f.storage.checkResults.prune(ACCOUNT_A, at1140, 2);
    checkSame([first.deleted, first.done], [3, false], 'the first batch is the whole 09:00 hour, though it holds more than the limit');
    const second = await f.storage.checkResults.prune(ACCOUNT_A, at1140, 2);
    checkSame([second.deleted, second.done], [2, true], 'the second takes the 10:00 hour, and nothing is left before 11:00');
    const third = await f.storage.checkResults.prune(ACCOUNT_A, at1140, 2);
    checkSame([third.deleted, third.done], [0, true], 'a third finds nothing');
    const left = async (accountId: string) => (await f.raw.dump('check_results')).filter((r) => r.account_id === accountId || r.accountId === accountId).length;
    check((await left(ACCOUNT_A)) === 3, 'the results of 11:00 and later stay: before is rounded down to its hour');
    check((await left(ACCOUNT_B)) === 1, 'another account keeps its results');
    const all = await f.storage.checkResults.prune(ACCOUNT_A, new Date('2026-05-01T12:00:00.000Z'), 100);
    checkSame([all.deleted, all.done], [2, true], 'a result that started exactly at `before` stays');
    checkSame((await f.storage.checkResults.listByCheck(ACCOUNT_A, 'check-1', { limit: 10, offset: 0 })).items.map((r) => r.responseTime), [8], 'what is left');
  });
}
