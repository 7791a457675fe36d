import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';

/** The PostgreSQL server the reliability tests use; CI sets it (and VIGIL_REQUIRE_PG) and must run them. */
export const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

export interface FreshDatabase {
  /** The URL of the new database. */
  readonly url: string;
  /** A connection to it that bypasses Vigil, for reading rows back as stored. */
  readonly raw: Knex;
  /** The URL with another host and port (for a proxy in front of the server). */
  via(host: string, port: number): string;
  drop(): Promise<void>;
}

/** An empty database of its own for one test, dropped afterwards (with whatever still holds it open). */
export async function freshDatabase(tag: string): Promise<FreshDatabase> {
  if (!PG_URL) throw new Error('VIGIL_PG_URL is not set');
  const name = `vigil_${tag}_${randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  const raw = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 2 } });
  return {
    url,
    raw,
    via(host, port) {
      const v = new URL(url);
      v.hostname = host;
      v.port = String(port);
      return v.toString();
    },
    async drop() {
      await raw.destroy();
      await admin.raw(`drop database if exists "${name}" with (force)`);
      await admin.destroy();
    },
  };
}
