/**
 * A Vigil host as an operator runs it, for the reliability tests: a real store (a SQLite file, or
 * a schema of its own on PostgreSQL when VIGIL_PG_URL is set), the engine and the dispatcher on
 * the system clock, the public API on a real express() app, and a Logger that keeps every entry.
 * Every response a test reads through `api()` is kept too, so a test can scan all of them.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type Express } from 'express';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { createVigil, type AlertTransport, type Logger, type LogMeta, type Runner, type Vigil } from '@vigil/core';
import { knexStorage, type KnexStorage } from '@vigil/storage-knex';
import { vigilRouter } from '@vigil/http-express-adapter';

export const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

export type Backend = 'sqlite' | 'postgres';
/** SQLite always; PostgreSQL when VIGIL_PG_URL is set (CI sets it and VIGIL_REQUIRE_PG). */
export const BACKENDS: Backend[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface LogEntry {
  level: 'error' | 'warn' | 'info' | 'debug';
  msg: string;
  meta: LogMeta;
}

/** A Logger port that keeps every entry of every level, child loggers' included. */
export function keepingLogger(entries: LogEntry[], bound: LogMeta = {}): Logger {
  const at = (level: LogEntry['level']) => (msg: string, meta?: LogMeta) => {
    entries.push({ level, msg, meta: { ...bound, ...meta } });
  };
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: (meta) => keepingLogger(entries, { ...bound, ...meta }),
  };
}

/** A log entry as text, errors with their message and stack. */
export function logText(entry: LogEntry): string {
  return `${entry.level} ${entry.msg} ${JSON.stringify(entry.meta, (_k, value: unknown) =>
    value instanceof Error ? { name: value.name, message: value.message, stack: value.stack, cause: String(value.cause) } : value)}`;
}

/** Credentials of one request: an account's key and header, or whatever a test wants to try. */
export interface Credentials {
  authorization?: string;
  account?: string;
}

export interface Recorded {
  method: string;
  path: string;
  status: number;
  /** The body as sent, and the response headers. */
  text: string;
  headers: string;
}

export interface Stack {
  backend: Backend;
  vigil: Vigil;
  app: Express;
  storage: KnexStorage;
  secretKey: string;
  logs: LogEntry[];
  /** Every response read through `api`. */
  responses: Recorded[];
  /** A request to the public API (mounted at /api), kept in `responses`. */
  api(method: Method, path: string, credentials: Credentials, body?: unknown): Promise<request.Response>;
  /** Every table of the store, every row, as the database holds it (past the repositories). */
  dump(): Promise<Record<string, Record<string, unknown>[]>>;
  /**
   * Every row of every table as the database prints it (`row::text` on PostgreSQL), and on
   * SQLite the bytes of the database files (free pages and the write-ahead log included).
   */
  rawText(): Promise<string[]>;
  close(): Promise<void>;
}

export interface StackOptions {
  runners?: Runner[];
  transports?: AlertTransport[];
}

interface Store {
  storage: KnexStorage;
  tables(): Promise<string[]>;
  rawText(tables: string[]): Promise<string[]>;
  close(): Promise<void>;
}

function sqliteStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-rel-db-'));
  const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'vigil.sqlite') });
  return {
    storage,
    tables: async () => ((await storage.knex.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")) as { name: string }[]).map((r) => r.name),
    // The files themselves: what a copy of the database (or a stolen disk) holds, free pages included.
    rawText: async () => readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')),
    close: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresStore(): Store {
  const schema = `vigil_rel_${randomBytes(5).toString('hex')}`;
  const knex: Knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 0, max: 4 } });
  const storage = knexStorage({ knex });
  const ready = knex.raw(`create schema ${schema}`);
  const migrate = storage.migrate.bind(storage);
  storage.migrate = async () => {
    await ready;
    await migrate();
  };
  const tables = async () => ((await knex.raw('select tablename from pg_tables where schemaname = ? order by tablename', [schema])) as { rows: { tablename: string }[] }).rows.map((r) => r.tablename);
  return {
    storage,
    tables,
    rawText: async (names) => {
      const out: string[] = [];
      for (const t of names) {
        const { rows } = (await knex.raw(`select t::text as row from "${schema}"."${t}" t`)) as { rows: { row: string }[] };
        out.push(...rows.map((r) => r.row));
      }
      return out;
    },
    close: async () => {
      await storage.close();
      await knex.raw(`drop schema ${schema} cascade`);
      await knex.destroy();
    },
  };
}

/** Starts a host on the backend; `start()` of the engine is the test's to call. */
export async function startStack(backend: Backend, options: StackOptions = {}): Promise<Stack> {
  const store = backend === 'postgres' ? postgresStore() : sqliteStore();
  await store.storage.migrate();
  const logs: LogEntry[] = [];
  const responses: Recorded[] = [];
  const secretKey = randomBytes(32).toString('hex');
  const vigil = createVigil({
    storage: store.storage,
    secretKey,
    logger: keepingLogger(logs),
    runners: options.runners ?? [],
    transports: options.transports ?? [],
    apiKeyCacheSeconds: 0,
    engine: { pollMs: 20 },
    alerts: { pollMs: 50, backoffBaseMs: 50 },
  });
  const app = express();
  app.use('/api', vigilRouter(vigil, { rateLimit: false }));
  // One listening server for every request (supertest would bind a new one per request).
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');

  const dump = async () => {
    const out: Record<string, Record<string, unknown>[]> = {};
    for (const table of await store.tables()) {
      const rows = (await store.storage.knex(table).select('*')) as Record<string, unknown>[];
      out[table] = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, value]) => [k, Buffer.isBuffer(value) ? value.toString('latin1') : value])))
        .sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
    }
    return out;
  };

  return {
    backend,
    vigil,
    app,
    storage: store.storage,
    secretKey,
    logs,
    responses,
    async api(method, path, credentials, body) {
      let t = request(server)[method](`/api${path}`);
      if (credentials.authorization !== undefined) t = t.set('Authorization', credentials.authorization);
      if (credentials.account !== undefined) t = t.set('x-service-account', credentials.account);
      const res = body === undefined ? await t : await t.send(body as object);
      responses.push({ method: method.toUpperCase(), path, status: res.status, text: res.text ?? '', headers: JSON.stringify(res.headers) });
      return res;
    },
    dump,
    rawText: async () => store.rawText(await store.tables()),
    async close() {
      await vigil.stop(0).catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}

/** An account with a key, as the host's admin issues it. */
export interface Account {
  id: string;
  key: string;
  keyId: string;
  /** The account's own credentials. */
  credentials: Credentials;
}

export async function newAccount(stack: Stack, name: string): Promise<Account> {
  const account = await stack.vigil.accounts.ensure(undefined, name);
  const { key, apiKey } = await stack.vigil.apiKeys.create(account.id, { name: `${name} key` });
  return { id: account.id, key, keyId: apiKey.id, credentials: { authorization: `Bearer ${key}`, account: account.id } };
}
