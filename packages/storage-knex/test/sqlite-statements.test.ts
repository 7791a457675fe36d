// A SQLite connection of Vigil's own pools keeps the statements of its queries: a query run again
// binds and runs its kept statement instead of preparing one. It answers as the driver's `run` and
// `all` answer (rows, lastID, changes, SQLite's own errors), keeps only what steps to its end,
// keeps no more than MAX_STATEMENTS, and still lets the connection close (the write-ahead log is
// removed by the last connection to close, which SQLite refuses while statements are left).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tcpCheckFixture } from '@vigil/core/testing';
import sqlite3 from 'sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { knexStorage } from '../src/index.js';
import { keepStatements, keptStatements, MAX_BINDINGS, MAX_BOUND, MAX_STATEMENTS, type StatementClass } from '../src/sqlite-statements.js';

const dir = mkdtempSync(join(tmpdir(), 'vigil-statements-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

type Outcome = { err: Error | null; rows?: unknown; lastID?: number; changes?: number };

/** A WAL-mode connection that keeps its statements, counting the statements it prepares. */
async function connection() {
  const file = join(dir, `db-${++n}.sqlite`);
  const db = new sqlite3.Database(file);
  await new Promise<void>((resolve, reject) => db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)', (e) => (e ? reject(e) : resolve())));
  let prepared = 0;
  // The driver's Statement, counting the statements made.
  const Counting = function (connection: sqlite3.Database, sql: string, cb: (err: Error | null) => void) {
    prepared++;
    return new (sqlite3.Statement as unknown as StatementClass)(connection, sql, cb);
  } as unknown as StatementClass;
  keepStatements(db, Counting);
  const call = (method: 'run' | 'all', sql: string, bindings: unknown[] = []) => new Promise<Outcome>((resolve) => {
    (db[method] as (sql: string, bindings: unknown[], cb: (this: Outcome, err: Error | null, rows?: unknown) => void) => void)(sql, bindings, function (err, rows) {
      // The driver calls back a query whose statement did not prepare with no `this`.
      resolve({ err, rows, lastID: this?.lastID, changes: this?.changes });
    });
  });
  const close = () => new Promise<Error | null>((resolve) => db.close((err) => resolve(err)));
  return { db, file, call, close, prepared: () => prepared };
}

describe('SQLite connections that keep their statements', () => {
  it('prepare a query once and answer each run as the driver does: rows, lastID, changes', async () => {
    const c = await connection();
    const insert = 'INSERT INTO t (name) VALUES (?)';
    expect(await c.call('run', insert, ['a'])).toMatchObject({ err: null, lastID: 1, changes: 1 });
    expect(await c.call('run', insert, ['b'])).toMatchObject({ err: null, lastID: 2, changes: 1 });
    const select = 'SELECT id, name FROM t WHERE name = ?';
    expect((await c.call('all', select, ['a'])).rows).toEqual([{ id: 1, name: 'a' }]);
    expect((await c.call('all', select, ['b'])).rows).toEqual([{ id: 2, name: 'b' }]);
    expect(await c.call('run', 'UPDATE t SET name = name || ? WHERE id > ?', ['!', 0])).toMatchObject({ err: null, changes: 2 });
    expect(await c.call('run', 'UPDATE t SET name = name || ? WHERE id > ?', ['!', 1])).toMatchObject({ err: null, changes: 1 });
    expect(c.prepared()).toBe(3);
    expect(keptStatements(c.db)).toBe(3);
    // Several at once on the same statement: each gets its own answer.
    const many = await Promise.all(['a!', 'b!!', 'none'].map((name) => c.call('all', select, [name])));
    expect(many.map((o) => o.rows)).toEqual([[{ id: 1, name: 'a!' }], [{ id: 2, name: 'b!!' }], []]);
    expect(c.prepared()).toBe(3);
    expect(await c.close()).toBeNull();
    expect(existsSync(`${c.file}-wal`)).toBe(false);
  });

  it('keep neither a run that returns rows, nor a statement of many values, nor one that does not prepare', async () => {
    const c = await connection();
    const returning = 'INSERT INTO t (name) VALUES (?) RETURNING id';
    expect(await c.call('run', returning, ['a'])).toMatchObject({ err: null, lastID: 1 });
    expect(await c.call('run', returning, ['b'])).toMatchObject({ err: null, lastID: 2 });
    const wide = `SELECT id FROM t WHERE id IN (${Array(MAX_BINDINGS + 1).fill('?').join(', ')})`;
    expect((await c.call('all', wide, Array.from({ length: MAX_BINDINGS + 1 }, (_, i) => i))).rows).toEqual([{ id: 1 }, { id: 2 }]);
    expect(keptStatements(c.db)).toBe(0);
    // SQLite's own error, as the driver gives it; once the table is there, the same query works.
    const missing = 'SELECT * FROM later WHERE id = ?';
    const failed = await c.call('all', missing, [1]);
    expect(failed.err).toMatchObject({ code: 'SQLITE_ERROR', message: expect.stringContaining('no such table: later') });
    expect(keptStatements(c.db)).toBe(0);
    // A query with no values is left to the driver too (it would run a kept statement with the values of its last use).
    expect((await c.call('all', 'CREATE TABLE later (id INTEGER)', [])).err).toBeNull();
    expect(keptStatements(c.db)).toBe(0);
    expect(await c.call('all', missing, [1])).toMatchObject({ err: null, rows: [] });
    // A statement whose run fails (a constraint) stays, and runs again.
    const insert = 'INSERT INTO t (name) VALUES (?)';
    expect((await c.call('run', insert, ['a'])).err).toMatchObject({ code: 'SQLITE_CONSTRAINT' });
    expect(await c.call('run', insert, ['c'])).toMatchObject({ err: null, lastID: 3 });
    expect(keptStatements(c.db)).toBe(2);
    expect(await c.close()).toBeNull();
    expect(existsSync(`${c.file}-wal`)).toBe(false);
  });

  it('reset a kept statement whose query met another connection\'s lock, so later writes commit', async () => {
    const c = await connection();
    const insert = 'INSERT INTO t (name) VALUES (?)';
    expect((await c.call('run', insert, ['a'])).err).toBeNull();
    const other = new sqlite3.Database(c.file);
    const exec = (db: sqlite3.Database, sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (e) => (e ? reject(e) : resolve())));
    await exec(other, 'BEGIN IMMEDIATE');
    // No busy timeout on this connection: the kept insert meets the lock at once.
    expect((await c.call('run', insert, ['b'])).err).toMatchObject({ code: 'SQLITE_BUSY' });
    expect((await c.call('all', 'SELECT name FROM t WHERE id > ?', [0])).err).toBeNull();
    await exec(other, 'ROLLBACK');
    // A statement left running would keep this write from committing (another connection would not
    // see it), and a transaction's COMMIT from succeeding. Neither runs the insert's SQL again,
    // which would reset its statement.
    const seen = () => new Promise<unknown[]>((resolve, reject) => other.all('SELECT name FROM t ORDER BY id', (e, rows) => (e ? reject(e) : resolve(rows))));
    expect(await c.call('run', 'UPDATE t SET name = ? WHERE id = ?', ['a2', 1])).toMatchObject({ err: null, changes: 1 });
    expect(await seen()).toEqual([{ name: 'a2' }]);
    expect((await c.call('all', 'BEGIN')).err).toBeNull();
    expect((await c.call('run', 'INSERT INTO t (id, name) VALUES (?, ?)', [5, 'c'])).err).toBeNull();
    expect((await c.call('all', 'COMMIT')).err).toBeNull();
    expect(await seen()).toEqual([{ name: 'a2' }, { name: 'c' }]);
    await new Promise((resolve) => other.close(resolve));
    expect(await c.close()).toBeNull();
  });

  it('leave a statement of large values to the driver, and give each query of a statement that does not prepare an error of its own', async () => {
    const c = await connection();
    const insert = 'INSERT INTO t (name) VALUES (?)';
    expect(await c.call('run', insert, ['x'.repeat(MAX_BOUND + 1)])).toMatchObject({ err: null, lastID: 1 });
    expect(keptStatements(c.db)).toBe(0);
    expect(await c.call('run', insert, ['small'])).toMatchObject({ err: null, lastID: 2 });
    expect(keptStatements(c.db)).toBe(1);
    const [one, two] = await Promise.all([1, 2].map((i) => c.call('all', 'SELECT * FROM missing WHERE id = ?', [i])));
    expect(one!.err).toMatchObject({ code: 'SQLITE_ERROR', message: expect.stringContaining('no such table: missing') });
    expect(two!.err).toMatchObject({ code: 'SQLITE_ERROR' });
    expect(one!.err).not.toBe(two!.err);
    expect(keptStatements(c.db)).toBe(1);
    expect(await c.close()).toBeNull();
  });

  it('run in a transaction that rolls back or commits', async () => {
    const c = await connection();
    for (const end of ['ROLLBACK', 'COMMIT']) {
      expect((await c.call('all', 'BEGIN')).err).toBeNull();
      expect((await c.call('run', 'INSERT INTO t (name) VALUES (?)', [end])).err).toBeNull();
      expect((await c.call('all', 'SELECT count(*) AS n FROM t')).rows).toEqual([{ n: 1 }]);
      // COMMIT fails while any statement is still running: none is.
      expect((await c.call('all', end)).err).toBeNull();
    }
    expect((await c.call('all', 'SELECT name FROM t')).rows).toEqual([{ name: 'COMMIT' }]);
    expect(await c.close()).toBeNull();
  });

  it(`keep at most ${MAX_STATEMENTS}, finalizing the least recently used`, async () => {
    const c = await connection();
    const count = (i: number) => `SELECT count(*) + ${i} AS n FROM t WHERE id > ?`;
    for (let i = 0; i < MAX_STATEMENTS + 20; i++) expect((await c.call('all', count(i), [0])).rows).toEqual([{ n: i }]);
    expect(keptStatements(c.db)).toBe(MAX_STATEMENTS);
    // The most recent are kept, the first were finalized: running one again prepares it anew.
    const before = c.prepared();
    await c.call('all', count(MAX_STATEMENTS + 19), [0]);
    expect(c.prepared()).toBe(before);
    expect((await c.call('all', count(0), [0])).rows).toEqual([{ n: 0 }]);
    expect(c.prepared()).toBe(before + 1);
    expect(keptStatements(c.db)).toBe(MAX_STATEMENTS);
    expect(await c.close()).toBeNull();
    expect(existsSync(`${c.file}-wal`)).toBe(false);
  });

  it('serve the store\'s writer and readers: knex answers as before, and the store closes every connection', async () => {
    const file = join(dir, `store-${++n}.sqlite`);
    const storage = knexStorage({ client: 'sqlite3', connection: file });
    const check = await storage.checks.insert('acct', tcpCheckFixture({ name: 'first' }) as never);
    await storage.knex.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('text');
    });
    // knex's answers from a kept statement: the new row's id, and the rows changed or deleted.
    for (const text of ['a', 'b']) await storage.knex('notes').insert({ text });
    expect(await storage.knex('notes').insert({ text: 'c' })).toEqual([3]);
    expect(await storage.knex('notes').where('id', '>', 1).update({ text: 'x' })).toBe(2);
    expect(await storage.knex('notes').where('id', 1).del()).toBe(1);
    expect(await storage.knex('notes').select('id', 'text').orderBy('id')).toEqual([{ id: 2, text: 'x' }, { id: 3, text: 'x' }]);
    await storage.knex.transaction(async (trx) => {
      await trx('notes').insert({ text: 'in a transaction' });
    });
    expect(await storage.knex('notes').count({ n: '*' })).toEqual([{ n: 3 }]);
    const writer = await storage.knex.client.acquireConnection();
    expect(keptStatements(writer)).toBeGreaterThan(5);
    await storage.knex.client.releaseConnection(writer);
    for (let i = 0; i < 3; i++) await storage.checks.update('acct', check.id, { ...check, name: `name ${i}` } as never);
    expect((await storage.checks.list('acct', { limit: 10, offset: 0 })).items.map((c) => c.name)).toEqual(['name 2']);
    await storage.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });
  it('serve a store given pool settings too, whose own afterCreate still runs, and the reads by id', async () => {
    const file = join(dir, `store-${++n}.sqlite`);
    let created = 0;
    const storage = knexStorage({ client: 'sqlite3', connection: file, pool: { min: 1, max: 1, afterCreate: (conn: unknown, done: (err: Error | null, conn: unknown) => void) => {
      created++;
      done(null, conn);
    } } });
    const check = await storage.checks.insert('acct', tcpCheckFixture({ name: 'first' }) as never);
    for (let i = 0; i < 3; i++) expect((await storage.checks.get('acct', check.id))?.name).toBe('first');
    const connection = await storage.knex.client.acquireConnection();
    // The by-id read and the insert, at least, are kept.
    expect(keptStatements(connection)).toBeGreaterThanOrEqual(2);
    await storage.knex.client.releaseConnection(connection);
    expect(created).toBe(1);
    await storage.close();
  });
});
