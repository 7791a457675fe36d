import { createHash } from 'node:crypto';
import { requestSignal } from '@vigil/core';
import type { Knex } from 'knex';
import { abandoned, cancelOnAbort } from './cancel.js';
import { isPostgres } from './compact/layout.js';

type Row = Record<string, unknown>;

/**
 * Fixed reads (the by-id document read of every table) run on a pooled connection without knex's
 * query runner, as a statement prepared once per connection: SQLite keeps the statement with its
 * connection (finalized before the pool closes the connection), PostgreSQL parses and plans a named
 * statement once per connection. Each read still takes its connection from knex's pool, so it
 * queues like every other query, and gives up on a request whose client hung up as other queries do.
 */
export interface PreparedReads {
  /** The rows of `sql` (placeholders `?`) for `bindings`. */
  rows(sql: string, bindings: readonly unknown[]): Promise<Row[]>;
}

/**
 * The writes every run makes (its narrow result row, its status's and alert state's
 * compare-and-set, as every compare-and-set of a document outside a transaction, its schedule
 * entry), each one statement outside any transaction, as statements prepared once per connection
 * of PostgreSQL's pool: the server parses and plans each once per connection instead of once per
 * run. Each is atomic by itself, so a statement the server no longer has is sent once more
 * unnamed, as a read is.
 */
export interface PreparedWrites {
  /** The count of rows `sql` (placeholders `?`) wrote for `bindings`. */
  count(sql: string, bindings: readonly unknown[]): Promise<number>;
}

interface SqliteConnection {
  all(sql: string, bindings: unknown[], cb: (err: Error | null, rows: Row[]) => void): void;
}

interface PgResult {
  rows: Row[];
  rowCount: number | null;
}

interface PgConnection {
  query(config: { name?: string; text: string; values: readonly unknown[] }, cb: (err: Error | null, result: PgResult) => void): void;
  /** The driver's wire connection, with its record of the statements prepared on it, by name. */
  connection?: { parsedStatements?: Record<string, string>; submittedNamedStatements?: Record<string, string> };
}

interface PoolClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  destroyRawConnection(connection: unknown): Promise<unknown>;
  positionBindings(sql: string): string;
}

/** Prepared reads on `knex`'s connections, for its SQLite or PostgreSQL client; null for another client. */
export function preparedReads(knex: Knex): PreparedReads | null {
  if (String(knex.client.config.client) === 'sqlite3') return sqliteReads(knex);
  return isPostgres(knex) ? pgStatements(knex) : null;
}

/**
 * Prepared writes on `knex`'s connections for a PostgreSQL client; null for another (SQLite's own
 * connections keep every statement they run: sqlite-statements.ts).
 */
export function preparedWrites(knex: Knex): PreparedWrites | null {
  return isPostgres(knex) ? pgStatements(knex) : null;
}

/** Runs `query` on a connection of the pool, cancelled with the request it is made for. */
export function onConnection<R>(knex: Knex, pg: boolean, query: (connection: unknown) => Promise<R>): Promise<R> {
  const signal = requestSignal();
  if (signal?.aborted) return Promise.reject(abandoned());
  const client = knex.client as unknown as PoolClient;
  return client.acquireConnection().then((connection) => {
    let running: Promise<R>;
    // Between the wait for a connection and the query, the client may have gone.
    if (signal?.aborted) running = Promise.reject(abandoned());
    else {
      try {
        running = query(connection);
      } catch (err) {
        running = Promise.reject(err);
      }
      if (signal) running = cancelOnAbort(knex, pg, connection, signal, running);
    }
    return running.then((result) => {
      void client.releaseConnection(connection);
      return result;
    }, (err: unknown) => {
      void client.releaseConnection(connection);
      throw err;
    });
  });
}

function sqliteReads(knex: Knex): PreparedReads {
  // The store's SQLite connections keep the statements of their queries (sqlite-statements.ts): a
  // read by id runs its kept statement with the driver's `all`, which steps to the end and so ends
  // the read's implicit transaction: the connection holds no snapshot between reads, and the next
  // read sees every write committed before it.
  return {
    rows: (sql, bindings) => onConnection(knex, false, (raw) => new Promise<Row[]>((resolve, reject) => {
      (raw as SqliteConnection).all(sql, [...bindings], (err, rows) => (err ? reject(err) : resolve(rows)));
    })),
  };
}

/** One set of statement names a knex, shared by its reads and writes. */
const pgOf = new WeakMap<Knex, PreparedReads & PreparedWrites>();

function pgStatements(knex: Knex): PreparedReads & PreparedWrites {
  let statements = pgOf.get(knex);
  if (!statements) pgOf.set(knex, (statements = pgPrepared(knex)));
  return statements;
}

function pgPrepared(knex: Knex): PreparedReads & PreparedWrites {
  const client = knex.client as unknown as PoolClient;
  // Each SQL text gets one statement name (the driver prepares it on a connection's first use and
  // names it there); the text is written with PostgreSQL's $n placeholders once.
  const named = new Map<string, { name: string; text: string }>();
  const statementFor = (sql: string) => {
    let statement = named.get(sql);
    if (!statement) {
      statement = { name: `vigil_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`, text: client.positionBindings(sql) };
      named.set(sql, statement);
    }
    return statement;
  };
  const query = (connection: PgConnection, config: { name?: string; text: string; values: readonly unknown[] }) => new Promise<PgResult>((resolve, reject) => {
    connection.query(config, (err, result) => (err ? reject(err) : resolve(result)));
  });
  const run = (sql: string, bindings: readonly unknown[]) => onConnection(knex, true, async (raw) => {
    const connection = raw as PgConnection;
    const statement = statementFor(sql);
    try {
      return await query(connection, { ...statement, values: bindings });
    } catch (err) {
      if (!STALE_STATEMENT.has(String((err as { code?: unknown }).code))) throw err;
      // The server does not have the statement the driver thinks it prepared (a pooler moved the
      // session), has it already, or can no longer use it (a column changed type): the driver
      // forgets it, and this statement goes once more unnamed (it ran nowhere: the server refused it
      // before running it); a later one prepares it again.
      delete connection.connection?.parsedStatements?.[statement.name];
      delete connection.connection?.submittedNamedStatements?.[statement.name];
      await query(connection, { text: 'DEALLOCATE ' + quoteIdent(statement.name), values: [] }).catch(() => {});
      return query(connection, { text: statement.text, values: bindings });
    }
  });
  return {
    rows: async (sql, bindings) => (await run(sql, bindings)).rows,
    count: async (sql, bindings) => (await run(sql, bindings)).rowCount ?? 0,
  };
}

/** 26000 no such prepared statement, 42P05 it exists already, 0A000 cached plan must not change result type. */
const STALE_STATEMENT = new Set(['26000', '42P05', '0A000']);

/** A PostgreSQL identifier, quoted. */
export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
