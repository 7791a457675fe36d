import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knexFactory from 'knex';
import type { VigilStorage } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

/** The real stores the delivery tests run on: SQLite always, PostgreSQL when VIGIL_PG_URL is set. */
export const STORES: ('sqlite' | 'postgres')[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** A fresh store of that kind; closing it removes its file or its schema. */
export async function freshStorage(kind: 'sqlite' | 'postgres'): Promise<VigilStorage> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-alerts-'));
    const storage = knexStorage({ connection: join(dir, 'vigil.sqlite') });
    const close = storage.close.bind(storage);
    storage.close = async () => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    };
    return storage;
  }
  const schema = `vigil_alerts_${randomBytes(4).toString('hex')}`;
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
