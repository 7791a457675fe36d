/*
 * Reading narrow rows back as results: one by its id (the due time is in a slot id, so the id
 * leads to a handful of rows whose ids are recomputed), and a check's results page by page, the
 * narrow rows and the full rows merged newest first.
 */
import { slotIdDueAt, type CheckResult, type Page, type ResultListQuery } from '@vigil/core';
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { fromNarrow } from './codec.js';
import { decodeDoc } from './doc-codec.js';
import { readCheckKey } from './keys.js';
import { FLAG, LAYOUTS, locationKeySql, MAX_OFFSET_MS, packable, slotAt, SLOTS_PER_MS, startedSql, tables, unpackSlot, type Layout } from './layout.js';

type Row = Record<string, unknown>;

/** Narrow rows with their check (account, id, name) and location name; `where` narrows `n`. */
function selectNarrow(db: Knex, ctx: TableContext, layout: Layout, where: (q: Knex.QueryBuilder) => void): Knex.QueryBuilder {
  const t = tables(ctx);
  const q = db({ n: t.runs(layout) })
    .join({ k: t.keys }, 'k.check_key', 'n.check_key')
    .join({ l: t.locations }, 'l.loc_key', db.raw(locationKeySql('n')))
    .select('n.*', 'k.account_id', 'k.check_id', db.raw('k.name as check_name'), db.raw('l.name as location'));
  where(q);
  return q;
}

/** The rows as results, with the detail documents of those that have one. */
async function hydrate(db: Knex, ctx: TableContext, layout: Layout, rows: Row[]): Promise<CheckResult[]> {
  const withDoc = rows.filter((r) => (Number(r.flags) & FLAG.doc) !== 0);
  const docs = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < withDoc.length; i += 200) {
    const pairs = withDoc.slice(i, i + 200).map((r) => [Number(r.check_key), Number(r.slot)]);
    for (const d of (await db(tables(ctx).details).select('check_key', 'slot', 'doc').whereIn(['check_key', 'slot'], pairs)) as Row[]) {
      docs.set(`${d.check_key}:${d.slot}`, decodeDoc(String(d.doc)));
    }
  }
  return rows.map((r) => fromNarrow({
    layout,
    accountId: String(r.account_id),
    checkId: String(r.check_id),
    name: String(r.check_name),
    location: String(r.location),
    slot: unpackSlot(Number(r.slot)),
    row: r,
    doc: docs.get(`${r.check_key}:${r.slot}`) ?? null,
  }));
}

/** A scheduled run found by its slot id (null: no narrow row has it). */
export async function getNarrow(db: Knex, ctx: TableContext, accountId: string, id: string, checkId?: string): Promise<CheckResult | null> {
  const due = slotIdDueAt(id);
  if (!due || !packable(due.getTime())) return null;
  let keys: number[] | Knex.QueryBuilder;
  if (checkId !== undefined) {
    const key = await readCheckKey(db, ctx, accountId, checkId);
    if (!key) return null;
    keys = [key.key];
  } else {
    keys = db(tables(ctx).keys).select('check_key').where('account_id', accountId);
  }
  const lo = slotAt(due.getTime());
  for (const layout of LAYOUTS) {
    const rows = (await selectNarrow(db, ctx, layout, (q) => q.whereIn('n.check_key', keys).where('n.slot', '>=', lo).where('n.slot', '<', lo + SLOTS_PER_MS))) as Row[];
    const found = (await hydrate(db, ctx, layout, rows)).find((r) => r.id === id && r.accountId === accountId);
    if (found) return found;
  }
  return null;
}

/**
 * A page of a check's results, newest first: the narrow rows and the full rows in one ordered
 * UNION ALL of their keys, then each page's rows read whole. `fullRow` reads a full row.
 */
export async function listMerged(
  db: Knex,
  ctx: TableContext,
  accountId: string,
  checkId: string,
  query: ResultListQuery,
  fullRow: (row: Row) => CheckResult,
): Promise<Page<CheckResult>> {
  const full = `${ctx.prefix}check_results`;
  const fullQ = db(full).where({ account_id: accountId, check_id: checkId });
  if (query.from) fullQ.where('started_ms', '>=', query.from.getTime());
  if (query.to) fullQ.where('started_ms', '<', query.to.getTime());
  if (query.resultType) fullQ.where('result_type', query.resultType);
  if (query.checkSessionId !== undefined) fullQ.where('check_session_id', query.checkSessionId);
  const branches: Knex.QueryBuilder[] = [];
  // Scheduled runs belong to no session: a list of a session's runs has no narrow rows.
  const key = query.checkSessionId === undefined || query.checkSessionId === null ? await readCheckKey(db, ctx, accountId, checkId) : null;
  if (key) {
    LAYOUTS.forEach((layout, i) => {
      const q = db({ n: tables(ctx).runs(layout) }).where('n.check_key', key.key);
      if (query.from) q.where('n.slot', '>=', slotAt(query.from.getTime() - MAX_OFFSET_MS)).whereRaw(`${startedSql('n')} >= ?`, [query.from.getTime()]);
      if (query.to) q.where('n.slot', '<', slotAt(query.to.getTime() + MAX_OFFSET_MS + 1)).whereRaw(`${startedSql('n')} < ?`, [query.to.getTime()]);
      if (query.resultType) q.whereRaw(`(n.flags & ${FLAG.attempt}) ${query.resultType === 'ATTEMPT' ? '<>' : '='} 0`);
      branches.push(q.select(db.raw(`${i + 1} as src`), db.raw('n.slot as k'), db.raw(`${startedSql('n')} as started_ms`)));
    });
  }
  const counts = await Promise.all([fullQ.clone(), ...branches.map((b) => b.clone().clearSelect())].map(async (q) => {
    const [{ count }] = (await q.count({ count: '*' })) as [{ count: string | number }];
    return Number(count);
  }));
  const total = counts.reduce((a, b) => a + b, 0);
  const keysQ = fullQ.clone().select(db.raw('0 as src'), db.raw('seq as k'), 'started_ms');
  const union = branches.length === 0 ? keysQ : keysQ.unionAll(branches, false);
  const page = (await db.from(union.as('u')).select('src', 'k')
    .orderBy([{ column: 'started_ms', order: 'desc' }, { column: 'src', order: 'desc' }, { column: 'k', order: 'desc' }])
    .limit(query.limit).offset(query.offset)) as Row[];
  const found = new Map<string, CheckResult>();
  const seqs = page.filter((r) => Number(r.src) === 0).map((r) => Number(r.k));
  if (seqs.length > 0) for (const row of (await db(full).whereIn('seq', seqs)) as Row[]) found.set(`0:${row.seq}`, fullRow(row));
  for (const [i, layout] of LAYOUTS.entries()) {
    const slots = page.filter((r) => Number(r.src) === i + 1).map((r) => Number(r.k));
    if (slots.length === 0 || !key) continue;
    const rows = (await selectNarrow(db, ctx, layout, (q) => q.where('n.check_key', key.key).whereIn('n.slot', slots))) as Row[];
    const results = await hydrate(db, ctx, layout, rows);
    rows.forEach((row, j) => found.set(`${i + 1}:${Number(row.slot)}`, results[j]!));
  }
  const items = page.map((r) => found.get(`${Number(r.src)}:${Number(r.k)}`)).filter((r): r is CheckResult => r !== undefined);
  return { items, total, offset: query.offset };
}
