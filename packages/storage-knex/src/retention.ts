import { percentileCont, type PruneOutcome } from '@vigil/core';
import type { Knex } from 'knex';
import { dropDays } from './compact/drop.js';
import { droppedBefore } from './compact/marks.js';
import { deleteNarrowBefore } from './compact/prune.js';
import { LAYOUTS, unpackSlot } from './compact/layout.js';
import { fullRows, narrowRows, type Scope } from './compact/union.js';
import { readRawResults } from './raw-results.js';
import { reclaimSqliteSpace } from './sqlite-space.js';
import { encodeStats, rowStats } from './rollup-codec.js';
import { addBins, fieldStats, interpolated, mergeStats, newSketch, toFieldStats, type FieldStats, type Stats } from './sketch.js';
import type { TableContext } from './table.js';

const HOUR = 3_600_000;
/** Hours the roll-up job recomputes behind the newest roll-up, for results that were stored late. */
const LOOKBACK = 2 * HOUR;
const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;

export interface HourlyRollup {
  accountId: string;
  checkId: string;
  hour: string;
  runLocation: string;
  count: number;
  failures: number;
  /** The response times' sum, sum of squares, least and greatest. */
  sum: number;
  sumSq: number;
  min: number;
  max: number;
  /** Percentiles of the response times, read from the hour's sketch (within 1% of a value at that rank). */
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  /** Whether the hour's raw results are gone (retention deleted them). */
  pruned: boolean;
  /** Each field's sums and DDSketch; null on a roll-up made before sketches were kept. */
  sketches: Record<string, FieldStats> | null;
}

interface Acc {
  account_id: string;
  check_id: string;
  hour_ms: number;
  run_location: string;
  failures: number;
  fields: Map<string, number[]>;
}

/** `roll`: an hour whose raw results are still there (recomputed); `prune`: retention, which deletes them next. */
type Mode = 'roll' | 'prune';

/**
 * Rolls FINAL results that started before `before` up into hourly rows, then deletes those raw
 * results, in one transaction (every account). An hour rolled up while its raw results were
 * there is recomputed; one whose raw results were already deleted takes late results in.
 */
export async function rollUpAndPrune(ctx: TableContext, before: Date): Promise<{ rolledUp: number; deleted: number }> {
  const upTo = floorHour(before.getTime());
  return ctx.knex.transaction(async (trx) => {
    const rolledUp = await rollHours(trx, ctx, null, null, upTo, 'prune');
    const deleted = Number(await trx(`${ctx.prefix}check_results`).where('started_ms', '<', upTo).delete());
    return { rolledUp, deleted: deleted + (await deleteNarrowBefore(trx, ctx, null, upTo)) };
  });
}

/**
 * Where a batch of about `limit` due results ends: oldest first, cut at a whole hour so that no
 * hour goes in two pieces (an hour that alone holds more than `limit` goes whole). Each kind of
 * row is read along its own index (full rows by start, narrow rows by slot), and the batch ends
 * at the earliest of their `limit`-th rows, so no query sorts every due result of both kinds.
 */
async function batchEnd(trx: Knex.Transaction, ctx: TableContext, scope: Scope, upTo: number, limit: number): Promise<{ upTo: number; done: boolean }> {
  const skip = Math.max(0, Math.floor(limit));
  const past: number[] = [];
  const firsts: number[] = [];
  const full = () => fullRows(trx, ctx, scope);
  const [fullPast] = (await full().select('started_ms').orderBy('started_ms').offset(skip).limit(1)) as { started_ms: string | number }[];
  if (fullPast) past.push(Number(fullPast.started_ms));
  const [{ first }] = (await full().min({ first: 'started_ms' })) as [{ first: string | number | null }];
  if (first !== null) firsts.push(Number(first));
  for (const layout of LAYOUTS) {
    const narrow = () => narrowRows(trx, ctx, layout, scope);
    const [narrowPast] = (await narrow().select('n.slot').orderBy('n.slot').offset(skip).limit(1)) as { slot: string | number }[];
    if (narrowPast) past.push(unpackSlot(Number(narrowPast.slot)).dueMs);
    const [{ slot }] = (await narrow().min({ slot: 'n.slot' })) as [{ slot: string | number | null }];
    if (slot !== null) firsts.push(unpackSlot(Number(slot)).dueMs);
  }
  if (past.length === 0) return { upTo, done: true };
  const firstHour = floorHour(Math.min(...firsts));
  const pastHour = floorHour(Math.min(...past));
  const cut = pastHour > firstHour ? pastHour : firstHour + HOUR;
  return cut < upTo ? { upTo: cut, done: false } : { upTo, done: true };
}

/**
 * Retention of one account, a batch at a time (the engine's retention job): about `limit`
 * results before `before` (rounded down to the hour), oldest first, rolled up and deleted.
 */
export async function pruneAccount(ctx: TableContext, accountId: string, before: Date, limit: number): Promise<PruneOutcome> {
  const results = `${ctx.prefix}check_results`;
  const pruned = await ctx.knex.transaction(async (trx) => {
    const end = floorHour(before.getTime());
    const { upTo, done } = await batchEnd(trx, ctx, { accountId, from: null, to: end, time: 'due' }, end, limit);
    const rolledUp = await rollHours(trx, ctx, accountId, null, upTo, 'prune');
    const deleted = Number(await trx(results).where('account_id', accountId).where('started_ms', '<', upTo).delete());
    return { rolledUp, deleted: deleted + (await deleteNarrowBefore(trx, ctx, accountId, upTo)), done };
  });
  // SQLite: the pages the batch freed go back to the file system (a file with incremental auto-vacuum).
  if (pruned.deleted > 0) await reclaimSqliteSpace(ctx.knex);
  return pruned;
}

/**
 * Rolls an account's closed hours up, keeping their raw results: from `after` (null: two hours
 * behind the account's newest roll-up, or its oldest result when it has none) up to `before`
 * (rounded down to the hour), about `limit` results a call. Each hour is recomputed from its raw
 * results and replaces its roll-up, so rolling an hour up again never counts a result twice.
 */
export async function rollUpAccount(ctx: TableContext, accountId: string, after: Date | null, before: Date, limit: number): Promise<{ rolledUp: number; done: boolean; next: Date }> {
  const rollups = `${ctx.prefix}check_result_rollups`;
  return ctx.knex.transaction(async (trx) => {
    let from: number | null = after === null ? null : floorHour(after.getTime());
    if (from === null) {
      const [{ newest }] = (await trx(rollups).where('account_id', accountId).max({ newest: 'hour_ms' })) as [{ newest: string | number | null }];
      if (newest !== null) from = Number(newest) + HOUR - LOOKBACK;
    }
    const end = floorHour(before.getTime());
    const scope: Scope = { accountId, from, to: end, finalOnly: true, time: 'due' };
    const { upTo, done } = from !== null && from >= end ? { upTo: end, done: true } : await batchEnd(trx, ctx, scope, end, limit);
    const rolledUp = from !== null && from >= upTo ? 0 : await rollHours(trx, ctx, accountId, from, upTo, 'roll');
    return { rolledUp, done, next: new Date(upTo) };
  });
}

/**
 * Retention of every account by whole days (PostgreSQL's day partitions): the days before
 * `before`, rolled up where the roll-up job has not, then dropped.
 */
export const dropDaysBefore = (ctx: TableContext, before: Date) =>
  dropDays(ctx, before, (trx, c, accountId, from, upTo) => rollHours(trx, c, accountId, from, upTo, 'prune'));

/** Rolls the FINAL results in [from, upTo) up by account, check, hour and location; answers how many roll-ups were written. */
async function rollHours(trx: Knex.Transaction, ctx: TableContext, accountId: string | null, from: number | null, upTo: number, mode: Mode): Promise<number> {
  const buckets = new Map<string, Acc>();
  for (const r of await readRawResults(trx, ctx, accountId, [{ from, to: upTo }])) {
    const hour = floorHour(r.startedMs);
    const key = bucketKey(r.accountId, r.checkId, hour, r.runLocation);
    let acc = buckets.get(key);
    if (!acc) buckets.set(key, (acc = { account_id: r.accountId, check_id: r.checkId, hour_ms: hour, run_location: r.runLocation, failures: 0, fields: new Map() }));
    if (r.failed) acc.failures++;
    for (const [field, v] of Object.entries(r.values)) {
      let list = acc.fields.get(field);
      if (!list) acc.fields.set(field, (list = []));
      list.push(v);
    }
  }
  return writeRollups(trx, ctx, buckets, mode);
}

/** An hour of one check and location as the roll-up job found it; `values`: its response times. */
interface Summary {
  count: number;
  failures: number;
  stats: Record<string, Stats>;
  values: number[];
}

/** Columns of roll-ups made before their stats were kept in one binary value; null on the others. */
const LEGACY_COLUMNS = ['sum', 'sum_sq', 'min', 'max', 'p50', 'p90', 'p95', 'p99'] as const;
const NO_LEGACY = Object.fromEntries(LEGACY_COLUMNS.map((c) => [c, null]));

/** Whether a field's values are the response times, one for one (a runner's `total` phase is). */
const sameAs = (a: number[] | undefined, b: number[] | undefined) => !!a && !!b && a.length === b.length && a.every((v, i) => v === b[i]);

function summarize(acc: Acc): Summary {
  // A `total` that is the response time is not kept twice: a reader takes responseTime for it.
  const fields = [...acc.fields].filter(([field, values]) => field !== 'total' || !sameAs(values, acc.fields.get('responseTime')));
  const values = acc.fields.get('responseTime')!;
  return { count: values.length, failures: acc.failures, stats: Object.fromEntries(fields.map(([field, v]) => [field, fieldStats(v)])), values };
}

/** The columns of a roll-up with these stats. */
const columns = (count: number, failures: number, stats: Record<string, Stats>) => ({ count, failures, stats: encodeStats(stats), sketches: null, ...NO_LEGACY });

/** A roll-up's fields with `total` spelled out where it was left out as the response time's. */
const withTotal = (f: Record<string, Stats>) => (f.total || !f.responseTime ? f : { ...f, total: f.responseTime });

/** A late batch of results taken into a roll-up whose own raw results are gone. */
function merge(old: Record<string, unknown>, fresh: Summary): Record<string, unknown> {
  const count = Number(old.count) + fresh.count;
  const failures = Number(old.failures) + fresh.failures;
  const stats = rowStats(old);
  if (stats) {
    const a = withTotal(stats);
    const b = withTotal(fresh.stats);
    return columns(count, failures, Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((f) => [f, mergeStats(a[f], b[f])!])));
  }
  // A roll-up made before sketches were kept stays without one: its percentiles are weighted.
  const oldCount = Number(old.count);
  const weigh = (a: unknown, b: number) => (Number(a) * oldCount + b * fresh.count) / count;
  const sorted = [...fresh.values].sort((a, b) => a - b);
  const rt = fresh.stats.responseTime!;
  return {
    count,
    failures,
    sum: Number(old.sum) + rt.sum,
    sum_sq: Number(old.sum_sq) + fresh.values.reduce((a, v) => a + v * v, 0),
    min: Math.min(Number(old.min), rt.min),
    max: Math.max(Number(old.max), rt.max),
    ...Object.fromEntries((['p50', 'p90', 'p95', 'p99'] as const).map((p) => [p, weigh(old[p], percentileCont(sorted, PERCENTILE[p])!)])),
  };
}

const PERCENTILE = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;

const bucketKey = (account: unknown, check: unknown, hour: unknown, location: unknown) => JSON.stringify([String(account), String(check), Number(hour), String(location)]);
/** Whether a roll-up's hour has lost its raw results: its own flag, or a dropped day (`dropped`: the mark). */
const isPruned = (row: Record<string, unknown>, dropped: number) => row.pruned === true || Number(row.pruned) === 1 || Number(row.hour_ms) < dropped;

/**
 * Writes the buckets: new hours in multi-row inserts; an hour whose roll-up was made while its raw
 * results were there is replaced; one whose raw results are gone takes a late batch in at
 * retention and is left alone by the roll-up job. The roll-ups already there are read per account
 * and a few hundred checks at a time, over the batch's hours, along the primary key.
 */
async function writeRollups(trx: Knex.Transaction, ctx: TableContext, buckets: Map<string, Acc>, mode: Mode): Promise<number> {
  if (buckets.size === 0) return 0;
  const table = `${ctx.prefix}check_result_rollups`;
  const dropped = await droppedBefore(trx, ctx);
  const accs = [...buckets.values()];
  const minHour = Math.min(...accs.map((a) => a.hour_ms));
  const maxHour = Math.max(...accs.map((a) => a.hour_ms));
  const checksByAccount = new Map<string, Set<string>>();
  for (const a of accs) {
    let checks = checksByAccount.get(a.account_id);
    if (!checks) checksByAccount.set(a.account_id, (checks = new Set()));
    checks.add(a.check_id);
  }
  const existing = new Map<string, Record<string, unknown>>();
  for (const [accountId, checks] of checksByAccount) {
    const ids = [...checks];
    for (let i = 0; i < ids.length; i += 200) {
      const rows = await trx(table).where('account_id', accountId).whereIn('check_id', ids.slice(i, i + 200))
        .where('hour_ms', '>=', minHour).where('hour_ms', '<=', maxHour);
      for (const r of rows as Record<string, unknown>[]) existing.set(bucketKey(r.account_id, r.check_id, r.hour_ms, r.run_location), r);
    }
  }
  const pruned = mode === 'prune';
  const inserts: Record<string, unknown>[] = [];
  let written = 0;
  for (const [key, acc] of buckets) {
    const where = { account_id: acc.account_id, check_id: acc.check_id, hour_ms: acc.hour_ms, run_location: acc.run_location };
    const old = existing.get(key);
    if (old && isPruned(old, dropped) && !pruned) continue;
    written++;
    const fresh = summarize(acc);
    const row = old && isPruned(old, dropped) ? merge(old, fresh) : columns(fresh.count, fresh.failures, fresh.stats);
    if (!old) inserts.push({ ...where, ...row, pruned });
    else await trx(table).where(where).update({ ...row, pruned });
  }
  // 17 columns a row: 200 rows a statement stay well under SQLite's limit of bound variables.
  for (let i = 0; i < inserts.length; i += 200) await trx(table).insert(inserts.slice(i, i + 200));
  return written;
}

/** Hourly roll-ups of a check in [from, to), oldest first. */
export async function listRollups(ctx: TableContext, accountId: string, checkId: string, from: Date, to: Date): Promise<HourlyRollup[]> {
  const rows = await ctx.reader(`${ctx.prefix}check_result_rollups`)
    .where({ account_id: accountId, check_id: checkId })
    .where('hour_ms', '>=', from.getTime()).where('hour_ms', '<', to.getTime())
    .orderBy([{ column: 'hour_ms' }, { column: 'run_location' }]);
  const dropped = await droppedBefore(ctx.reader, ctx);
  return rows.map((r: Record<string, unknown>): HourlyRollup => {
    const stats = rowStats(r);
    const base = {
      accountId: String(r.account_id), checkId: String(r.check_id), hour: new Date(Number(r.hour_ms)).toISOString(),
      runLocation: String(r.run_location), count: Number(r.count), failures: Number(r.failures), pruned: isPruned(r, dropped),
      sketches: stats && Object.fromEntries(Object.entries(stats).map(([f, s]) => [f, toFieldStats(s)])),
    };
    const rt = stats?.responseTime;
    if (!rt) {
      return { ...base, sum: Number(r.sum), sumSq: Number(r.sum_sq), min: Number(r.min), max: Number(r.max), p50: Number(r.p50), p90: Number(r.p90), p95: Number(r.p95), p99: Number(r.p99) };
    }
    const sketch = addBins(newSketch(), rt.bins);
    const p = (q: number) => Math.min(rt.max, Math.max(rt.min, interpolated(sketch, q)));
    return { ...base, sum: rt.sum, sumSq: rt.m2 + (rt.sum * rt.sum) / rt.n, min: rt.min, max: rt.max, p50: p(0.5), p90: p(0.9), p95: p(0.95), p99: p(0.99) };
  });
}
