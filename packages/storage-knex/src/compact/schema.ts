/*
 * The tables of the compact layout (migration 011). Results already stored stay where they are,
 * in check_results, and are read beside the narrow rows until retention removes them.
 */
import type { Knex } from 'knex';
import { indexName } from '../doc-tables.js';
import { isPostgres, LAYOUTS, tables, type Layout } from './layout.js';

/** A narrow table's columns, widest first (PostgreSQL packs them without padding). */
function runColumns(layout: Layout, pg: boolean): string[] {
  const int8 = pg ? 'int8' : 'integer';
  const int4 = pg ? 'int4' : 'integer';
  const int2 = pg ? 'int2' : 'integer';
  return [
    `slot ${int8} not null`,
    `check_key ${int4} not null`,
    `rt ${int4} not null`,
    ...layout.phases.map((p) => `${p.column} ${int4} not null`),
    `start_off ${int2} not null`,
    `stop_off ${int2} not null`,
    `flags ${int2} not null`,
    ...(layout.http ? [`status_code ${int2} not null`, `ssl_days ${int2} not null`] : []),
  ];
}

export async function createCompactTables(knex: Knex | Knex.Transaction, prefix: string): Promise<void> {
  const pg = isPostgres(knex as Knex);
  const t = tables({ prefix });
  await knex.schema.createTable(t.keys, (b) => {
    b.increments('check_key').primary();
    b.string('account_id', 64).notNullable();
    b.string('check_id', 64).notNullable();
    // The check's name as of its latest stored run: what a compact result reads as its name.
    b.text('name').notNullable();
    b.unique(['account_id', 'check_id'], { indexName: indexName(t.keys, ['account_id', 'check_id'], 'unique') });
  });
  await knex.schema.createTable(t.locations, (b) => {
    b.increments('loc_key').primary();
    b.string('name', 128).notNullable();
    b.unique(['name'], { indexName: indexName(t.locations, ['name'], 'unique') });
  });
  const narrow = [...LAYOUTS.map((l) => ({ table: t.runs(l), columns: runColumns(l, pg) })), {
    table: t.details,
    columns: [`slot ${pg ? 'int8' : 'integer'} not null`, `check_key ${pg ? 'int4' : 'integer'} not null`, 'doc text not null'],
  }];
  for (const { table, columns } of narrow) {
    if (pg) {
      // Range partitions of one day each (on the slot, so on the due time), made ahead by the
      // writer; retention drops a whole day at once.
      await knex.raw(`create table ?? (${columns.join(', ')}) partition by range (slot)`, [table]);
      await knex.raw('create unique index ?? on ?? (check_key, slot)', [indexName(table, ['pk'], 'unique'), table]);
    } else {
      // The table is its own primary-key B-tree: no rowid, no second index.
      await knex.raw(`create table ?? (${columns.join(', ')}, primary key (check_key, slot)) without rowid`, [table]);
    }
  }
}
