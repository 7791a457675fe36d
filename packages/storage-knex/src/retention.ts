import { percentileCont } from '@vigil/core';
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
  const results = `${ctx.prefix}check_results`;
  const rollups = `${ctx.prefix}check_result_rollups`;
  const limit = Math.floor(before.getTime() / HOUR) * HOUR;
  return ctx.knex.transaction(async (trx) => {
    const buckets = new Map<string, Acc>();
    // Stream in pages so a large backlog does not sit in memory at once.
    let lastSeq = 0;
    for (;;) {
      const rows = await trx(results)
        .select('seq', 'account_id', 'check_id', 'started_ms', 'run_location', 'response_time', 'failed')
        .where('started_ms', '<', limit).where('result_type', 'FINAL').where('seq', '>', lastSeq)
        .orderBy('seq').limit(5000);
      if (rows.length === 0) break;
      for (const r of rows) {
        lastSeq = Number(r.seq);
        const hour = Math.floor(Number(r.started_ms) / HOUR) * HOUR;
        const key = JSON.stringify([r.account_id, r.check_id, hour, r.run_location]);
        let acc = buckets.get(key);
        if (!acc) buckets.set(key, (acc = { account_id: r.account_id, check_id: r.check_id, hour_ms: hour, run_location: r.run_location, values: [], failures: 0 }));
        acc.values.push(Number(r.response_time));
        if (r.failed === true || r.failed === 1) acc.failures++;
      }
    }
    for (const acc of buckets.values()) await mergeRollup(trx, rollups, acc);
    const deleted = Number(await trx(results).where('started_ms', '<', limit).delete());
    return { rolledUp: buckets.size, deleted };
  });
}

async function mergeRollup(trx: Knex.Transaction, table: string, acc: Acc): Promise<void> {
  const sorted = [...acc.values].sort((a, b) => a - b);
  const fresh = {
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
  const key = { account_id: acc.account_id, check_id: acc.check_id, hour_ms: acc.hour_ms, run_location: acc.run_location };
  const old = await trx(table).where(key).first();
  if (!old) {
    await trx(table).insert({ ...key, ...fresh });
    return;
  }
  const n = Number(old.count) + fresh.count;
  const weigh = (a: number, b: number) => (Number(a) * Number(old.count) + b * fresh.count) / n;
  await trx(table).where(key).update({
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

/** Hourly roll-ups of a check in [from, to), oldest first. */
export async function listRollups(ctx: TableContext, accountId: string, checkId: string, from: Date, to: Date): Promise<HourlyRollup[]> {
  const rows = await ctx.knex(`${ctx.prefix}check_result_rollups`)
    .where({ account_id: accountId, check_id: checkId })
    .where('hour_ms', '>=', from.getTime()).where('hour_ms', '<', to.getTime())
    .orderBy([{ column: 'hour_ms' }, { column: 'run_location' }]);
  return rows.map((r: Record<string, unknown>) => ({
    accountId: String(r.account_id), checkId: String(r.check_id), hour: new Date(Number(r.hour_ms)).toISOString(),
    runLocation: String(r.run_location), count: Number(r.count), failures: Number(r.failures), sum: Number(r.sum),
    sumSq: Number(r.sum_sq), min: Number(r.min), max: Number(r.max), p50: Number(r.p50), p90: Number(r.p90), p95: Number(r.p95), p99: Number(r.p99),
  }));
}
