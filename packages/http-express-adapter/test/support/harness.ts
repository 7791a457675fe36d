import { randomBytes } from 'node:crypto';
import express, { type Express } from 'express';
import request from 'supertest';
import { createVigil, type Vigil, type VigilOptions } from '@vigil/core';
import { FakeClock } from '@vigil/core/testing';
import { knexStorage } from '@vigil/storage-knex';
import { vigilRouter, type VigilRouterOptions } from '../../src/index.js';
import { postgresSchema } from '../../../../test/support/pg-schema.js';

export { BACKENDS, PG_URL } from '../../../../test/support/pg-schema.js';

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

const postgres = postgresSchema('api');
const postgresStorage = () => postgres.storage();

/** Drops this file's PostgreSQL schema (call in afterAll). */
export const dropPostgresSchema = (): Promise<void> => postgres.drop();

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
  // A run under way when a test ends is aborted at once: the stop deadline is on the fake clock,
  // which nothing moves after the test, so a deadline would never pass.
  return { vigil, app, clock, a: a!, b: b!, close: () => vigil.close(0) };
}
