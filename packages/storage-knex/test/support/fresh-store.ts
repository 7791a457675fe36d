import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { knexStorage, type KnexStorage } from '../../src/index.js';

export const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

/** The real stores tests run on: SQLite always, PostgreSQL when VIGIL_PG_URL is set. */
export const STORES: ('sqlite' | 'postgres')[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/**
 * A fresh store of that kind: a SQLite file in a folder of its own, or a PostgreSQL schema of its
 * own (`prefix` names it). Closing it removes the folder or drops the schema. With a `pool`, a
 * SQLite store has no read connections of its own: every query goes through its `knex`.
 */
export async function freshStore(
  kind: 'sqlite' | 'postgres',
  prefix = 'vigil_test',
  sqliteOptions: Pick<Parameters<typeof knexStorage>[0] & object, 'pool'> = {},
): Promise<KnexStorage> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    const storage = knexStorage({ connection: join(dir, 'vigil.sqlite'), ...sqliteOptions });
    const close = storage.close.bind(storage);
    storage.close = async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    };
    return storage;
  }
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`create schema ${schema}`);
  const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 0, max: 4 } });
  const storage = knexStorage({ knex });
  const close = storage.close.bind(storage);
  storage.close = async () => {
    await close();
    await knex.destroy();
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  };
  return storage;
}

/**
 * `fn` on a store that makes its own PostgreSQL connections (Vigil's own knex, unlike `freshStore`'s,
 * which is the host's), its tables named `${name}_<random>_`; they are dropped afterwards.
 */
export async function onOwnedPgStore(
  name: string,
  options: Omit<Parameters<typeof knexStorage>[0] & object, 'client' | 'connection' | 'tablePrefix'>,
  fn: (storage: KnexStorage, prefix: string) => Promise<void>,
): Promise<void> {
  const prefix = `${name}_${randomBytes(4).toString('hex')}_`;
  const storage = knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: prefix, ...options });
  try {
    await fn(storage, prefix);
  } finally {
    await dropPrefixed(storage.knex, prefix);
    await storage.close();
  }
}

/** Drops the PostgreSQL tables whose names start with `prefix` (a store's tables, partitions included). */
export async function dropPrefixed(knex: Knex, prefix: string): Promise<void> {
  const tables = await knex.raw('select tablename from pg_tables where tablename like ?', [`${prefix}%`]);
  for (const { tablename } of tables.rows as { tablename: string }[]) await knex.schema.dropTableIfExists(tablename);
}
