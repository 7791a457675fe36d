import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storageSuite, tcpCheckFixture } from '@vigil/core/testing';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knexStorage } from '../src/index.js';
import { migrate } from '../src/migrations.js';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

describe('SQLite in memory', () => {
  storageSuite(it, async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
    return { storage, raw: storage.raw };
  }, { prefix: 'sqlite :memory:' });
});

describe('SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-sqlite-'));
  let n = 0;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  storageSuite(it, async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `case-${++n}.sqlite`) });
    return { storage, raw: storage.raw };
  }, { prefix: 'sqlite file' });
});

describe('SQLite file mode', () => {
  const mode = (file: string) => statSync(file).mode & 0o777;

  it('a new database file and its -wal and -shm files are readable by their owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-sqlite-mode-'));
    try {
      const file = join(dir, 'vigil.sqlite');
      const storage = knexStorage({ client: 'sqlite3', connection: file });
      expect(mode(file)).toBe(0o600);
      await storage.checks.insert('0a6c1f2e-1111-4a1b-8c1d-000000000001', tcpCheckFixture() as never);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(mode(f), f).toBe(0o600);
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an existing world-readable database file is made 0600, with its -wal and -shm files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-sqlite-mode-'));
    try {
      // As an earlier Vigil left it: a database file (and a -wal file) that anyone may read.
      const file = join(dir, 'old.sqlite');
      const first = knexStorage({ client: 'sqlite3', connection: file });
      await first.checks.listAll('0a6c1f2e-1111-4a1b-8c1d-000000000001');
      await first.close();
      writeFileSync(`${file}-wal`, '');
      for (const f of [file, `${file}-wal`]) chmodSync(f, 0o644);
      const storage = knexStorage({ client: 'sqlite3', connection: file });
      for (const f of [file, `${file}-wal`]) expect(mode(f), f).toBe(0o600);
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(PG_URL)('PostgreSQL', () => {
  // Each run gets a schema of its own and each case its own table prefix, so runs never collide.
  const schema = `vigil_test_${randomBytes(4).toString('hex')}`;
  let admin: Knex;
  let n = 0;
  beforeAll(async () => {
    admin = knexFactory({ client: 'pg', connection: PG_URL });
    await admin.raw(`create schema ${schema}`);
  });
  afterAll(async () => {
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  });
  storageSuite(it, async () => {
    const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 0, max: 4 } });
    const storage = knexStorage({ knex, tablePrefix: `c${++n}_` });
    const prefix = `c${n}_`;
    const close = storage.close;
    // Each case drops its own tables: one cascade over thousands would exhaust the lock table.
    storage.close = async () => {
      await close();
      const rows = (await knex.raw('select tablename from pg_tables where schemaname = ?', [schema])).rows as { tablename: string }[];
      for (const { tablename } of rows.filter((r) => r.tablename.startsWith(prefix))) await knex.schema.dropTableIfExists(tablename);
      await knex.destroy();
    };
    return { storage, raw: storage.raw };
  }, { prefix: 'postgres' });

  it('outbox claim: leases no more than its limit whatever plan the server picks (a nested loop over the picked heads included)', async () => {
    // The planner is kept to nested loops without materializing: the plan where a subquery of the
    // claim would run again for each row of the outbox.
    const knex = knexFactory({
      client: 'pg', connection: PG_URL, searchPath: [schema],
      pool: {
        min: 1, max: 1,
        afterCreate: (conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) => {
          conn.query('set enable_hashjoin = off; set enable_hashagg = off; set enable_mergejoin = off; set enable_material = off; set enable_sort = off', (err) => done(err, conn));
        },
      },
    });
    const storage = knexStorage({ knex, tablePrefix: 'claim_' });
    try {
      await storage.migrate();
      const at = new Date('2026-01-01T00:00:00Z');
      await storage.outbox.enqueue(Array.from({ length: 10 }, (_, i) => ({
        id: `m${i}`, accountId: 'a', checkId: `c${i}`, alertChannelId: 1, alertType: 'ALERT_FAILURE',
        payload: {}, created_at: new Date(at.getTime() + i).toISOString(), nextAttemptAt: at.toISOString(),
      })));
      const now = new Date(at.getTime() + 60_000);
      expect((await storage.outbox.claim(now, 1, 60_000, 'me')).map((m) => m.id)).toEqual(['m0']);
      expect((await storage.outbox.claim(now, 3, 60_000, 'me')).map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
      expect(await knex('claim_outbox').whereNotNull('lease_owner').orderBy('id').pluck('id')).toEqual(['m0', 'm1', 'm2', 'm3']);
    } finally {
      await knex.destroy();
    }
  });
});

describe('migrations', () => {
  it('run once, and again without effect, beside a host\'s own tables', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: ':memory:', tablePrefix: 'mon_' });
    await storage.knex.schema.createTable('orders', (t) => t.increments('id'));
    await storage.migrate();
    await storage.migrate();
    const tables = (await storage.knex.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")) as { name: string }[];
    const names = tables.map((t) => t.name);
    expect(names).toContain('orders');
    expect(names).toContain('mon_checks');
    expect(names.filter((x) => !x.startsWith('mon_'))).toEqual(['orders']);
    expect(names).toContain('mon_status_page_subscribers');
    expect(await storage.knex('mon_migrations').count({ n: '*' })).toEqual([{ n: 21 }]);
    await storage.close();
  });
});

describe('outbox claim on SQLite', () => {
  it('reads the undelivered messages in claim order from their index (no sort of the whole queue)', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
    await storage.migrate();
    const at = new Date('2026-01-01T00:00:00Z');
    const rows = Array.from({ length: 30 }, (_, i) => ({
      id: `m${String(i).padStart(2, '0')}`, accountId: 'a', checkId: `c${i % 3}`, alertChannelId: 1 + (i % 5), alertType: 'ALERT_FAILURE',
      payload: {}, created_at: new Date(at.getTime() + i).toISOString(), nextAttemptAt: at.toISOString(),
    }));
    await storage.outbox.enqueue(rows);
    const statements: { sql: string; bindings: Knex.RawBinding[] }[] = [];
    storage.knex.on('query', (q: { sql: string; bindings: Knex.RawBinding[] }) => statements.push(q));
    const claimed = await storage.outbox.claim(new Date(at.getTime() + 60_000), 4, 60_000, 'me');
    // The heads of each check and channel, oldest first.
    expect(claimed.map((m) => m.id)).toEqual(['m00', 'm01', 'm02', 'm03']);
    // One statement picks and leases them, with no transaction around it.
    const claims = statements.filter((q) => q.sql.includes('vigil_outbox'));
    expect(claims.map((q) => q.sql.split(' ')[0])).toEqual(['with']);
    expect(claims[0]!.sql).toContain('update `vigil_outbox`');
    expect(statements.map((q) => q.sql)).not.toContain('BEGIN;');
    const pick = claims[0]!;
    const plan = ((await storage.knex.raw(`explain query plan ${pick.sql}`, pick.bindings)) as { detail: string }[]).map((r) => r.detail).join('\n');
    expect(plan).toContain('vigil_outbox_undelivered_created_ms_seq_index');
    expect(plan).not.toContain('TEMP B-TREE');
    await storage.close();
  });
});

describe('outbox claim on an older SQLite schema', () => {
  it('claims without the claim-order index where a store run with migrate: false has none', async () => {
    const knex = knexFactory({ client: 'sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });
    await migrate(knex, 'vigil_', '014_delivery_attempts_outbox');
    const storage = knexStorage({ knex, migrate: false });
    const at = new Date('2026-01-01T00:00:00Z');
    await storage.outbox.enqueue([{
      id: 'm1', accountId: 'a', checkId: 'c1', alertChannelId: 1, alertType: 'ALERT_FAILURE', payload: {}, created_at: at.toISOString(), nextAttemptAt: at.toISOString(),
    }]);
    expect((await storage.outbox.claim(new Date(at.getTime() + 60_000), 4, 60_000, 'me')).map((m) => m.id)).toEqual(['m1']);
    await storage.close();
    await knex.destroy();
  });
});

describe('migration 003', () => {
  it('fills the summary columns of checks stored before it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-m3-'));
    try {
      const file = join(dir, 'old.sqlite');
      const before = knexStorage({ client: 'sqlite3', connection: file });
      const check = await before.checks.insert('acc', tcpCheckFixture({ name: 'from before' }));
      // Back to the state of a database that stopped at migration 002.
      await before.knex.schema.alterTable('vigil_checks', (t) => t.dropColumns('name', 'check_type', 'created_at'));
      await before.knex('vigil_migrations').where('name', '003_check_summaries').delete();
      await before.close();

      const after = knexStorage({ client: 'sqlite3', connection: file });
      expect(await after.checks.listSummaries('acc')).toEqual([
        { id: check.id, name: 'from before', checkType: 'TCP', created_at: check.created_at },
      ]);
      await after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
