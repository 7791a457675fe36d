import { AsyncLocalStorage } from 'node:async_hooks';
import knexFactory, { type Knex } from 'knex';

// knex is CommonJS: its error classes are properties of its default export.
const { KnexTimeoutError } = knexFactory as unknown as { KnexTimeoutError: new (message: string) => Error };

/*
 * SQLite has one writer connection: every write of every run under way waits its turn for it.
 * An alert's step that queues alerts is the one write a person waits on (the alert goes out once
 * it is stored), so it takes the writer ahead of the runs' bookkeeping (results, statuses,
 * sessions, error groups) queued at the same time. Bookkeeping keeps the order it was asked in,
 * and gets the writer at least once every URGENT_IN_A_ROW hand-overs, so a burst of alerts cannot
 * hold it back for long. A write under way is never cut short.
 */

const urgent = new AsyncLocalStorage<true>();

/** Urgent hand-overs in a row while bookkeeping waits, before bookkeeping gets one. */
const URGENT_IN_A_ROW = 8;

/** Runs `fn` with its writes ahead of the queued bookkeeping on a writer that `prioritizeWriter` set up. */
export function asUrgent<T>(fn: () => Promise<T>): Promise<T> {
  return urgent.run(true, fn);
}

interface PooledClient {
  config: { acquireConnectionTimeout?: number; pool?: { acquireTimeoutMillis?: number } };
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  destroy(callback?: unknown): Promise<unknown>;
}

interface Waiter {
  go(): void;
  fail(err: Error): void;
}

/**
 * Hands the connection of a one-connection knex (SQLite's writer) to its callers one at a time,
 * urgent ones (`asUrgent`) first, each lane in the order it asked. A caller that waits longer than
 * knex's acquire timeout fails as knex's own wait would (a timeout acquiring a connection), and
 * callers still waiting when the knex is destroyed fail at once.
 */
export function prioritizeWriter(knex: Knex): void {
  const client = knex.client as unknown as PooledClient;
  const acquire = client.acquireConnection.bind(client);
  const release = client.releaseConnection.bind(client);
  const destroy = client.destroy.bind(client);
  const timeoutMs = client.config.acquireConnectionTimeout ?? client.config.pool?.acquireTimeoutMillis ?? 60_000;
  const lanes: { urgent: Waiter[]; rest: Waiter[] } = { urgent: [], rest: [] };
  let held = false;
  let closed = false;
  let urgentInARow = 0;

  /** The writer goes to the next caller in line, or is free. */
  const handOn = () => {
    const takeUrgent = lanes.urgent.length > 0 && (urgentInARow < URGENT_IN_A_ROW || lanes.rest.length === 0);
    const next = takeUrgent ? lanes.urgent.shift() : lanes.rest.shift();
    urgentInARow = takeUrgent ? urgentInARow + 1 : 0;
    if (next) next.go();
    else held = false;
  };
  const wait = () => new Promise<void>((resolve, reject) => {
    const lane = urgent.getStore() ? lanes.urgent : lanes.rest;
    const waiter: Waiter = {
      go: () => {
        clearTimeout(timer);
        resolve();
      },
      fail: (err) => {
        clearTimeout(timer);
        reject(err);
      },
    };
    const timer = setTimeout(() => {
      lane.splice(lane.indexOf(waiter), 1);
      reject(new KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.'));
    }, timeoutMs);
    lane.push(waiter);
  });

  client.acquireConnection = async () => {
    if (closed) throw new Error('Unable to acquire a connection');
    if (held) await wait();
    held = true;
    if (closed) {
      handOn();
      throw new Error('Unable to acquire a connection');
    }
    try {
      return await acquire();
    } catch (err) {
      handOn();
      throw err;
    }
  };
  client.releaseConnection = async (connection) => {
    try {
      return await release(connection);
    } finally {
      handOn();
    }
  };
  client.destroy = async (callback) => {
    closed = true;
    const gone = new Error('Unable to acquire a connection: the store is closed');
    for (const waiter of [...lanes.urgent.splice(0), ...lanes.rest.splice(0)]) waiter.fail(gone);
    return destroy(callback);
  };
}
