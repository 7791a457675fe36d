import { STORAGE, type PluginRegistry, type VigilStorage } from '@vigil/core';
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import { cancelWithRequest } from './cancel.js';
import { preparedReads, preparedWrites } from './prepared.js';
import { keepStatements, type StatementClass } from './sqlite-statements.js';
import { requireDriver } from './driver.js';
import { mapDbError } from './errors.js';
import { migrate } from './migrations.js';
import { managedResourceRepository } from './managed.js';
import { listRollups, rollUpAndPrune, type HourlyRollup } from './retention.js';
import { dashboardRepository, incidentRepository, serviceRepository, statusPageIncidentRepository, statusPageRepository, statusPageSubscriberRepository } from './pages.js';
import { outbox, scheduleStore } from './queues.js';
import {
  accountRepository,
  alertChannelRepository,
  alertSubscriptionRepository,
  apiKeyRepository,
  checkGroupRepository,
  checkRepository,
  clientCertificateRepository,
  maintenanceWindowRepository,
  snippetRepository,
} from './resources.js';
import { checkResultRepository } from './results.js';
import { alertStateRepository, checkSessionRepository, checkStatusRepository, errorGroupRepository, heartbeatRepository, testSessionErrorGroupRepository } from './runs.js';
import type { TableContext } from './table.js';
import { prioritizeWriter } from './writer-lanes.js';

export interface KnexStorageOptions {
  /** `sqlite3` (default) or `pg`. Ignored when `knex` is given. */
  client?: 'sqlite3' | 'pg';
  /** A SQLite file name (or `:memory:`), or a PostgreSQL URL / connection object. */
  connection?: string | Knex.StaticConnectionConfig;
  /** A knex instance the host already has; Vigil does not close it. */
  knex?: Knex;
  /** Prefix of every table name, so Vigil's tables can sit beside the host's own. Default `vigil_`. */
  tablePrefix?: string;
  /** Run the migrations on the first use. Default true. */
  migrate?: boolean;
  pool?: Knex.PoolConfig;
  /**
   * SQLite file only: connections that serve reads beside the one connection that writes, so a
   * long list or report does not queue every other request behind it (write-ahead logging lets
   * them read while the writer commits). Default 4; 0 reads on the writer. Ignored for
   * PostgreSQL (its pool serves both), for `:memory:` and when `knex` or `pool` is given.
   */
  readers?: number;
  /**
   * Reads of a row by its id, and on PostgreSQL the writes every run makes outside a transaction,
   * run as statements prepared once per connection (default true). On PostgreSQL they are named
   * statements: behind a pooler that hands each transaction to another server connection and does
   * not keep them (PgBouncer in transaction mode before 1.21, or with `max_prepared_statements` at
   * 0), set `false`. A named statement that the server no longer has or can no longer use is
   * forgotten and the statement sent once more unnamed, either way.
   */
  preparedStatements?: boolean;
}

export interface KnexStorage extends VigilStorage {
  readonly knex: Knex;
  /**
   * Rolls raw results older than `before` up into hourly roll-ups and deletes them. The engine
   * runs it on a schedule; a host may call it too.
   */
  retention(before: Date): Promise<{ rolledUp: number; deleted: number }>;
  /** Hourly roll-ups of a check in [from, to). */
  rollups(accountId: string, checkId: string, from: Date, to: Date): Promise<HourlyRollup[]>;
  /** Rows of a table as stored, bypassing the repositories (for tests and audits). */
  raw: { dump(table: string): Promise<Record<string, unknown>[]> };
}

/** Names the database for error messages without the password. */
function describe(knex: Knex): string {
  const conn = knex.client.config.connection as string | { filename?: string; host?: string; port?: number; database?: string } | undefined;
  if (typeof conn === 'string') {
    try {
      const u = new URL(conn);
      return `${u.hostname}:${u.port || 5432}${u.pathname}`;
    } catch {
      return 'the configured database';
    }
  }
  return conn?.filename ?? (conn?.host ? `${conn.host}:${conn.port ?? 5432}/${conn.database ?? ''}` : 'the configured database');
}

/**
 * Write-ahead logging lets readers go on while a write commits, and NORMAL sync under WAL stays
 * durable across a crash of the process (a power loss may lose the last commits). A writer waits
 * up to 5 s for another process's lock instead of failing at once. Incremental auto-vacuum lets
 * `reclaimSqliteSpace` give the pages retention freed back to the file system: SQLite takes it
 * only before the file's first table, so it shapes a new file and leaves an existing one as it is
 * (a file that uses full auto-vacuum keeps it). The connection keeps its queries' statements
 * (`keepStatements`), as the read connections do.
 */
function sqliteSettings(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void, knex: Knex): void {
  conn.get('PRAGMA auto_vacuum', (err, row) => {
    if (err) return done(err, conn);
    const vacuum = row?.auto_vacuum === 1 ? '' : 'PRAGMA auto_vacuum = INCREMENTAL; ';
    keepStatements(conn, statementClass(knex));
    conn.exec(`${vacuum}PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;`, (e) => done(e, conn));
  });
}

interface SqliteConnection {
  exec(sql: string, cb: (err: Error | null) => void): void;
  get(sql: string, cb: (err: Error | null, row?: { auto_vacuum?: number }) => void): void;
}

/** A read connection: it waits for the writer's lock like the writer does, and can write nothing. */
function sqliteReaderSettings(conn: { exec(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void, knex: Knex): void {
  keepStatements(conn, statementClass(knex));
  conn.exec('PRAGMA busy_timeout = 5000; PRAGMA query_only = ON;', (err) => done(err, conn));
}

/** The read connections of a SQLite file, or none (the writer reads) where they cannot share its data. */
function sqliteReaders(filename: string | undefined, count: number): Knex | null {
  if (count <= 0 || !filename || filename === ':memory:' || filename.startsWith('file:')) return null;
  const readers: Knex = knexFactory({
    client: 'sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: { min: 0, max: count, afterCreate: (conn: never, done: (err: Error | null, conn: unknown) => void) => sqliteReaderSettings(conn, done, readers), idleTimeoutMillis: 60_000 },
  });
  return readers;
}

/** A host's pool settings for SQLite: its connections keep their statements too, then its own `afterCreate` runs. */
function keepingStatements(pool: Knex.PoolConfig, knex: () => Knex): Knex.PoolConfig {
  const after = pool.afterCreate as ((conn: unknown, done: (err: Error | null, conn: unknown) => void) => void) | undefined;
  return {
    ...pool,
    afterCreate: (conn: unknown, done: (err: Error | null, conn: unknown) => void) => {
      keepStatements(conn, statementClass(knex()));
      if (after) after(conn, done);
      else done(null, conn);
    },
  };
}

/** The Statement class of the `sqlite3` driver a SQLite knex loaded. */
function statementClass(knex: Knex): StatementClass {
  return (knex.client as unknown as { driver: { Statement: StatementClass } }).driver.Statement;
}

/**
 * The SQLite file holds every account's data: it is readable by its owner only (0600). A new file
 * is created so before SQLite opens it (SQLite gives its -wal and -shm files the mode of the
 * database); an existing one, and its -wal and -shm files, are set to 0600. A file that cannot be
 * made here (a missing folder) is left for SQLite to report when it is first used.
 */
function restrictSqliteFile(filename: string | undefined): void {
  if (!filename || filename === ':memory:' || filename.startsWith('file:')) return;
  try {
    closeSync(openSync(filename, 'a', 0o600));
    for (const file of [filename, `${filename}-wal`, `${filename}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  } catch {
    // SQLite reports it, with the database named, on the first use.
  }
}

/** Vigil's storage on knex: SQLite by default, PostgreSQL for several processes. */
export function knexStorage(options: KnexStorageOptions = {}): KnexStorage {
  const client = options.client ?? 'sqlite3';
  const owned = !options.knex;
  if (owned) requireDriver(client);
  const knex: Knex = options.knex ?? knexFactory({
    client,
    connection: options.connection ?? (client === 'sqlite3' ? { filename: 'vigil.sqlite' } : undefined),
    useNullAsDefault: client === 'sqlite3',
    pool: client === 'sqlite3'
      ? (options.pool ? keepingStatements(options.pool, (): Knex => knex) : { min: 1, max: 1, afterCreate: (conn: never, done: (err: Error | null, conn: unknown) => void) => sqliteSettings(conn, done, knex) })
      : options.pool ?? { min: 0, max: 10 },
  } as Knex.Config);
  if (typeof knex.client.config.connection === 'string' && client === 'sqlite3') {
    knex.client.config.connection = { filename: knex.client.config.connection };
  }
  const filename = (knex.client.config.connection as { filename?: string } | undefined)?.filename;
  if (owned && client === 'sqlite3') restrictSqliteFile(filename);
  const readers = owned && client === 'sqlite3' && !options.pool ? sqliteReaders(filename, options.readers ?? 4) : null;
  // SQLite's one writer serves an alert's step ahead of the runs' bookkeeping.
  if (owned && client === 'sqlite3' && !options.pool) prioritizeWriter(knex);
  const prefix = options.tablePrefix ?? 'vigil_';
  // A host's own knex is left as it is; Vigil's connections give up on a request whose client left.
  for (const db of owned ? [knex, readers] : []) if (db) cancelWithRequest(db);
  // Vigil's own connections keep the by-id reads prepared (a host's knex runs them through knex).
  const reads = owned && options.preparedStatements !== false ? preparedReads(readers ?? knex) : null;
  const pg = ['pg', 'postgres', 'postgresql'].includes(String(knex.client.config.client));
  // And the writes of every run, on PostgreSQL (SQLite's own connections keep every statement).
  const writes = owned && options.preparedStatements !== false ? preparedWrites(knex) : null;
  const ctx: TableContext = { knex, reader: readers ?? knex, reads, writes, copies: owned && pg, prefix, database: describe(knex) };
  let migrated: Promise<void> | null = null;
  let done = false;
  // A failed migration (database down) is tried again on the next call.
  const ensure = () => (migrated ??= migrate(knex, prefix).then(() => {
    done = true;
  }, (err) => {
    migrated = null;
    throw mapDbError(err, ctx.database);
  }));
  const base: VigilStorage = {
    name: pg ? 'knex-pg' : 'knex-sqlite',
    capabilities: { multiProcess: pg, nativePercentiles: true },
    accounts: accountRepository(ctx),
    apiKeys: apiKeyRepository(ctx),
    checks: checkRepository(ctx),
    checkGroups: checkGroupRepository(ctx),
    alertChannels: alertChannelRepository(ctx),
    alertSubscriptions: alertSubscriptionRepository(ctx),
    dashboards: dashboardRepository(ctx),
    maintenanceWindows: maintenanceWindowRepository(ctx),
    incidents: incidentRepository(ctx),
    statusPages: statusPageRepository(ctx),
    services: serviceRepository(ctx),
    statusPageIncidents: statusPageIncidentRepository(ctx),
    statusPageSubscribers: statusPageSubscriberRepository(ctx),
    clientCertificates: clientCertificateRepository(ctx),
    snippets: snippetRepository(ctx),
    managedResources: managedResourceRepository(ctx),
    errorGroups: errorGroupRepository(ctx),
    testSessionErrorGroups: testSessionErrorGroupRepository(ctx),
    checkSessions: checkSessionRepository(ctx),
    checkStatuses: checkStatusRepository(ctx),
    checkResults: checkResultRepository(ctx),
    alertStates: alertStateRepository(ctx),
    heartbeats: heartbeatRepository(ctx),
    schedule: scheduleStore(ctx),
    outbox: outbox(ctx),
    migrate: () => ensure(),
    close: async () => {
      await readers?.destroy();
      if (owned) await knex.destroy();
    },
  };
  // Every repository call waits for the migrations once, unless the host turned that off.
  const wrapped = options.migrate === false ? base : withMigrations(base, ensure, () => done);
  return Object.assign(wrapped, {
    knex,
    retention: async (before: Date) => {
      await ensure();
      return rollUpAndPrune(ctx, before);
    },
    rollups: async (accountId: string, checkId: string, from: Date, to: Date) => {
      await ensure();
      return listRollups(ctx, accountId, checkId, from, to);
    },
    raw: { dump: async (table: string) => knex(`${prefix}${table}`).select('*') as Promise<Record<string, unknown>[]> },
  });
}

function withMigrations(storage: VigilStorage, ensure: () => Promise<void>, migrated: () => boolean): VigilStorage {
  const out: Record<string, unknown> = { ...storage };
  for (const [key, repo] of Object.entries(storage)) {
    if (typeof repo !== 'object' || repo === null || key === 'capabilities') continue;
    const proxied: Record<string, unknown> = {};
    for (const [method, fn] of Object.entries(repo as Record<string, unknown>)) {
      if (typeof fn !== 'function') {
        proxied[method] = fn;
        continue;
      }
      const call = fn as (...a: unknown[]) => unknown;
      // Once the migrations are done, a call goes straight on (no wait for a settled promise).
      proxied[method] = (...args: unknown[]) => {
        if (!migrated()) return ensure().then(() => call(...args));
        try {
          return Promise.resolve(call(...args));
        } catch (err) {
          return Promise.reject(err);
        }
      };
    }
    out[key] = proxied;
  }
  return out as unknown as VigilStorage;
}

/** Registers a knex store as Vigil's STORAGE on the host's container (any with core's PluginRegistry method, tsyringe's among them). */
export function registerKnexStorage(container: PluginRegistry, options: KnexStorageOptions = {}): KnexStorage {
  const storage = knexStorage(options);
  container.register(STORAGE, { useValue: storage });
  return storage;
}
