import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkResultFixture } from '@vigil/core/testing';
import knexFactory, { type Knex } from 'knex';
import { afterAll, describe, expect, it } from 'vitest';
import { knexStorage, reclaimSqliteSpace, type KnexStorage } from '../src/index.js';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const RESULTS = 4_000;
const dir = mkdtempSync(join(tmpdir(), 'vigil-sqlite-space-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pragma = async (knex: Knex, name: string): Promise<number | string> => {
  const rows = (await knex.raw(`PRAGMA ${name}`)) as Record<string, number | string>[];
  return Object.values(rows[0]!)[0]!;
};

/** The file's size once its write-ahead log is copied into it and emptied. */
async function fileSize(storage: KnexStorage, file: string): Promise<number> {
  await storage.knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  return statSync(file).size;
}

/** A few thousand TCP results of 10 checks a minute apart, each with a response excerpt of its own. */
async function insertResults(storage: KnexStorage): Promise<void> {
  const t0 = Date.UTC(2026, 4, 1);
  for (let start = 0; start < RESULTS; start += 1_000) {
    const batch = Array.from({ length: 1_000 }, (_, i) => {
      const n = start + i;
      return checkResultFixture(`check-${n % 10}`, {
        startedAt: new Date(t0 + Math.floor(n / 10) * 60_000).toISOString(),
        details: { remoteAddress: '10.0.3.17', response: randomBytes(300).toString('hex') },
      });
    });
    await storage.checkResults.insertMany(ACCOUNT, batch);
  }
}

const everything = new Date(Date.UTC(2030, 0, 1));

describe('SQLite file space', () => {
  it('a file Vigil creates uses incremental auto-vacuum, and the space deleted results took goes back to the file system', async () => {
    const file = join(dir, 'new.sqlite');
    const storage = knexStorage({ connection: file });
    try {
      await storage.migrate();
      expect(await pragma(storage.knex, 'auto_vacuum')).toBe(2);
      const pageSize = Number(await pragma(storage.knex, 'page_size'));
      await insertResults(storage);
      const full = await fileSize(storage, file);
      expect(await storage.checkResults.deleteOlderThan(everything)).toBe(RESULTS);
      // Deleting frees pages inside the file; the file keeps them until they are reclaimed.
      const free = Number(await pragma(storage.knex, 'freelist_count'));
      expect(free * pageSize).toBeGreaterThan(1_000_000);
      expect(await fileSize(storage, file)).toBe(full);

      // A cap frees that many pages and no more.
      expect(await reclaimSqliteSpace(storage.knex, 10)).toBe(10);
      expect(await pragma(storage.knex, 'freelist_count')).toBe(free - 10);
      expect(await reclaimSqliteSpace(storage.knex)).toBe(free - 10);
      expect(await pragma(storage.knex, 'freelist_count')).toBe(0);
      const reclaimed = await fileSize(storage, file);
      expect(full - reclaimed).toBeGreaterThanOrEqual(free * pageSize);
      expect(await reclaimSqliteSpace(storage.knex)).toBe(0);

      // The file stays whole and takes new results.
      expect(await pragma(storage.knex, 'integrity_check')).toBe('ok');
      await storage.checkResults.insertMany(ACCOUNT, [checkResultFixture('check-1', { responseTime: 42 })]);
      expect((await storage.checkResults.listByCheck(ACCOUNT, 'check-1', { limit: 10, offset: 0 })).items.map((r) => r.responseTime)).toEqual([42]);
    } finally {
      await storage.close();
    }
  });

  it('a file made with auto-vacuum off keeps it: its free pages stay in the file for reuse and reclaiming answers 0', async () => {
    const file = join(dir, 'old.sqlite');
    // As a file from before Vigil set incremental auto-vacuum: it already has a table.
    const earlier = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
    await earlier.raw('PRAGMA auto_vacuum = NONE');
    await earlier.schema.createTable('host_notes', (t) => t.increments('id'));
    await earlier.destroy();

    const storage = knexStorage({ connection: file });
    try {
      await storage.migrate();
      expect(await pragma(storage.knex, 'auto_vacuum')).toBe(0);
      await insertResults(storage);
      expect(await storage.checkResults.deleteOlderThan(everything)).toBe(RESULTS);
      const free = Number(await pragma(storage.knex, 'freelist_count'));
      expect(free).toBeGreaterThan(0);
      const size = await fileSize(storage, file);
      expect(await reclaimSqliteSpace(storage.knex)).toBe(0);
      expect(await pragma(storage.knex, 'freelist_count')).toBe(free);
      expect(await fileSize(storage, file)).toBe(size);
    } finally {
      await storage.close();
    }
  });

  it('a file that uses full auto-vacuum keeps it, and reclaiming answers 0', async () => {
    const file = join(dir, 'full.sqlite');
    const earlier = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
    await earlier.raw('PRAGMA auto_vacuum = FULL');
    await earlier.schema.createTable('host_notes', (t) => t.increments('id'));
    await earlier.destroy();

    const storage = knexStorage({ connection: file });
    try {
      await storage.migrate();
      expect(await pragma(storage.knex, 'auto_vacuum')).toBe(1);
      expect(await reclaimSqliteSpace(storage.knex)).toBe(0);
    } finally {
      await storage.close();
    }
  });

  it("a host's own knex is left as the host set it", async () => {
    const file = join(dir, 'host.sqlite');
    const knex = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
    const storage = knexStorage({ knex });
    try {
      await storage.migrate();
      expect(await pragma(knex, 'auto_vacuum')).toBe(0);
      expect(await reclaimSqliteSpace(knex)).toBe(0);
    } finally {
      await storage.close();
      await knex.destroy();
    }
  });
});

describe.runIf(PG_URL)('PostgreSQL space', () => {
  it('reclaiming does nothing and answers 0 (autovacuum makes deleted rows reusable)', async () => {
    const knex = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
    try {
      // No table is made: only the call is under test.
      const storage = knexStorage({ knex, migrate: false });
      expect(await reclaimSqliteSpace(storage.knex)).toBe(0);
      expect(await reclaimSqliteSpace(storage.knex, 10)).toBe(0);
      await storage.close();
    } finally {
      await knex.destroy();
    }
  });
});
