import { randomBytes } from 'node:crypto';
import express, { type Express } from 'express';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { createVigil, type Vigil, type VigilOptions } from '@vigil/core';
import { FakeClock } from '@vigil/core/testing';
import { knexStorage } from '@vigil/storage-knex';
import { vigilRouter, type VigilRouterOptions } from '../../src/index.js';

export const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

/** The databases the API suite runs on: SQLite always, PostgreSQL when VIGIL_PG_URL is set. */
export const BACKENDS: ('sqlite' | 'postgres')[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

const SECRET = randomBytes(32).toString('hex');

/** A client of one account: every request carries its key and account header. */
export interface ApiClient {
  accountId: string;
  key: string;
  get(path: string): request.Test;
  post(path: string, body?: unknown): request.Test;
  put(path: string, body?: unknown): request.Test;
  patch(path: string, body?: unknown): request.Test;
  delete(path: string): request.Test;
  /** The same request without credentials. */
  anonymous(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string): request.Test;
  /** With this client's key but another account's header. */
  asAccount(accountId: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string): request.Test;
}

export interface ApiHarness {
  vigil: Vigil;
  app: Express;
  clock: FakeClock;
  /** Two accounts, each with its own key. */
  a: ApiClient;
  b: ApiClient;
  close(): Promise<void>;
}

let pgSchema: string | undefined;
let pgAdmin: Knex | undefined;
let serial = 0;

async function postgresStorage() {
  if (!pgAdmin) {
    pgAdmin = knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 2 } });
    pgSchema = `vigil_api_${randomBytes(4).toString('hex')}`;
    await pgAdmin.raw(`create schema ${pgSchema}`);
  }
  const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [pgSchema!], pool: { min: 0, max: 4 } });
  const prefix = `h${++serial}_`;
  const storage = knexStorage({ knex, tablePrefix: prefix });
  const close = storage.close;
  // Each harness drops its own tables, a few at a time: one cascade over every test's tables at
  // the end would take more locks than the server allows.
  storage.close = async () => {
    await close();
    const { rows } = (await knex.raw('select tablename from pg_tables where schemaname = ? and tablename like ?', [pgSchema!, `${prefix}%`])) as { rows: { tablename: string }[] };
    for (let i = 0; i < rows.length; i += 10) {
      await knex.raw(`drop table if exists ${rows.slice(i, i + 10).map((r) => `"${r.tablename}"`).join(', ')} cascade`);
    }
    await knex.destroy();
  };
  return storage;
}

/** Drops this file's PostgreSQL schema (call in afterAll). */
export async function dropPostgresSchema(): Promise<void> {
  if (pgAdmin && pgSchema) await pgAdmin.raw(`drop schema ${pgSchema} cascade`);
  await pgAdmin?.destroy();
  pgAdmin = undefined;
}

function client(app: Express, accountId: string, key: string): ApiClient {
  const withAuth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`).set('x-service-account', accountId);
  const agent = request(app);
  return {
    accountId,
    key,
    get: (path) => withAuth(agent.get(path)),
    post: (path, body) => (body === undefined ? withAuth(agent.post(path)) : withAuth(agent.post(path)).send(body as object)),
    put: (path, body) => (body === undefined ? withAuth(agent.put(path)) : withAuth(agent.put(path)).send(body as object)),
    patch: (path, body) => (body === undefined ? withAuth(agent.patch(path)) : withAuth(agent.patch(path)).send(body as object)),
    delete: (path) => withAuth(agent.delete(path)),
    anonymous: (method, path) => agent[method](path),
    asAccount: (other, method, path) => agent[method](path).set('Authorization', `Bearer ${key}`).set('x-service-account', other),
  };
}

/**
 * A real express() host with the router mounted at /api, on SQLite (in memory) or PostgreSQL,
 * with two accounts and a key each. `vigilOptions` adds host options (a target policy, say).
 */
export async function apiHarness(
  backend: 'sqlite' | 'postgres' = 'sqlite',
  options: VigilRouterOptions = {},
  vigilOptions: Partial<VigilOptions> = {},
): Promise<ApiHarness> {
  const storage = backend === 'postgres' ? await postgresStorage() : knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  const clock = new FakeClock(new Date('2026-05-01T12:00:00.000Z'));
  const vigil = createVigil({ ...vigilOptions, storage, secretKey: SECRET, clock });
  const app = express();
  app.get('/host-route', (_req, res) => {
    res.json({ host: true });
  });
  app.use('/api', vigilRouter(vigil, options));
  const accounts = await Promise.all(['Account A', 'Account B'].map((name) => vigil.accounts.ensure(undefined, name)));
  const [a, b] = await Promise.all(accounts.map(async (acc) => {
    const { key } = await vigil.apiKeys.create(acc.id, { name: 'test' });
    return client(app, acc.id, key);
  }));
  return { vigil, app, clock, a: a!, b: b!, close: () => vigil.close() };
}
