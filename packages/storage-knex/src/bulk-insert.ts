/*
 * Batches of rows of one fixed shape (the narrow rows of scheduled runs and their detail
 * documents), inserted by one short statement whose values travel as one parameter per column on
 * PostgreSQL (an array each, read back with `unnest`) and as one parameter on SQLite (a JSON array
 * of rows, read back with `json_each`). A multi-row VALUES statement has a placeholder per value:
 * at 500 rows of 9 columns, knex spends about 3 µs a row building it and the database parses
 * 4,500 placeholders each time. The short statement stores a batch about 1.1 times as fast as
 * knex's multi-row insert on SQLite and 1.8 times on PostgreSQL (bench/storage.bench.mjs). Its
 * identifiers are wrapped as knex wraps them. It runs through knex (`raw`), so the host's query
 * events see it, but for a run's one narrow row outside a transaction on the store's own
 * PostgreSQL connections, which is a statement prepared once per connection (`writes`).
 */
import type { Knex } from 'knex';
import type { PreparedWrites } from './prepared.js';

type Row = Record<string, unknown>;
type Value = number | string;

/** A column's values: integers (safe integers, stored in any integer column) or text. */
export type ColumnKind = 'int' | 'text';

/** Rows a statement: a JSON text or a set of arrays of a few hundred kB. */
export const PER_STATEMENT = 5000;

/**
 * The statements of each knex (by its config, which its transactions share: identifiers are
 * wrapped as that knex wraps them), by table and columns; a handful in use.
 */
const statementsOf = new WeakMap<object, Map<string, string>>();

function statement(db: Knex, pg: boolean, table: string, columns: readonly (readonly [string, ColumnKind])[]): string {
  const config = db.client.config as object;
  let statements = statementsOf.get(config);
  if (!statements) statementsOf.set(config, (statements = new Map()));
  const key = `${pg ? 'pg' : 'sqlite'}\u0000${table}\u0000${columns.map(([name, kind]) => `${name}:${kind}`).join('\u0000')}`;
  let sql = statements.get(key);
  if (sql === undefined) {
    const ident = (name: string) => db.raw('??', [name]).toQuery();
    const into = `insert into ${ident(table)} (${columns.map(([name]) => ident(name)).join(', ')})`;
    sql = pg
      ? `${into} select * from unnest(${columns.map(([, kind]) => (kind === 'int' ? '?::int8[]' : '?::text[]')).join(', ')})`
      : `${into} select ${columns.map((_, i) => `json_extract(value, '$[${i}]')`).join(', ')} from json_each(?)`;
    if (statements.size >= 64) statements.clear();
    statements.set(key, sql);
  }
  return sql;
}

/**
 * Inserts `rows` into `table` (inside `db`, a transaction where the rows must go in together), one
 * statement for up to 5,000 rows. Every row has a value of its kind in every column of `columns`
 * (other fields of a row are not written), or nothing is inserted and the error names the table,
 * the column and the row. Text must be well-formed (SQLite's JSON would store a lone surrogate as
 * it is). `pg`: the database is PostgreSQL, else SQLite. `writes`: outside a transaction, on the
 * store's own PostgreSQL connections, the statement runs prepared once per connection there (not
 * through knex, so a query listener on `db` does not see it).
 */
export async function insertRows(db: Knex, pg: boolean, table: string, columns: Readonly<Record<string, ColumnKind>>, rows: readonly Row[], writes?: PreparedWrites | null): Promise<void> {
  if (rows.length === 0) return;
  const cols = Object.entries(columns);
  const sql = statement(db, pg, table, cols);
  const batches: Knex.RawBinding[][] = [];
  for (let from = 0; from < rows.length; from += PER_STATEMENT) {
    const to = Math.min(rows.length, from + PER_STATEMENT);
    // PostgreSQL: an array per column; SQLite: a row per array.
    const values: Value[][] = pg ? cols.map(() => new Array<Value>(to - from)) : new Array<Value[]>(to - from);
    for (let r = from; r < to; r++) {
      const row = rows[r]!;
      const tuple = pg ? null : (values[r - from] = new Array<Value>(cols.length));
      for (let c = 0; c < cols.length; c++) {
        const [name, kind] = cols[c]!;
        const value = row[name];
        if (kind === 'int' ? !Number.isSafeInteger(value) : typeof value !== 'string') {
          throw new Error(`insert into ${table}: row ${r} has ${kind === 'int' ? 'no integer' : 'no text'} in ${name} (${typeof value})`);
        }
        if (tuple) tuple[c] = value as Value;
        else values[c]![r - from] = value as Value;
      }
    }
    // A column's array holds values of its one kind (all numbers or all text).
    batches.push(pg ? (values as (number[] | string[])[]) : [JSON.stringify(values)]);
  }
  for (const bindings of batches) {
    try {
      // Never past a transaction: its rows go on its own connection.
      if (writes && !db.isTransaction) await writes.count(sql, bindings);
      else await db.raw(sql, bindings);
    } catch (err) {
      throw shortened(err, table, rows.length);
    }
  }
}

/**
 * knex writes a failed statement's values into its error's message; on SQLite that is the whole
 * batch as JSON. The middle of a long message goes: the statement's start and the database's own
 * words at the end stay.
 */
function shortened(err: unknown, table: string, count: number): unknown {
  if (!(err instanceof Error) || err.message.length <= 2000) return err;
  const { message } = err;
  err.message = `${message.slice(0, 400)} … (the values of ${count} rows for ${table} left out) … ${message.slice(-800)}`;
  return err;
}
