/*
 * Retention by whole days (PostgreSQL): a day whose every result is past every account's
 * retention loses its partitions with one DROP each. Its hours are rolled up first: an account
 * whose roll-up job has passed the day already has them (they count as pruned past the day's mark), one that
 * lags behind (it has raw results after its newest roll-up) is rolled up from the raw rows now. The day's full rows go with it, so that no
 * hour is left half pruned.
 */
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { LAYOUTS, tables } from './layout.js';
import { droppedBefore, markDropped } from './marks.js';
import { DAY_MS, dropDay, forgetDays, partitionDays } from './partitions.js';
import { fullRows, narrowRows } from './union.js';

const HOUR = 3_600_000;

/** Rolls up (retention's way: merged into an hour whose raw results are gone) an account's, or every account's, results of [from, upTo). */
type RollHours = (trx: Knex.Transaction, ctx: TableContext, accountId: string | null, from: number | null, upTo: number) => Promise<number>;

/** Whether an account has a FINAL result (narrow: due; full: started) in [from, to). */
async function hasResults(trx: Knex.Transaction, ctx: TableContext, accountId: string, from: number, to: number): Promise<boolean> {
  const scope = { accountId, from, to, finalOnly: true, time: 'due' as const };
  for (const layout of LAYOUTS) if ((await narrowRows(trx, ctx, layout, scope).first('n.slot')) !== undefined) return true;
  return (await fullRows(trx, ctx, scope).first('seq')) !== undefined;
}

async function dropOneDay(trx: Knex.Transaction, ctx: TableContext, day: number, rollHours: RollHours): Promise<{ rolledUp: number; deleted: number }> {
  const results = `${ctx.prefix}check_results`;
  const rollups = `${ctx.prefix}check_result_rollups`;
  const end = day + DAY_MS;
  let rolledUp = 0;
  let full = 0;
  // Full rows older than the day (a backlog retention has not reached yet) go first, rolled up,
  // so that no hour the mark passes keeps raw results.
  if ((await trx(results).where('started_ms', '<', day).first('seq')) !== undefined) {
    rolledUp += await rollHours(trx, ctx, null, null, day);
    full += Number(await trx(results).where('started_ms', '<', day).delete());
  }
  // A day dropped before and made again by a late write: its rows are in no roll-up yet.
  if (end <= (await droppedBefore(trx, ctx))) {
    rolledUp += await rollHours(trx, ctx, null, day, end);
    full += Number(await trx(results).where('started_ms', '>=', day).where('started_ms', '<', end).delete());
    return { rolledUp, deleted: full + (await dropDay(trx, ctx, day)) };
  }
  const accounts = new Set<string>();
  for (const r of (await trx(tables(ctx).keys).distinct('account_id')) as { account_id: string }[]) accounts.add(r.account_id);
  for (const r of (await trx(results).distinct('account_id').where('started_ms', '>=', day).where('started_ms', '<', end)) as { account_id: string }[]) accounts.add(r.account_id);
  for (const accountId of accounts) {
    const [{ newest }] = (await trx(rollups).where('account_id', accountId).max({ newest: 'hour_ms' })) as [{ newest: string | number | null }];
    // Settled: the roll-up job has passed every raw result of the day (none after its newest hour).
    const after = newest === null ? day : Math.max(day, Number(newest) + HOUR);
    if (after < end && (await hasResults(trx, ctx, accountId, after, end))) rolledUp += await rollHours(trx, ctx, accountId, day, end);
  }
  full += Number(await trx(results).where('started_ms', '>=', day).where('started_ms', '<', end).delete());
  const dropped = await dropDay(trx, ctx, day);
  // The settled accounts' roll-ups of the day count as pruned from now on, without a write each.
  await markDropped(trx, ctx, end);
  return { rolledUp, deleted: full + dropped };
}

/** Drops the whole days before `before` (rounded down to a day), oldest first. */
export async function dropDays(ctx: TableContext, before: Date, rollHours: RollHours): Promise<{ rolledUp: number; deleted: number }> {
  const cut = Math.floor(before.getTime() / DAY_MS) * DAY_MS;
  const out = { rolledUp: 0, deleted: 0 };
  for (const day of await partitionDays(ctx.knex, ctx)) {
    if (day + DAY_MS > cut) break;
    const step = await ctx.knex.transaction((trx) => dropOneDay(trx, ctx, day, rollHours));
    // Only now: a write of the day before the commit would have found it made.
    forgetDays(ctx, [day]);
    out.rolledUp += step.rolledUp;
    out.deleted += step.deleted;
  }
  return out;
}
