// Rows of one fixed shape inserted as one statement with a parameter per column (PostgreSQL) or one
// parameter in all (SQLite), as the narrow rows of scheduled runs and their detail documents are:
// every value comes back exactly as it went in and of its type (integers up to 2^53 - 1 and at a
// smallint's bounds, text with quotes, backslashes, braces, control characters and characters
// outside the BMP), a batch larger than one statement goes in whole, a bad value is refused before
// anything is written and the error names the table, the row and the column, a database error keeps
// its own words without the whole batch's values, and the identifiers are wrapped as the host's
// knex wraps them.
import knexFactory, { type Knex } from 'knex';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { insertRows } from '../src/bulk-insert.js';
import { PG_URL, STORES } from './support/fresh-store.js';

const COLUMNS = { id: 'int', big: 'int', small: 'int', doc: 'text' } as const;

const ODD_TEXT = [
  '', ' leading and trailing ', 'NULL', 'null', '"quoted"', "it's", 'back\\slash', '{braces,commas}', '[1,2]',
  '\u0001\u001e control', 'tab\there\nnewline', 'ünïcödé ✓ 🚀 \u2028', '\\"', 'a'.repeat(5000),
];
const SMALL = [-32_768, -1, 0, 32_767];

async function onTable(kind: 'sqlite' | 'postgres', fn: (knex: Knex, table: string) => Promise<void>, config: Partial<Knex.Config> = {}): Promise<void> {
  const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'vigil-bulk-')) : null;
  const knex = dir
    ? knexFactory({ client: 'sqlite3', connection: { filename: join(dir, 'bulk.sqlite') }, useNullAsDefault: true, ...config })
    : knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 2 }, ...config });
  const table = `vigil_bulk_${Math.random().toString(36).slice(2, 10)}`;
  const [int2, int4, int8] = dir ? ['integer', 'integer', 'integer'] : ['int2', 'int4', 'int8'];
  try {
    await knex.raw(`create table ${table} (id ${int4} not null unique, big ${int8} not null, small ${int2} not null, doc text not null)`);
    await fn(knex, table);
  } finally {
    await knex.raw(`drop table if exists ${table}`);
    await knex.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

const stored = async (knex: Knex, table: string) =>
  ((await knex(table).select('id', 'big', 'small', 'doc').orderBy('id')) as { id: unknown; big: unknown; small: unknown; doc: string }[])
    .map((r) => ({ id: Number(r.id), big: Number(r.big), small: Number(r.small), doc: r.doc }));

const good = (i: number) => ({ id: i, big: i, small: i % 100, doc: `row ${i}` });

describe.each(STORES)('inserting rows of one shape, %s', (kind) => {
  const pg = kind === 'postgres';

  it('stores every value exactly and of its type, across more rows than one statement takes', async () => {
    await onTable(kind, async (knex, table) => {
      const rows = Array.from({ length: 12_345 }, (_, i) => ({
        id: i,
        big: i % 3 === 0 ? Number.MAX_SAFE_INTEGER - i : i % 3 === 1 ? -i * 1_000_003 : 7_500_000_000_000 + i,
        small: SMALL[i % SMALL.length]!,
        doc: ODD_TEXT[i % ODD_TEXT.length]!,
        ignored: 'a field no column names',
      }));
      await knex.transaction((trx) => insertRows(trx, pg, table, COLUMNS, rows));
      expect(await stored(knex, table)).toEqual(rows.map(({ id, big, small, doc }) => ({ id, big, small, doc })));
      // The database holds integers and text, not numbers read from text or the other way round.
      const types = await knex.raw(pg
        ? `select distinct pg_typeof(big)::text as big, pg_typeof(small)::text as small, pg_typeof(doc)::text as doc from ${table}`
        : `select distinct typeof(big) as big, typeof(small) as small, typeof(doc) as doc from ${table}`);
      expect(pg ? types.rows : types).toEqual([pg ? { big: 'bigint', small: 'smallint', doc: 'text' } : { big: 'integer', small: 'integer', doc: 'text' }]);
    });
  });

  it('sends no statement for no rows', async () => {
    await onTable(kind, async (knex, table) => {
      const sent: string[] = [];
      knex.on('query', (q: { sql: string }) => sent.push(q.sql));
      await insertRows(knex, pg, table, COLUMNS, []);
      expect(sent).toEqual([]);
      await insertRows(knex, pg, table, COLUMNS, [good(1)]);
      expect(sent).toHaveLength(1);
    });
  });

  it('refuses a batch with a missing or wrong value before writing any of it, naming the table, the row and the column', async () => {
    await onTable(kind, async (knex, table) => {
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ id: 1, small: 1, doc: 'no big' }, /row 7001 has no integer in big \(undefined\)/],
        [{ id: 1, big: 1.5, small: 1, doc: 'a fraction' }, /row 7001 has no integer in big \(number\)/],
        [{ id: 1, big: '12', small: 1, doc: 'text for a number' }, /row 7001 has no integer in big \(string\)/],
        [{ id: 1, big: 2 ** 53, small: 1, doc: 'past a safe integer' }, /row 7001 has no integer in big/],
        [{ id: 1, big: 1, small: 1, doc: null }, /row 7001 has no text in doc \(object\)/],
        [{ id: 1, big: 1, small: 1, doc: 12 }, /row 7001 has no text in doc \(number\)/],
      ];
      for (const [row, message] of bad) {
        // The bad row comes after a whole statement's worth of good ones: they are not written either.
        const rows = [...Array.from({ length: 7001 }, (_, i) => good(i)), row];
        await expect(insertRows(knex, pg, table, COLUMNS, rows)).rejects.toThrow(new RegExp(`insert into ${table}: ${message.source}`));
        expect(await stored(knex, table)).toEqual([]);
      }
    });
  });

  it('answers a database error in its own words, without the batch\'s values, and writes nothing of the batch', async () => {
    await onTable(kind, async (knex, table) => {
      await insertRows(knex, pg, table, COLUMNS, [good(999)]);
      const rows = Array.from({ length: 1000 }, (_, i) => good(i));
      const failure = await knex.transaction((trx) => insertRows(trx, pg, table, COLUMNS, rows)).then(() => null, (err: Error) => err);
      expect(failure?.message).toMatch(pg ? /duplicate key value violates unique constraint/ : /UNIQUE constraint failed/);
      expect(failure!.message.length).toBeLessThan(1500);
      expect(await stored(knex, table)).toEqual([good(999)]);
      if (pg) {
        // A value past its column's range is the database's to refuse.
        await expect(insertRows(knex, pg, table, COLUMNS, [{ ...good(1), small: 32_768 }])).rejects.toMatchObject({ code: '22003' });
        expect(await stored(knex, table)).toEqual([good(999)]);
      }
    });
  });

  it('wraps the table and its columns as the host\'s knex wraps identifiers', async () => {
    // The host's knex maps camelCase names to the snake_case ones in the database.
    const snake = (value: string, wrap: (value: string) => string) => wrap(value.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    await onTable(kind, async (knex, table) => {
      await knex.raw(`alter table ${table} add column check_key integer not null default 0`);
      await insertRows(knex, pg, table, { id: 'int', big: 'int', small: 'int', checkKey: 'int', doc: 'text' }, [{ id: 1, big: 2, small: 3, checkKey: 4, doc: 'five' }]);
      const read = await knex.raw(`select id, big, small, check_key, doc from ${table}`);
      expect(pg ? read.rows : read).toEqual([{ id: 1, big: pg ? '2' : 2, small: 3, check_key: 4, doc: 'five' }]);
    }, { wrapIdentifier: snake });
  });
});
