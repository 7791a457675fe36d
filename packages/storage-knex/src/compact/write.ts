/*
 * Storing a batch of results: scheduled TCP and API runs as narrow rows (with a detail document
 * for failed, degraded and errored runs, retried attempts, and one passing run per check,
 * location and hour), everything else as full rows by the caller.
 */
import type { CheckResult } from '@vigil/core';
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { detailDoc, toNarrow, type Narrow } from './codec.js';
import { encodeDoc } from './doc-codec.js';
import { checkKeys, knownCheckKeys, knownLocationKeys, locationKeys, nothingLearned, remember, type Learned } from './keys.js';
import { insertRows, PER_STATEMENT } from '../bulk-insert.js';
import { FLAG, isPostgres, MAX_LOCATION_KEY, packSlot, tables, type Layout } from './layout.js';

type Result = Omit<CheckResult, 'accountId'>;
const HOUR = 3_600_000;
const DOC_COLUMNS = { slot: 'int', check_key: 'int', doc: 'text' } as const;

/** Per store: the newest hour whose passing run kept its detail, by check key and location key. */
const sampledHours = new WeakMap<object, Map<string, number>>();

function samplesOf(ctx: TableContext): Map<string, number> {
  let m = sampledHours.get(ctx);
  if (!m) sampledHours.set(ctx, (m = new Map()));
  return m;
}

/** A batch sorted into the runs that may become narrow rows and the rest, before any database work. */
export interface CompactPlan {
  narrow: { r: Result; n: Narrow }[];
  rest: Result[];
}

export function planCompact(results: readonly Result[]): CompactPlan {
  const plan: CompactPlan = { narrow: [], rest: [] };
  for (const r of results) {
    const n = toNarrow(r);
    if (n) plan.narrow.push({ r, n });
    else plan.rest.push(r);
  }
  return plan;
}

export interface CompactWrite {
  /** The results left for full rows. */
  rest: Result[];
  /** To call once the transaction has committed: the caches learn the batch's keys and samples. */
  committed: () => void;
}

/** Writes the plan's narrow rows inside `trx`; answers what is left for the full-row table. */
export async function writeCompact(trx: Knex.Transaction, ctx: TableContext, accountId: string, plan: CompactPlan): Promise<CompactWrite> {
  const learned: Learned = nothingLearned();
  if (plan.narrow.length === 0) return { rest: [...plan.rest], committed: () => {} };
  const keys = await checkKeys(trx, ctx, accountId, latestNames(plan), learned);
  const locs = await locationKeys(trx, ctx, locationsOf(plan), learned);
  const { rows, docs, rest, sampled } = buildRows(ctx, plan, keys, locs);
  const t = tables(ctx);
  const pg = isPostgres(ctx.knex);
  for (const [layout, list] of rows) await insertRows(trx, pg, t.runs(layout), layout.columns, list);
  await insertRows(trx, pg, t.details, DOC_COLUMNS, docs);
  return {
    rest,
    committed: () => {
      remember(ctx, learned);
      const samples = samplesOf(ctx);
      for (const [k, hour] of sampled) if ((samples.get(k) ?? -1) < hour) samples.set(k, hour);
    },
  };
}

/**
 * The write of a batch that is one insert of narrow rows and nothing else (the usual passing
 * scheduled run): every check and location key known to this process under the run's name, no
 * detail document to keep, one table, no full rows, rows for one statement. One statement is
 * atomic by itself, so it needs no transaction: a BEGIN and a COMMIT fewer, which on SQLite hold
 * the one writer for two trips fewer. Null for any other batch, which goes through `writeCompact`
 * in a transaction.
 */
export function singleInsert(ctx: TableContext, accountId: string, plan: CompactPlan): (() => Promise<void>) | null {
  if (plan.rest.length > 0 || plan.narrow.length === 0 || plan.narrow.length > PER_STATEMENT) return null;
  // A failed run keeps its detail: a second statement.
  if (plan.narrow.some(({ n }) => n.failing)) return null;
  const keys = knownCheckKeys(ctx, accountId, latestNames(plan));
  const locs = keys && knownLocationKeys(ctx, locationsOf(plan));
  if (!keys || !locs) return null;
  const { rows, docs, rest } = buildRows(ctx, plan, keys, locs);
  const [only, ...more] = rows;
  if (!only || more.length > 0 || docs.length > 0 || rest.length > 0) return null;
  const [layout, list] = only;
  const table = tables(ctx).runs(layout);
  const pg = isPostgres(ctx.knex);
  // On the store's knex, no transaction: prepared once per connection where the store has its own statements.
  return () => insertRows(ctx.knex, pg, table, layout.columns, list, ctx.writes);
}

/** A check's name as of the batch's latest run, by check id. */
function latestNames(plan: CompactPlan): Map<string, string> {
  const names = new Map<string, string>();
  const latest = new Map<string, number>();
  for (const { r, n } of plan.narrow) {
    if ((latest.get(r.checkId) ?? -Infinity) > n.dueMs) continue;
    latest.set(r.checkId, n.dueMs);
    names.set(r.checkId, r.name);
  }
  return names;
}

const locationsOf = (plan: CompactPlan) => new Set(plan.narrow.map(({ r }) => r.runLocation));

/**
 * The plan's narrow rows by layout and their detail documents, with the keys given; a run whose
 * location key does not fit a slot goes to the full rows. Decides which passing runs keep their
 * detail (one per check, location and hour), in `sampled` until the write commits.
 */
function buildRows(ctx: TableContext, plan: CompactPlan, keys: Map<string, number>, locs: Map<string, number>) {
  const rest = [...plan.rest];
  const sampled = new Map<string, number>();
  const samples = samplesOf(ctx);
  const rows = new Map<Layout, Record<string, number>[]>();
  const docs: Record<string, unknown>[] = [];
  for (const { r, n } of plan.narrow) {
    const locKey = locs.get(r.runLocation)!;
    if (locKey > MAX_LOCATION_KEY) {
      rest.push(r);
      continue;
    }
    const checkKey = keys.get(r.checkId)!;
    const slot = packSlot(n.dueMs, locKey, r.attempts);
    const sampleKey = `${checkKey}:${locKey}`;
    const hour = Math.floor(n.dueMs / HOUR);
    const sample = !n.failing && Math.max(samples.get(sampleKey) ?? -1, sampled.get(sampleKey) ?? -1) < hour;
    if (sample) sampled.set(sampleKey, hour);
    const doc = detailDoc(r, n, n.failing || sample);
    // A row of its own: a batch built once for one statement and again for a transaction (or
    // written again after a partition was made) starts from the run's row each time.
    const row: Record<string, number> = { ...n.row, slot, check_key: checkKey };
    if (doc) {
      row.flags = row.flags! | FLAG.doc;
      docs.push({ slot, check_key: checkKey, doc: encodeDoc(doc) });
    }
    let list = rows.get(n.layout);
    if (!list) rows.set(n.layout, (list = []));
    list.push(row);
  }
  return { rows, docs, rest, sampled };
}
