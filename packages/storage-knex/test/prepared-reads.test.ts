// The by-id read of a document runs as a statement prepared once per connection (SQLite keeps it
// with the connection, PostgreSQL names it per connection): it still sees every committed write,
// holds no snapshot between reads, lets the store close its connections, survives a column a
// later migration adds, and stops with the request whose client hung up.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runForRequest } from '@vigil/core';
import { emailChannelFixture, tcpCheckFixture } from '@vigil/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { knexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { onOwnedPgStore, PG_URL } from './support/fresh-store.js';
import { holdTableLock } from './support/hold-write.js';

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const dir = mkdtempSync(join(tmpdir(), 'vigil-prepared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

describe('SQLite by-id reads on prepared statements', () => {
  it('see each committed write, and hold no snapshot between reads (a checkpoint empties the log)', async () => {
    const file = join(dir, `db-${++n}.sqlite`);
    const storage = knexStorage({ client: 'sqlite3', connection: file });
    const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
    for (let i = 0; i < 30; i++) {
      await storage.checks.update(ACCOUNT, check.id, { ...check, name: `name ${i}` } as never);
      // Several reads at once, so more than one read connection keeps the statement.
      const read = await Promise.all(Array.from({ length: 4 }, () => storage.checks.get(ACCOUNT, check.id)));
      expect(read.map((c) => c?.name)).toEqual(Array(4).fill(`name ${i}`));
    }
    // A read connection left inside a read would keep the log's frames from being checkpointed.
    const [result] = (await storage.knex.raw('PRAGMA wal_checkpoint(TRUNCATE)')) as { busy: number; log: number }[];
    expect(result).toMatchObject({ busy: 0, log: 0 });
    expect(await storage.checks.get(ACCOUNT, 'no-such-check')).toBeNull();
    await storage.close();
  });

  it('let the store close every connection: the last one to close removes the write-ahead log', async () => {
    const file = join(dir, `db-${++n}.sqlite`);
    const storage = knexStorage({ client: 'sqlite3', connection: file });
    const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
    await Promise.all(Array.from({ length: 8 }, () => storage.checks.get(ACCOUNT, check.id)));
    expect(existsSync(`${file}-wal`)).toBe(true);
    await storage.close();
    // A connection SQLite refused to close (a statement left unfinalized) keeps the log.
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('are not sent for a request whose client has hung up', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
    const abort = new AbortController();
    abort.abort();
    await expect(runForRequest(abort.signal, () => storage.checks.get(ACCOUNT, check.id))).rejects.toMatchObject({ name: 'AbortError' });
    expect((await runForRequest(new AbortController().signal, () => storage.checks.get(ACCOUNT, check.id)))?.id).toBe(check.id);
    await storage.close();
  });
});

type PlanNode = { 'Actual Rows': number; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] };

/** A PostgreSQL store with tables of its own prefix (dropped after `fn`), closed after `fn`. */
const onPgStore = (options: Parameters<typeof onOwnedPgStore>[1], fn: Parameters<typeof onOwnedPgStore>[2]) => onOwnedPgStore('prepared', options, fn);

describe.runIf(PG_URL)('PostgreSQL by-id reads on named prepared statements', () => {
  it('are prepared once per connection, see each committed write, and outlive a column added later', async () => {
    // One connection: the reads and the look at its prepared statements share it.
    await onPgStore({ pool: { min: 0, max: 1 } }, async (storage, prefix) => {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
      for (let i = 0; i < 3; i++) {
        await storage.checks.update(ACCOUNT, check.id, { ...check, name: `name ${i}` } as never);
        expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe(`name ${i}`);
      }
      const prepared = await storage.knex.raw("select statement from pg_prepared_statements where name like 'vigil_%'");
      expect(prepared.rows).toHaveLength(1);
      expect(prepared.rows[0].statement).toContain(`"${prefix}checks"`);
      // A later migration adds a column: the statement prepared before it still answers.
      await storage.knex.schema.alterTable(`${prefix}checks`, (t) => t.text('added_later'));
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('name 2');
    });
  });

  it('list the whole of an account\'s rows (as every run lists the maintenance windows) on a statement prepared once per connection too', async () => {
    await onPgStore({ pool: { min: 0, max: 1 } }, async (storage, prefix) => {
      const channel = (address: string) => emailChannelFixture({ config: { address } }) as never;
      const address = (c: unknown) => (c as { config: { address: string } }).config.address;
      const first = await storage.alertChannels.insert(ACCOUNT, channel('first@example.com'));
      await storage.alertChannels.insert('0a6c1f2e-1111-4a1b-8c1d-000000000002', channel('another-account@example.com'));
      await storage.knex.raw('DEALLOCATE ALL');
      expect((await storage.alertChannels.listAll(ACCOUNT)).map(address)).toEqual(['first@example.com']);
      const second = await storage.alertChannels.insert(ACCOUNT, channel('second@example.com'));
      await storage.alertChannels.update(ACCOUNT, first.id, { ...first, config: { address: 'renamed@example.com' } } as never);
      expect((await storage.alertChannels.listAll(ACCOUNT)).map((c) => [c.id, address(c), c.accountId])).toEqual([
        [first.id, 'renamed@example.com', ACCOUNT], [second.id, 'second@example.com', ACCOUNT],
      ]);
      const prepared = (await storage.knex.raw("select statement from pg_prepared_statements where name like 'vigil_%'")).rows as { statement: string }[];
      expect(prepared.map((p) => p.statement)).toEqual([`select id, account_id, data from "${prefix}alert_channels" where account_id = $1 order by id asc`]);
      // A column added later does not change what the prepared list answers.
      await storage.knex.schema.alterTable(`${prefix}alert_channels`, (t) => t.text('added_later'));
      expect((await storage.alertChannels.listAll(ACCOUNT)).map(address)).toEqual(['renamed@example.com', 'second@example.com']);
    });
  });

  it('stay a lookup of one row when the table grew after the statement was planned, and answer only the account\'s row', async () => {
    await onPgStore({ pool: { min: 0, max: 1 } }, async (storage, prefix) => {
      // Reads while the table is empty: PostgreSQL then keeps a generic plan made for an empty table.
      for (let i = 0; i < 8; i++) expect(await storage.checks.get(ACCOUNT, `missing-${i}`)).toBeNull();
      // The account grows by 2,000 checks (a host that adds its checks as code), and one more.
      await storage.knex.raw(
        `insert into "${prefix}checks" (id, account_id, data, name, check_type, created_at) select 'filler-' || i, ?, '{}', 'filler', 'TCP', '2026-01-01' from generate_series(1, 2000) i`,
        [ACCOUNT],
      );
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
      expect(await storage.checks.get('0a6c1f2e-1111-4a1b-8c1d-000000000002', check.id)).toBeNull();
      // The plan the read runs on: it reads the one row by id, not every row of the account.
      const [read] = (await storage.knex.raw(
        "select name, parameter_types::text[] as types, generic_plans from pg_prepared_statements where name like 'vigil_%' and statement like ?",
        [`%"${prefix}checks"%`],
      )).rows as { name: string; types: string[]; generic_plans: string }[];
      expect(Number(read!.generic_plans)).toBeGreaterThan(0);
      const args = read!.types.length === 1 ? [check.id] : [ACCOUNT, check.id];
      // EXECUTE takes its arguments as literals, not as bound parameters.
      const literals = args.map((a) => `'${a.replaceAll("'", "''")}'`).join(', ');
      const [{ 'QUERY PLAN': [{ Plan: plan }] }] = (await storage.knex.raw(`explain (analyze, format json) execute "${read!.name}"(${literals})`))
        .rows as [{ 'QUERY PLAN': [{ Plan: PlanNode }] }];
      const removed = (node: PlanNode): number => (node['Rows Removed by Filter'] ?? 0) + (node.Plans ?? []).reduce((sum, p) => sum + removed(p), 0);
      expect(removed(plan)).toBe(0);
      expect(plan['Actual Rows']).toBe(1);
    });
  });

  it('forget a statement the server no longer has (a pooler moved the session) or can no longer use (a column changed type), and answer', async () => {
    await onPgStore({ pool: { min: 0, max: 1 } }, async (storage, prefix) => {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
      // The one connection's server session drops every statement, as another session behind a pooler has none.
      await storage.knex.raw('DEALLOCATE ALL');
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
      // A column of the statement's answer changes type: the cached plan can no longer be used.
      await storage.knex.raw(`alter table "${prefix}checks" alter column id type varchar(300)`);
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
    });
  });

  it('are sent unnamed with preparedStatements: false (for a pooler that keeps no statements)', async () => {
    await onPgStore({ pool: { min: 0, max: 1 }, preparedStatements: false }, async (storage, prefix) => {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      expect((await storage.checks.get(ACCOUNT, check.id))?.name).toBe('orders-db');
      const prepared = await storage.knex.raw("select name from pg_prepared_statements where name like 'vigil_%'");
      expect(prepared.rows).toEqual([]);
    });
  });

  it('are cancelled on the server when the client hangs up, and the connection serves the next read', async () => {
    await onPgStore({ pool: { min: 0, max: 2 } }, async (storage, prefix) => {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture() as never);
      // A transaction holding the table's exclusive lock makes the read wait on the server.
      const lock = await holdTableLock(storage, `${prefix}checks`);
      const abort = new AbortController();
      const started = Date.now();
      const read = runForRequest(abort.signal, () => storage.checks.get(ACCOUNT, check.id));
      setTimeout(() => abort.abort(), 300);
      await expect(read).rejects.toMatchObject({ code: '57014' });
      expect(Date.now() - started).toBeLessThan(5_000);
      await lock.release();
      expect((await storage.checks.get(ACCOUNT, check.id))?.id).toBe(check.id);
    });
  });
});
