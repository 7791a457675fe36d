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

/** How far before its `offset + limit`-th row's due time a branch of narrow rows is read (see listMerged). */
const WINDOW_MS = 2 * MAX_OFFSET_MS + 1;

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
 *
 * Each branch gives only its first `offset + limit` keys, so a page costs about as much however
 * many results the check keeps. The full rows come in order along their (account, check, start)
 * index. A narrow row's start is its slot's due time plus an offset of at most MAX_OFFSET_MS
 * either way, so the branch's keys are those of its rows due no earlier than WINDOW_MS before the
 * due time of its `offset + limit`-th row by slot: that many rows start no earlier than that due
 * time less MAX_OFFSET_MS, and every row due before the window starts before it.
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
  const upTo = query.offset + query.limit;
  // Scheduled runs belong to no session: a list of a session's runs has no narrow rows.
  const key = query.checkSessionId === undefined || query.checkSessionId === null ? await readCheckKey(db, ctx, accountId, checkId) : null;
  const narrow = (layout: Layout, alias: string) => {
    const q = db({ [alias]: tables(ctx).runs(layout) }).where(`${alias}.check_key`, key!.key);
    if (query.from) q.where(`${alias}.slot`, '>=', slotAt(query.from.getTime() - MAX_OFFSET_MS)).whereRaw(`${startedSql(alias)} >= ?`, [query.from.getTime()]);
    if (query.to) q.where(`${alias}.slot`, '<', slotAt(query.to.getTime() + MAX_OFFSET_MS + 1)).whereRaw(`${startedSql(alias)} < ?`, [query.to.getTime()]);
    if (query.resultType) q.whereRaw(`(${alias}.flags & ${FLAG.attempt}) ${query.resultType === 'ATTEMPT' ? '<>' : '='} 0`);
    return q;
  };
  const layouts = key ? LAYOUTS : [];
  // Each branch's count (null: not counted, for a caller that reads the items alone).
  const counts = query.countTotal === false
    ? [null, ...layouts.map(() => null)]
    : await Promise.all([fullQ.clone(), ...layouts.map((layout) => narrow(layout, 'n'))].map(async (q) => {
      const [{ count }] = (await q.count({ count: '*' })) as [{ count: string | number }];
      return Number(count);
    }));
  const total = query.countTotal === false ? -1 : counts.reduce<number>((a, b) => a + b!, 0);
  if (upTo <= 0) return { items: [], total, offset: query.offset };
  const branches = [fullQ.clone().select(db.raw('0 as src'), db.raw('seq as k'), 'started_ms')
    .orderBy([{ column: 'started_ms', order: 'desc' }, { column: 'seq', order: 'desc' }]).limit(upTo)];
  layouts.forEach((layout, i) => {
    const count = counts[i + 1] ?? null;
    if (count === 0) return;
    const q = narrow(layout, 'n');
    if (count === null || count > upTo) {
      const nth = narrow(layout, 'w').select('w.slot').orderBy('w.slot', 'desc').limit(1).offset(upTo - 1);
      q.whereRaw('n.slot >= coalesce((?), 0) - ?', [nth, WINDOW_MS * SLOTS_PER_MS]);
    }
    branches.push(q
      .select(db.raw(`${i + 1} as src`), db.raw('n.slot as k'), db.raw(`${startedSql('n')} as started_ms`))
      .orderBy([{ column: 'started_ms', order: 'desc' }, { column: 'k', order: 'desc' }]).limit(upTo));
  });
  // Each branch in a derived table of its own: SQLite takes no ORDER BY or LIMIT inside a compound SELECT.
  const [first, ...rest] = branches.map((b, i) => db.select('*').from(b.as(`b${i}`)));
  const union = rest.length === 0 ? first! : first!.unionAll(rest, false);
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
