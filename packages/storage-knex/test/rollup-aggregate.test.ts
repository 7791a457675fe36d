import { percentileCont, type ResultAggregateQuery } from '@vigil/core';
import { checkResultFixture } from '@vigil/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { fieldStats, toFieldStats } from '../src/sketch.js';
import { freshStore, STORES } from './support/fresh-store.js';
import { seededRandom as random } from '@vigil/core/testing';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Now, a little into an hour: 30 days of results end here. */
const NOW = Date.UTC(2026, 4, 31, 12, 25);
const START = NOW - 30 * DAY;
const ACC = 'acc-rollups';

/** Response times as a real endpoint has them: log-normal around 120 ms, with 2% slow outliers up to seconds. */
function skewed(rand: () => number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const base = 120 * Math.exp(0.45 * normal);
  return Math.round((rand() < 0.02 ? base * (5 + 20 * rand()) : base) * 10) / 10;
}

/** One run a minute of `checkId` from `from` to `to`, with dns a phase of its own. */
function runs(checkId: string, from: number, to: number, seed: number) {
  const rand = random(seed);
  const out = [];
  for (let t = from; t < to; t += MIN) {
    const responseTime = skewed(rand);
    out.push(checkResultFixture(checkId, {
      startedAt: new Date(t).toISOString(), responseTime, hasFailures: rand() < 0.01,
      runLocation: rand() < 0.5 ? 'eu-west-1' : 'us-east-1', phases: { dns: Math.round(responseTime * 0.1 * 10) / 10, total: responseTime },
    }));
  }
  return out;
}

async function rollUpAll(storage: KnexStorage, accountId: string, before: number): Promise<number> {
  let rolledUp = 0;
  let after: Date | null = null;
  for (;;) {
    const step = await storage.checkResults.rollUp!(accountId, after, new Date(before), 20_000);
    rolledUp += step.rolledUp;
    if (step.done) return rolledUp;
    after = step.next;
  }
}

const within = (actual: number | null | undefined, exact: number, relative: number) => {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - exact) / exact).toBeLessThanOrEqual(relative);
};

const MEASURES: ResultAggregateQuery['measures'] = [
  { name: 'p95', field: 'responseTime', fn: 'p95' },
  { name: 'p99', field: 'responseTime', fn: 'p99' },
  { name: 'avg', field: 'responseTime', fn: 'avg' },
  { name: 'dns_p95', field: 'dns', fn: 'p95' },
];

describe.each(STORES)('aggregate over hourly roll-ups on %s', (kind) => {
  let storage: KnexStorage;
  const rows = runs('check-30d', START, NOW, 7);
  const exact = (from: number, to: number, pick: (r: (typeof rows)[number]) => number = (r) => r.responseTime) =>
    rows.filter((r) => Date.parse(r.startedAt) >= from && Date.parse(r.startedAt) < to).map(pick).sort((a, b) => a - b);

  beforeAll(async () => {
    storage = await freshStore(kind, 'vigil_rollagg');
    await storage.checkResults.insertMany(ACC, rows);
  }, 120_000);
  afterAll(async () => storage?.close());

  it('answers p95 and p99 of 30 days at one run a minute from roll-ups within 2% of the exact percentiles, and rolling up twice counts nothing twice', async () => {
    const query: ResultAggregateQuery = { checkIds: ['check-30d'], from: new Date(START), to: new Date(NOW), measures: MEASURES };
    const [before] = await storage.checkResults.aggregate(ACC, query);
    expect(before!.approximate).toBeUndefined();
    const hours = (NOW - START) / HOUR;
    const written = await rollUpAll(storage, ACC, NOW);
    expect(written).toBeGreaterThanOrEqual(hours);
    // Again from the job's own starting point, and again over everything: each hour is replaced, not added to.
    await rollUpAll(storage, ACC, NOW);
    await storage.checkResults.rollUp!(ACC, new Date(START), new Date(NOW), 100_000);
    const rollups = await storage.rollups(ACC, 'check-30d', new Date(START - HOUR), new Date(NOW));
    expect(rollups.reduce((a, r) => a + r.count, 0)).toBe(rows.length - 25);

    const [row] = await storage.checkResults.aggregate(ACC, query);
    expect(row!.approximate).toBe(true);
    expect(row!.count).toBe(rows.length);
    expect(row!.failures).toBe(before!.failures);
    const values = exact(START, NOW);
    within(row!.values.p95, percentileCont(values, 0.95)!, 0.02);
    within(row!.values.p99, percentileCont(values, 0.99)!, 0.02);
    within(row!.values.dns_p95, percentileCont(exact(START, NOW, (r) => r.phases.dns!), 0.95)!, 0.02);
    within(row!.values.avg, before!.values.avg!, 1e-9);
  });

  it('merges rolled-up hours with the raw hour under way, per bucket and location', async () => {
    const from = NOW - 30 * HOUR;
    const [whole] = await storage.checkResults.aggregate(ACC, { checkIds: ['check-30d'], from: new Date(from), to: new Date(NOW), measures: MEASURES });
    expect(whole!.approximate).toBe(true);
    expect(whole!.count).toBe(30 * 60);
    within(whole!.values.p95, percentileCont(exact(from, NOW), 0.95)!, 0.02);
    const hourly = await storage.checkResults.aggregate(ACC, {
      checkIds: ['check-30d'], from: new Date(from), to: new Date(NOW), bucketMs: HOUR, groupBy: 'runLocation', measures: [{ name: 'max', field: 'responseTime', fn: 'max' }],
    });
    // Buckets start at `from` (25 minutes into an hour), so each cuts two hours apart: all of it is read raw, exactly.
    expect(hourly.every((r) => r.approximate === undefined)).toBe(true);
    const current = hourly.filter((r) => r.bucketStart === new Date(NOW - HOUR).toISOString());
    const locations = new Map(current.map((r) => [r.group, r.count]));
    const raw = rows.filter((r) => Date.parse(r.startedAt) >= NOW - HOUR);
    expect(locations.get('eu-west-1')).toBe(raw.filter((r) => r.runLocation === 'eu-west-1').length);
    expect(hourly.reduce((a, r) => a + r.count, 0)).toBe(30 * 60);
    // Hour-aligned buckets over closed hours come from roll-ups; the hour under way from raw results.
    const aligned = await storage.checkResults.aggregate(ACC, {
      checkIds: ['check-30d'], from: new Date(NOW - 25 * MIN - 30 * HOUR), to: new Date(NOW), bucketMs: HOUR, measures: [{ name: 'max', field: 'responseTime', fn: 'max' }],
    });
    expect(aligned).toHaveLength(31);
    expect(aligned.slice(0, 30).every((r) => r.approximate === true && r.count === 60)).toBe(true);
    expect(aligned[30]).toMatchObject({ bucketStart: new Date(NOW - 25 * MIN).toISOString(), count: 25 });
    expect(aligned[30]!.approximate).toBeUndefined();
    expect(aligned[29]!.values.max).toBe(Math.max(...exact(NOW - 25 * MIN - HOUR, NOW - 25 * MIN)));
  });

  it('answers a day whose raw results are all kept exactly, and status filters and attempts from raw results', async () => {
    const [day] = await storage.checkResults.aggregate(ACC, { checkIds: ['check-30d'], from: new Date(NOW - DAY), to: new Date(NOW), measures: MEASURES });
    expect(day!.approximate).toBeUndefined();
    expect(day!.values.p95).toBeCloseTo(percentileCont(exact(NOW - DAY, NOW), 0.95)!, 6);
    const [failed] = await storage.checkResults.aggregate(ACC, { checkIds: ['check-30d'], from: new Date(START), to: new Date(NOW), filterByStatus: ['failure'], measures: MEASURES });
    expect(failed!.approximate).toBeUndefined();
  });

  it('reads a roll-up made before sketches were kept by its stored percentiles, flagged approximate', async () => {
    const hour = Math.floor(START / HOUR) * HOUR - 10 * DAY;
    await storage.knex('vigil_check_result_rollups').insert({
      account_id: ACC, check_id: 'check-30d', hour_ms: hour, run_location: 'eu-west-1', count: 60, failures: 6,
      sum: 6000, sum_sq: 600_000, min: 50, max: 900, p50: 100, p90: 300, p95: 500, p99: 800,
    });
    const [row] = await storage.checkResults.aggregate(ACC, {
      checkIds: ['check-30d'], from: new Date(hour), to: new Date(hour + 2 * DAY), measures: [...MEASURES, { name: 'retries', field: 'attempts', fn: 'sum' }],
    });
    expect(row).toMatchObject({ count: 60, failures: 6, approximate: true, values: { p95: 500, p99: 800, avg: 100, dns_p95: null, retries: 60 } });
    // Merged with hours that have sketches: weighted by count.
    const to = Math.floor(START / HOUR) * HOUR + 2 * HOUR;
    const [both] = await storage.checkResults.aggregate(ACC, { checkIds: ['check-30d'], from: new Date(hour), to: new Date(to), measures: MEASURES });
    const later = exact(START, to);
    expect(both!.count).toBe(60 + later.length);
    within(both!.values.p95, (500 * 60 + percentileCont(later, 0.95)! * later.length) / (60 + later.length), 0.02);
    await storage.knex('vigil_check_result_rollups').where({ account_id: ACC, hour_ms: hour }).delete();
  });

  it('reads a roll-up whose stats were stored as JSON (before binary stats), and a late result turns it binary', async () => {
    const hour = Math.floor(START / HOUR) * HOUR - 20 * DAY;
    const rand = random(11);
    const values = Array.from({ length: 60 }, () => skewed(rand));
    const json = { responseTime: toFieldStats(fieldStats(values)), dns: toFieldStats(fieldStats(values.map((v) => v / 10))) };
    await storage.knex('vigil_check_result_rollups').insert({
      account_id: ACC, check_id: 'check-30d', hour_ms: hour, run_location: 'eu-west-1', count: 60, failures: 0, pruned: true,
      sum: 1, sum_sq: 1, min: 1, max: 1, p50: 1, p90: 1, p95: 1, p99: 1, sketches: JSON.stringify(json),
    });
    const range = { checkIds: ['check-30d'], from: new Date(hour), to: new Date(hour + 2 * HOUR), measures: MEASURES };
    const [row] = await storage.checkResults.aggregate(ACC, range);
    expect(row).toMatchObject({ count: 60, approximate: true });
    within(row!.values.p95, percentileCont([...values].sort((a, b) => a - b), 0.95)!, 0.02);
    within(row!.values.dns_p95, percentileCont(values.map((v) => v / 10).sort((a, b) => a - b), 0.95)!, 0.02);
    // A late result of that hour: retention merges it in, and the roll-up is stored in binary from then on.
    await storage.checkResults.insertMany(ACC, [checkResultFixture('check-30d', { startedAt: new Date(hour + 5 * MIN).toISOString(), responseTime: 5000, runLocation: 'eu-west-1', phases: { dns: 500, total: 5000 } })]);
    for (;;) if ((await storage.checkResults.prune(ACC, new Date(hour + HOUR), 20_000)).done) break;
    const [stored] = await storage.knex('vigil_check_result_rollups').where({ account_id: ACC, hour_ms: hour });
    expect(stored).toMatchObject({ count: 61, sketches: null, p95: null });
    expect(stored.stats).toBeInstanceOf(Buffer);
    const [merged] = await storage.checkResults.aggregate(ACC, { ...range, measures: [...MEASURES, { name: 'max', field: 'dns', fn: 'max' }] });
    expect(merged).toMatchObject({ count: 61, values: { max: 500 } });
    within(merged!.values.p99, percentileCont([...values, 5000].sort((a, b) => a - b), 0.99)!, 0.02);
    await storage.knex('vigil_check_result_rollups').where({ account_id: ACC, hour_ms: hour }).delete();
  });

  it('keeps answering from roll-ups once retention deleted the raw results, over long and short ranges', async () => {
    const cut = Math.floor((START + 20 * DAY) / HOUR) * HOUR;
    // From the start of the first hour: part of an hour whose raw results are gone cannot be answered.
    const whole = { checkIds: ['check-30d'], from: new Date(Math.floor(START / HOUR) * HOUR), to: new Date(NOW), measures: MEASURES };
    const [long] = await storage.checkResults.aggregate(ACC, whole);
    const [shortBefore] = await storage.checkResults.aggregate(ACC, { checkIds: ['check-30d'], from: new Date(cut - 12 * HOUR), to: new Date(cut + 12 * HOUR), measures: MEASURES });
    expect(shortBefore!.approximate).toBeUndefined();
    for (;;) if ((await storage.checkResults.prune(ACC, new Date(cut), 20_000)).done) break;
    expect((await storage.checkResults.listByCheck(ACC, 'check-30d', { limit: 1, offset: 0, to: new Date(cut) })).total).toBe(0);
    const [after] = await storage.checkResults.aggregate(ACC, whole);
    // Retention recomputed the hours it deleted from their raw results: the same answer, nothing counted twice.
    expect(after).toMatchObject({ count: long!.count, failures: long!.failures, approximate: true });
    for (const m of MEASURES) within(after!.values[m.name], long!.values[m.name]!, 1e-9);
    const [short] = await storage.checkResults.aggregate(ACC, { checkIds: ['check-30d'], from: new Date(cut - 12 * HOUR), to: new Date(cut + 12 * HOUR), measures: MEASURES });
    expect(short).toMatchObject({ count: 24 * 60, approximate: true });
    within(short!.values.p99, percentileCont(exact(cut - 12 * HOUR, cut + 12 * HOUR), 0.99)!, 0.02);
  });
});
