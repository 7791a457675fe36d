/*
 * PostgreSQL keeps the narrow rows and their detail documents in one range partition per day
 * (UTC, by due time). A writer makes the day it writes to when this process has not seen it yet;
 * retention makes the coming week's ahead and drops whole days, which costs a catalog change
 * instead of a DELETE of every row and the VACUUM after it.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { EPOCH_MS, isPostgres, LAYOUTS, slotAt, SLOTS_PER_MS, tables } from './layout.js';

export const DAY_MS = 86_400_000;
const AHEAD_DAYS = 7;

/** Per store: the days made, and those being made (the writers of such a day share its creation). */
const made = new WeakMap<object, { done: Set<number>; making: Map<number, Promise<void>> }>();

function madeOf(ctx: TableContext) {
  let m = made.get(ctx);
  if (!m) made.set(ctx, (m = { done: new Set(), making: new Map() }));
  return m;
}

/** The partitioned tables: each type's narrow table and the detail documents. */
export const partitionedTables = (ctx: TableContext) => [...LAYOUTS.map((l) => tables(ctx).runs(l)), tables(ctx).details];

/** A day partition's name, kept within PostgreSQL's 63 characters whatever the table prefix. */
export function partitionName(table: string, dayMs: number): string {
  const full = `${table}_${new Date(dayMs).toISOString().slice(0, 10).replace(/-/g, '')}`;
  return full.length <= 63 ? full : `${full.slice(0, 41)}_${createHash('sha256').update(full).digest('hex').slice(0, 12)}_${full.slice(-8)}`;
}

/** The day partition a due time falls in (times before the slots' epoch go to its first day). */
const dayOf = (ms: number) => Math.max(Math.floor(ms / DAY_MS) * DAY_MS, EPOCH_MS);

/**
 * Makes the day partitions of these due times where they are missing (PostgreSQL; elsewhere
 * nothing). Writers of a day this process has not seen yet wait on one creation, not one each.
 */
export async function ensurePartitions(ctx: TableContext, dueTimes: Iterable<number>): Promise<void> {
  if (!isPostgres(ctx.knex)) return;
  const { done, making } = madeOf(ctx);
  const days = new Set<number>();
  for (const ms of dueTimes) {
    const day = dayOf(ms);
    if (!done.has(day)) days.add(day);
  }
  for (const day of [...days].sort((a, b) => a - b)) {
    // Made meanwhile, by a writer whose creation this one waited on for an earlier day.
    if (done.has(day)) continue;
    let creation = making.get(day);
    if (!creation) {
      creation = makeDay(ctx, day).then(() => { done.add(day); }).finally(() => making.delete(day));
      making.set(day, creation);
    }
    // A creation that failed fails its writers; the next writer of that day tries again.
    await creation;
  }
}

/** PostgreSQL's answer to a row whose day has no partition. */
const noPartition = (err: unknown) =>
  (err as { code?: unknown } | null)?.code === '23514' && /no partition of relation/.test(String((err as Error).message));

/**
 * Runs a write of rows due at these times once their days' partitions are made. A day this
 * process made may have been dropped since by another process's retention (or by its own while
 * the write waited on the drop's lock): PostgreSQL then finds no partition for the row, and the
 * write, rolled back, runs once more after its days are made again.
 */
export async function withPartitions<T>(ctx: TableContext, dueTimes: readonly number[], write: () => Promise<T>): Promise<T> {
  await ensurePartitions(ctx, dueTimes);
  try {
    return await write();
  } catch (err) {
    if (!noPartition(err)) throw err;
    forgetDays(ctx, dueTimes);
    await ensurePartitions(ctx, dueTimes);
    return write();
  }
}

/** Forgets that this process made the days of these times (they were dropped). */
export function forgetDays(ctx: TableContext, times: Iterable<number>): void {
  const { done } = madeOf(ctx);
  for (const ms of times) done.delete(dayOf(ms));
}

async function makeDay(ctx: TableContext, day: number): Promise<void> {
  for (const table of partitionedTables(ctx)) {
    try {
      await ctx.knex.raw(`create table if not exists ?? partition of ?? for values from (${slotAt(day)}) to (${slotAt(day + DAY_MS)})`, [partitionName(table, day), table]);
    } catch (err) {
      // Another process made it at the same moment: what counts is that it is there now.
      const exists = await ctx.knex.raw('select to_regclass(?) as t', [partitionName(table, day)]);
      if (!exists.rows[0]?.t) throw err;
    }
  }
}

/** Makes today's partitions and the coming week's. */
export const makeAhead = (ctx: TableContext, nowMs: number) =>
  ensurePartitions(ctx, Array.from({ length: AHEAD_DAYS + 1 }, (_, i) => nowMs + i * DAY_MS));

/** The days (start ms) that have partitions, oldest first. */
export async function partitionDays(db: Knex | Knex.Transaction, ctx: TableContext): Promise<number[]> {
  const parents = partitionedTables(ctx);
  const rows = (await db.raw(
    `select pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = ?::regclass`,
    [parents[0]!],
  )).rows as { bound: string }[];
  const days: number[] = [];
  for (const { bound } of rows) {
    const m = /FROM \('?(-?\d+)'?\)/.exec(bound);
    if (m) days.push(Number(BigInt(m[1]!) / BigInt(SLOTS_PER_MS)) + EPOCH_MS);
  }
  return days.sort((a, b) => a - b);
}

/**
 * Drops a day's partitions of every partitioned table (inside the caller's transaction; the
 * caller forgets the day once it has committed, with forgetDays).
 */
export async function dropDay(trx: Knex.Transaction, ctx: TableContext, dayMs: number): Promise<number> {
  const names = partitionedTables(ctx).map((table) => partitionName(table, dayMs));
  // The day's partitions that exist, with the planner's row count (kept by autovacuum) of those
  // holding runs: counting the rows would read them all.
  const found = (await trx.raw(
    'select c.relname as name, greatest(c.reltuples, 0)::int8 as n from pg_class c where c.oid in (select to_regclass(x) from unnest(?::text[]) as x)',
    [names],
  )).rows as { name: string; n: string | number }[];
  const details = partitionName(tables(ctx).details, dayMs);
  const rows = found.reduce((a, f) => a + (f.name === details ? 0 : Number(f.n)), 0);
  // One statement for the day's partitions: one catalog pass and one lock round.
  if (found.length > 0) await trx.raw(`drop table ${found.map(() => '??').join(', ')}`, found.map((f) => f.name));
  return rows;
}

/**
 * Seals the closed days (ended at least an hour before `nowMs`): each partition's primary-key
 * index is rebuilt full (fillfactor 100), without blocking writes. Rows arrive in due-time order
 * across all checks, which leaves a B-tree about two-thirds full; sealed, a passing TCP run takes
 * about 97 bytes instead of 110. A sealed index keeps fillfactor 100, so a day is sealed once.
 */
export async function sealClosedDays(ctx: TableContext, nowMs: number): Promise<number> {
  if (!isPostgres(ctx.knex)) return 0;
  let sealed = 0;
  for (const day of await partitionDays(ctx.knex, ctx)) {
    if (day + DAY_MS + 3_600_000 > nowMs) break;
    for (const table of partitionedTables(ctx)) {
      const rows = (await ctx.knex.raw(
        `select c.relname, coalesce(array_to_string(c.reloptions, ','), '') as opts from pg_index i join pg_class c on c.oid = i.indexrelid
         where i.indrelid = to_regclass(?)`, [partitionName(table, day)],
      )).rows as { relname: string; opts: string }[];
      for (const { relname, opts } of rows) {
        if (opts.includes('fillfactor=100')) continue;
        await ctx.knex.raw('alter index ?? set (fillfactor = 100)', [relname]);
        await ctx.knex.raw('reindex index concurrently ??', [relname]);
        sealed++;
      }
    }
  }
  return sealed;
}
