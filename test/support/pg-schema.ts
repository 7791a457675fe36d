// PostgreSQL for a test file: a schema of the file's own, made on first use and dropped by
// `drop()` (in afterAll), with a store per harness whose tables carry a prefix of their own.
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { knexStorage } from '@vigil/storage-knex';

export const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

/** The databases a suite runs on: SQLite always, PostgreSQL when VIGIL_PG_URL is set. */
export const BACKENDS: ('sqlite' | 'postgres')[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface PostgresSchema {
  /** A store in the schema; its close drops its own tables. */
  storage(): Promise<ReturnType<typeof knexStorage>>;
  /** Drops the schema, if one was made. */
  drop(): Promise<void>;
}

export function postgresSchema(name: string): PostgresSchema {
  let schema: string | undefined;
  let admin: Knex | undefined;
  let serial = 0;
  return {
    async storage() {
      if (!admin) {
        admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 2 } });
        schema = `vigil_${name}_${randomBytes(4).toString('hex')}`;
        await admin.raw(`create schema ${schema}`);
      }
      const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema!], pool: { min: 0, max: 4 } });
      const prefix = `h${++serial}_`;
      const storage = knexStorage({ knex, tablePrefix: prefix });
      const close = storage.close;
      // Each store drops its own tables, a few at a time: one cascade over every test's tables at
      // the end would take more locks than the server allows.
      storage.close = async () => {
        await close();
        const { rows } = (await knex.raw('select tablename from pg_tables where schemaname = ? and tablename like ?', [schema!, `${prefix}%`])) as { rows: { tablename: string }[] };
        for (let i = 0; i < rows.length; i += 10) {
          await knex.raw(`drop table if exists ${rows.slice(i, i + 10).map((r) => `"${r.tablename}"`).join(', ')} cascade`);
        }
        await knex.destroy();
      };
      return storage;
    },
    async drop() {
      if (admin && schema) await admin.raw(`drop schema ${schema} cascade`);
      await admin?.destroy();
      admin = undefined;
    },
  };
}
