// Rows of one fixed shape inserted as one statement with a parameter per column (PostgreSQL) or one
// parameter in all (SQLite), as the narrow rows of scheduled runs and their detail documents are:
// every value comes back exactly as it went in (integers up to 2^53 - 1, text with quotes,
// backslashes, braces, control characters and characters outside the BMP), a batch larger than
// one statement goes in whole, a bad value is refused before anything is written and the error
// names the table, the row and the column, and the identifiers are wrapped as the host's knex
// wraps them.
import knexFactory, { type Knex } from 'knex';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { insertRows } from '../src/bulk-insert.js';
import { PG_URL, STORES } from './support/fresh-store.js';

const COLUMNS = { id: 'int', big: 'int', doc: 'text' } as const;

const ODD_TEXT = [
  '', ' leading and trailing ', 'NULL', 'null', '"quoted"', "it's", 'back\\slash', '{braces,commas}', '[1,2]',
  '\u0001\u001e control', 'tab\there\nnewline', 'ünïcödé ✓ 🚀 \u2028', '\\"', 'a'.repeat(5000),
];

async function onTable(kind: 'sqlite' | 'postgres', fn: (knex: Knex, table: string) => Promise<void>, config: Partial<Knex.Config> = {}): Promise<void> {
  const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'vigil-bulk-')) : null;
  const knex = dir
    ? knexFactory({ client: 'sqlite3', connection: { filename: join(dir, 'bulk.sqlite') }, useNullAsDefault: true, ...config })
    : knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 2 }, ...config });
  const table = `vigil_bulk_${Math.random().toString(36).slice(2, 10)}`;
  try {
    await knex.raw(`create table ${table} (id ${dir ? 'integer' : 'int4'} not null, big ${dir ? 'integer' : 'int8'} not null, doc text not null)`);
    await fn(knex, table);
  } finally {
    await knex.raw(`drop table if exists ${table}`);
    await knex.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

const stored = async (knex: Knex, table: string) =>
  ((await knex(table).select('id', 'big', 'doc').orderBy('id')) as { id: unknown; big: unknown; doc: string }[])
    .map((r) => ({ id: Number(r.id), big: Number(r.big), doc: r.doc }));

describe.each(STORES)('inserting rows of one shape, %s', (kind) => {
  it('stores every value exactly, across more rows than one statement takes', async () => {
    await onTable(kind, async (knex, table) => {
      const rows = Array.from({ length: 12_345 }, (_, i) => ({
        id: i,
        big: i % 3 === 0 ? Number.MAX_SAFE_INTEGER - i : i % 3 === 1 ? -i * 1_000_003 : 7_500_000_000_000 + i,
        doc: ODD_TEXT[i % ODD_TEXT.length]!,
        ignored: 'a field no column names',
      }));
      await knex.transaction((trx) => insertRows(trx, kind === 'postgres', table, COLUMNS, rows));
      expect(await stored(knex, table)).toEqual(rows.map(({ id, big, doc }) => ({ id, big, doc })));
      // Nothing to insert is no statement at all.
      await insertRows(knex, kind === 'postgres', table, COLUMNS, []);
      expect(await knex(table).count({ n: '*' })).toEqual([{ n: kind === 'postgres' ? '12345' : 12_345 }]);
    });
  });

  it('refuses a batch with a missing or wrong value before writing any of it, naming the table, the row and the column', async () => {
    await onTable(kind, async (knex, table) => {
      const good = (i: number) => ({ id: i, big: i, doc: `row ${i}` });
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ id: 1, doc: 'no big' }, /row 7001 has no integer in big \(undefined\)/],
        [{ id: 1, big: 1.5, doc: 'a fraction' }, /row 7001 has no integer in big \(number\)/],
        [{ id: 1, big: '12', doc: 'text for a number' }, /row 7001 has no integer in big \(string\)/],
        [{ id: 1, big: 2 ** 53, doc: 'past a safe integer' }, /row 7001 has no integer in big/],
        [{ id: 1, big: 1, doc: null }, /row 7001 has no text in doc \(object\)/],
        [{ id: 1, big: 1, doc: 12 }, /row 7001 has no text in doc \(number\)/],
      ];
      for (const [row, message] of bad) {
        // The bad row comes after a whole statement's worth of good ones: they are not written either.
        const rows = [...Array.from({ length: 7001 }, (_, i) => good(i)), row];
        const insert = insertRows(knex, kind === 'postgres', table, COLUMNS, rows);
        await expect(insert).rejects.toThrow(new RegExp(`insert into ${table}: ${message.source}`));
        expect(await stored(knex, table)).toEqual([]);
      }
    });
  });

  it('wraps the table and its columns as the host\'s knex wraps identifiers', async () => {
    // The host's knex maps camelCase names to the snake_case ones in the database.
    const snake = (value: string, wrap: (value: string) => string) => wrap(value.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    await onTable(kind, async (knex, table) => {
      await knex.raw(`alter table ${table} add column check_key integer not null default 0`);
      await insertRows(knex, kind === 'postgres', table, { id: 'int', big: 'int', checkKey: 'int', doc: 'text' }, [{ id: 1, big: 2, checkKey: 3, doc: 'four' }]);
      const read = await knex.raw(`select id, big, check_key, doc from ${table}`);
      expect(kind === 'postgres' ? read.rows : read).toEqual([{ id: 1, big: kind === 'postgres' ? '2' : 2, check_key: 3, doc: 'four' }]);
    }, { wrapIdentifier: snake });
  });
});
