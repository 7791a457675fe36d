// Identical by-id reads asked for in one turn of the event loop share one query on SQLite and
// PostgreSQL: reads of other rows still run, a write committed before a read was asked is seen,
// and a reader whose request's client hung up stops waiting while the others are answered.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { runForRequest } from '@vigil/core';
import { afterAll, describe, expect, it } from 'vitest';
import { preparedReads, type PreparedReads } from '../src/prepared.js';
import { PG_URL, STORES } from './support/fresh-store.js';

const dir = mkdtempSync(join(tmpdir(), 'vigil-shared-reads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Table {
  knex: Knex;
  reads: PreparedReads;
  sql: string;
  /** Connections taken from the pool so far. */
  taken(): number;
  /** Reads of the table sent to the database so far. */
  sent(): number;
  close(): Promise<void>;
}

/** A table of two rows on a knex of one connection, its prepared reads, and a count of the connections they took. */
async function table(kind: 'sqlite' | 'postgres'): Promise<Table> {
  const name = `shared_reads_${randomBytes(4).toString('hex')}`;
  const knex = kind === 'sqlite'
    ? knexFactory({ client: 'sqlite3', connection: { filename: join(dir, `${name}.sqlite`) }, useNullAsDefault: true, pool: { min: 0, max: 1 } })
    : knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  await knex.schema.createTable(name, (t) => {
    t.string('id').primary();
    t.text('data');
  });
  await knex(name).insert([{ id: 'a', data: 'first' }, { id: 'b', data: 'second' }]);
  const client = knex.client as { acquireConnection(): Promise<unknown> };
  const acquire = client.acquireConnection.bind(client);
  let taken = 0;
  let sent = 0;
  const watched = new WeakSet<object>();
  // Counts the reads each connection sends: SQLite's prepared statements' runs, PostgreSQL's queries.
  const watch = (connection: Record<string, (...args: unknown[]) => unknown>) => {
    if (watched.has(connection)) return;
    watched.add(connection);
    const counted = (fn: (...args: unknown[]) => unknown, target: object) => (...args: unknown[]) => {
      if (JSON.stringify(args[0] ?? '').includes(name) || target !== connection) sent++;
      return fn.apply(target, args);
    };
    if (kind === 'sqlite') {
      const prepare = connection.prepare!;
      connection.prepare = (...args: unknown[]) => {
        const statement = prepare.apply(connection, args) as Record<string, (...a: unknown[]) => unknown>;
        if (String(args[0]).includes(name)) statement.all = counted(statement.all!, statement);
        return statement;
      };
    } else connection.query = counted(connection.query!, connection);
  };
  client.acquireConnection = async () => {
    taken++;
    const connection = await acquire();
    watch(connection as Record<string, (...args: unknown[]) => unknown>);
    return connection;
  };
  const reads = preparedReads(knex)!;
  return {
    knex, reads, sql: `select id, data from "${name}" where id = ?`, taken: () => taken, sent: () => sent,
    close: async () => {
      await knex.schema.dropTable(name);
      await knex.destroy();
    },
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Holds the knex's one connection in a transaction until `release()`. */
async function holdConnection(knex: Knex): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let taken!: () => void;
  const busy = new Promise<void>((r) => (taken = r));
  const holding = knex.transaction(async (trx) => {
    await trx.raw('select 1');
    taken();
    await held;
  });
  await busy;
  return {
    release: async () => {
      release();
      await holding;
    },
  };
}

describe.each(STORES)('reads shared in one turn (%s)', (kind) => {
  it('run one query for identical reads, and one for each other read', async () => {
    const t = await table(kind);
    try {
      const before = t.taken();
      const rows = await Promise.all([t.reads.rows(t.sql, ['a']), t.reads.rows(t.sql, ['a']), t.reads.rows(t.sql, ['b']), t.reads.rows(t.sql, ['a'])]);
      expect(rows.map((r) => r.map((row) => row.data))).toEqual([['first'], ['first'], ['second'], ['first']]);
      expect(t.taken() - before).toBe(2);
      // The next turn queries again.
      await t.reads.rows(t.sql, ['a']);
      expect(t.taken() - before).toBe(3);
    } finally {
      await t.close();
    }
  });

  it('see every write committed before they were asked for', async () => {
    const t = await table(kind);
    try {
      for (const data of ['one', 'two', 'three']) {
        await t.knex(t.sql.match(/"(.+)"/)![1]!).where('id', 'a').update({ data });
        const rows = await Promise.all([1, 2, 3].map(() => t.reads.rows(t.sql, ['a'])));
        expect(rows.map((r) => r[0]?.data)).toEqual([data, data, data]);
      }
    } finally {
      await t.close();
    }
  });

  it('let a reader whose client hung up stop waiting, and answer the others', async () => {
    const t = await table(kind);
    try {
      // The one connection is busy, so the shared read waits for it.
      const busy = await holdConnection(t.knex);
      const settled = (p: Promise<Record<string, unknown>[]>) => p.then((rows) => rows.map((row) => row.data), (err: Error) => err.name);
      const before = t.taken();
      const gone = new AbortController();
      const stays = new AbortController();
      const leaving = settled(runForRequest(gone.signal, () => t.reads.rows(t.sql, ['a'])));
      const staying = settled(runForRequest(stays.signal, () => t.reads.rows(t.sql, ['a'])));
      // A reader whose client goes before the turn ends is not read for at all.
      const early = new AbortController();
      const neverRead = settled(runForRequest(early.signal, () => t.reads.rows(t.sql, ['b'])));
      early.abort();
      await nextTurn();
      gone.abort();
      expect(await leaving).toBe('AbortError');
      expect(await neverRead).toBe('AbortError');
      await busy.release();
      expect(await staying).toEqual(['first']);
      // One connection taken by the shared read ('a'), none for 'b'.
      expect(t.taken() - before).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('are not sent once the client of every reader has hung up', async () => {
    const t = await table(kind);
    try {
      const busy = await holdConnection(t.knex);
      const before = t.sent();
      const readers = [new AbortController(), new AbortController()];
      const reads = readers.map((r) => runForRequest(r.signal, () => t.reads.rows(t.sql, ['a'])).then(() => 'read', (err: Error) => err.name));
      await nextTurn();
      for (const r of readers) r.abort();
      expect(await Promise.all(reads)).toEqual(['AbortError', 'AbortError']);
      await busy.release();
      // The connection came free after both had gone: the read was never sent.
      await t.reads.rows(t.sql, ['b']);
      expect(t.sent() - before).toBe(1);
    } finally {
      await t.close();
    }
  });
});
