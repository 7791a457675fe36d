import { randomBytes } from 'node:crypto';
import express, { type Express } from 'express';
import request from 'supertest';
import { createVigil, type Vigil, type VigilOptions } from '@vigil/core';
import { FakeClock } from '@vigil/core/testing';
import { knexStorage } from '@vigil/storage-knex';
import { registerAlertChannels } from '@vigil/alert-channels';
import { tcpRunner } from '@vigil/runner-tcp';
import { vigilConsole, type VigilConsoleOptions } from '../../src/index.js';
import { postgresSchema } from '../../../../test/support/pg-schema.js';

export { BACKENDS, PG_URL } from '../../../../test/support/pg-schema.js';

const SECRET = randomBytes(32).toString('hex');

export interface Account {
  accountId: string;
  key: string;
}

export interface ConsoleHarness {
  vigil: Vigil;
  app: Express;
  clock: FakeClock;
  a: Account;
  b: Account;
  close(): Promise<void>;
}

const postgres = postgresSchema('console');
const postgresStorage = () => postgres.storage();

/** Drops this file's PostgreSQL schema (call in afterAll). */
export const dropPostgresSchema = (): Promise<void> => postgres.drop();

/** A real express() host with the console at /console, on SQLite (in memory) or PostgreSQL, with two accounts and a key each, the TCP runner and the alert channels. */
export async function consoleHarness(
  backend: 'sqlite' | 'postgres' = 'sqlite',
  options: VigilConsoleOptions = {},
  vigilOptions: Partial<VigilOptions> = {},
): Promise<ConsoleHarness> {
  const storage = backend === 'postgres' ? await postgresStorage() : knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  const clock = new FakeClock(new Date('2026-05-01T12:00:00.000Z'));
  // The TCP runner and the built-in alert channels, as a host installs them.
  const vigil = createVigil({ runners: [tcpRunner()], ...vigilOptions, storage, secretKey: SECRET, clock }, (container) => {
    registerAlertChannels(container, {});
  });
  const app = express();
  app.use('/console', vigilConsole(vigil, options));
  const accounts = await Promise.all(['Account A', 'Account B'].map((name) => vigil.accounts.ensure(undefined, name)));
  const [a, b] = await Promise.all(accounts.map(async (acc) => ({ accountId: acc.id, key: (await vigil.apiKeys.create(acc.id, { name: 'test' })).key })));
  // A run under way when a test ends is aborted at once: the stop deadline is on the fake clock,
  // which nothing moves after the test, so a deadline would never pass.
  return { vigil, app, clock, a: a!, b: b!, close: () => vigil.close(0) };
}

/** The CSRF token a page of the console carries. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html) ?? /<meta name="csrf-token" content="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}

/** A browser-like client (keeps cookies) signed in as `account`. */
export async function signedIn(app: Express, account: Account): Promise<{ agent: ReturnType<typeof request.agent>; csrf: string }> {
  const agent = request.agent(app);
  const page = await agent.get('/console/sign-in');
  const res = await agent.post('/console/sign-in').type('form').send({ _csrf: csrfOf(page.text), account: account.accountId, key: account.key, next: '/' });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${res.text.slice(0, 300)}`);
  const home = await agent.get('/console/');
  return { agent, csrf: csrfOf(home.text) };
}
