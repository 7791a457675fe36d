/*
 * Deleting narrow rows: by due time (a slot range) along the primary key, with the detail
 * documents of the same keys.
 */
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { LAYOUTS, slotAt, tables } from './layout.js';

/** Deletes the narrow rows (of one account, or of every one: null) due before `upTo`; answers how many went. */
export async function deleteNarrowBefore(trx: Knex.Transaction, ctx: TableContext, accountId: string | null, upTo: number): Promise<number> {
  const t = tables(ctx);
  const scoped = (q: Knex.QueryBuilder) => {
    q.where('slot', '<', slotAt(upTo));
    if (accountId !== null) q.whereIn('check_key', trx(t.keys).select('check_key').where('account_id', accountId));
    return q;
  };
  let deleted = 0;
  for (const layout of LAYOUTS) deleted += Number(await scoped(trx(t.runs(layout))).delete());
  await scoped(trx(t.details)).delete();
  return deleted;
}
