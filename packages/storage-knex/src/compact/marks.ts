/*
 * How far whole days of results were dropped (PostgreSQL's day partitions): every hour before
 * the mark has lost its raw results, for every account. A roll-up of such an hour counts as
 * pruned whatever its own flag says, so dropping a day marks its roll-ups without writing them.
 */
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';

const DROPPED = 'dropped_before';
const table = (ctx: Pick<TableContext, 'prefix'>) => `${ctx.prefix}retention_marks`;

/** The time before which every day was dropped, 0 while none was. */
export async function droppedBefore(db: Knex | Knex.Transaction, ctx: TableContext): Promise<number> {
  const row = (await db(table(ctx)).where('name', DROPPED).first('value_ms')) as { value_ms: string | number } | undefined;
  return row ? Number(row.value_ms) : 0;
}

/** Moves the mark on to `ms` (never back). */
export async function markDropped(trx: Knex.Transaction, ctx: TableContext, ms: number): Promise<void> {
  if (ms <= (await droppedBefore(trx, ctx))) return;
  await trx(table(ctx)).insert({ name: DROPPED, value_ms: ms }).onConflict('name').merge();
}

export async function createMarksTable(knex: Knex | Knex.Transaction, prefix: string): Promise<void> {
  await knex.schema.createTable(table({ prefix }), (t) => {
    t.string('name', 64).primary();
    t.bigInteger('value_ms').notNullable();
  });
}
