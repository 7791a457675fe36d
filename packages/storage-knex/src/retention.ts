import { percentileCont, type PruneOutcome } from '@vigil/core';
import type { Knex } from 'knex';
import type { TableContext } from './table.js';

const HOUR = 3_600_000;

export interface HourlyRollup {
  accountId: string;
  checkId: string;
  hour: string;
  runLocation: string;
  count: number;
  failures: number;
  sum: number;
  sumSq: number;
  min: number;
  max: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
}

interface Acc {
  account_id: string;
  check_id: string;
  hour_ms: number;
  run_location: string;
  values: number[];
  failures: number;
}

/**
 * Rolls FINAL results that started before `before` up into hourly rows (count, failures, sum,
 * sum of squares, min, max and response-time percentiles), then deletes those raw results, in one
 * transaction. Running it again over hours that already have a roll-up merges into them (the
 * percentiles then weighted by count).
 */
export async function rollUpAndPrune(ctx: TableContext, before: Date): Promise<{ rolledUp: number; deleted: number }> {
  const upTo = Math.floor(before.getTime() / HOUR) * HOUR;
  return ctx.knex.transaction((trx) => rollUpBefore(trx, ctx, null, upTo));
}

/**
 * The same for one account, a batch at a time (the engine's retention job): about `limit` results,
 * oldest first, cut at a whole hour so that no hour is rolled up in two pieces (an hour that alone
 * holds more than `limit` goes whole). The results table's index on started_ms finds the batch.
 */
export async function pruneAccount(ctx: TableContext, accountId: string, before: Date, limit: number): Promise<PruneOutcome> {
  const results = `${ctx.prefix}check_results`;
  return ctx.knex.transaction(async (trx) => {
    let upTo = Math.floor(before.getTime() / HOUR) * HOUR;
    let done = true;
    const due = () => trx(results).where('account_id', accountId).where('started_ms', '<', upTo);
    const past = await due().select('started_ms').orderBy('started_ms').offset(Math.max(0, Math.floor(limit))).limit(1);
    if (past.length > 0) {
      const [{ first }] = (await due().min({ first: 'started_ms' })) as [{ first: string | number }];
      const firstHour = Math.floor(Number(first) / HOUR) * HOUR;
      const pastHour = Math.floor(Number(past[0].started_ms) / HOUR) * HOUR;
      const cut = pastHour > firstHour ? pastHour : firstHour + HOUR;
      if (cut < upTo) {
        upTo = cut;
        done = false;
      }
    }
    return { ...(await rollUpBefore(trx, ctx, accountId, upTo)), done };
  });
}

async function rollUpBefore(trx: Knex.Transaction, ctx: TableContext, accountId: string | null, limit: number): Promise<{ rolledUp: number; deleted: number }> {
  const results = `${ctx.prefix}check_results`;
  const rollups = `${ctx.prefix}check_result_rollups`;
  const scoped = (q: Knex.QueryBuilder) => (accountId === null ? q : q.where('account_id', accountId));
  const buckets = new Map<string, Acc>();
  // Stream in pages so a large backlog does not sit in memory at once.
  let lastSeq = 0;
  for (;;) {
    const rows = await scoped(trx(results))
      .select('seq', 'account_id', 'check_id', 'started_ms', 'run_location', 'response_time', 'failed')
      .where('started_ms', '<', limit).where('result_type', 'FINAL').where('seq', '>', lastSeq)
      .orderBy('seq').limit(5000);
    if (rows.length === 0) break;
    for (const r of rows) {
      lastSeq = Number(r.seq);
      const hour = Math.floor(Number(r.started_ms) / HOUR) * HOUR;
      const key = bucketKey(r.account_id, r.check_id, hour, r.run_location);
      let acc = buckets.get(key);
      if (!acc) buckets.set(key, (acc = { account_id: r.account_id, check_id: r.check_id, hour_ms: hour, run_location: r.run_location, values: [], failures: 0 }));
      acc.values.push(Number(r.response_time));
      if (r.failed === true || r.failed === 1) acc.failures++;
    }
  }
  await mergeRollups(trx, rollups, buckets);
  const deleted = Number(await scoped(trx(results)).where('started_ms', '<', limit).delete());
  return { rolledUp: buckets.size, deleted };
}

type Summary = Record<'count' | 'failures' | 'sum' | 'sum_sq' | 'min' | 'max' | 'p50' | 'p90' | 'p95' | 'p99', number>;

function summarize(acc: Acc): Summary {
  const sorted = [...acc.values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    failures: acc.failures,
    sum: sorted.reduce((a, b) => a + b, 0),
    sum_sq: sorted.reduce((a, b) => a + b * b, 0),
    min: sorted[0]!,
    max: sorted.at(-1)!,
    p50: percentileCont(sorted, 0.5)!,
    p90: percentileCont(sorted, 0.9)!,
    p95: percentileCont(sorted, 0.95)!,
    p99: percentileCont(sorted, 0.99)!,
  };
}

const bucketKey = (account: unknown, check: unknown, hour: unknown, location: unknown) => JSON.stringify([String(account), String(check), Number(hour), String(location)]);

/**
 * Writes the buckets: new hours in multi-row inserts, hours that already have a roll-up merged
 * into it. The roll-ups already there are read per account and a few hundred checks at a time,
 * over the batch's hours, along the primary key.
 */
async function mergeRollups(trx: Knex.Transaction, table: string, buckets: Map<string, Acc>): Promise<void> {
  if (buckets.size === 0) return;
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
  const inserts: Record<string, unknown>[] = [];
  for (const [key, acc] of buckets) {
    const fresh = summarize(acc);
    const where = { account_id: acc.account_id, check_id: acc.check_id, hour_ms: acc.hour_ms, run_location: acc.run_location };
    const old = existing.get(key);
    if (!old) {
      inserts.push({ ...where, ...fresh });
      continue;
    }
    const n = Number(old.count) + fresh.count;
    const weigh = (a: unknown, b: number) => (Number(a) * Number(old.count) + b * fresh.count) / n;
    await trx(table).where(where).update({
      count: n,
      failures: Number(old.failures) + fresh.failures,
      sum: Number(old.sum) + fresh.sum,
      sum_sq: Number(old.sum_sq) + fresh.sum_sq,
      min: Math.min(Number(old.min), fresh.min),
      max: Math.max(Number(old.max), fresh.max),
      p50: weigh(old.p50, fresh.p50),
      p90: weigh(old.p90, fresh.p90),
      p95: weigh(old.p95, fresh.p95),
      p99: weigh(old.p99, fresh.p99),
    });
  }
  // 14 columns a row: 200 rows a statement stay well under SQLite's limit of bound variables.
  for (let i = 0; i < inserts.length; i += 200) await trx(table).insert(inserts.slice(i, i + 200));
}

/** Hourly roll-ups of a check in [from, to), oldest first. */
export async function listRollups(ctx: TableContext, accountId: string, checkId: string, from: Date, to: Date): Promise<HourlyRollup[]> {
  const rows = await ctx.reader(`${ctx.prefix}check_result_rollups`)
    .where({ account_id: accountId, check_id: checkId })
    .where('hour_ms', '>=', from.getTime()).where('hour_ms', '<', to.getTime())
    .orderBy([{ column: 'hour_ms' }, { column: 'run_location' }]);
  return rows.map((r: Record<string, unknown>) => ({
    accountId: String(r.account_id), checkId: String(r.check_id), hour: new Date(Number(r.hour_ms)).toISOString(),
    runLocation: String(r.run_location), count: Number(r.count), failures: Number(r.failures), sum: Number(r.sum),
    sumSq: Number(r.sum_sq), min: Number(r.min), max: Number(r.max), p50: Number(r.p50), p90: Number(r.p90), p95: Number(r.p95), p99: Number(r.p99),
  }));
}
