import { outsideRequest, requestSignal } from '@vigil/core';
import { abandoned } from './cancel.js';

type Row = Record<string, unknown>;

/** A read of `sql` (placeholders `?`) for `bindings`, cancelled if `signal` aborts first. */
export type SignalledRead = (sql: string, bindings: readonly unknown[], signal: AbortSignal | undefined) => Promise<Row[]>;

interface Waiter {
  signal: AbortSignal | undefined;
  resolve(rows: Row[]): void;
  reject(err: unknown): void;
}

interface Asked {
  sql: string;
  bindings: readonly unknown[];
  waiters: Waiter[];
}

// Taken when the module loads: a clock faked later does not hold reads back.
const nextTurn = setImmediate;

/**
 * Identical reads (one statement, the same bindings) asked for in one turn of the event loop run
 * as one query, and each of them gets its rows (shared: a caller must not change them). Ten
 * clients polling the same check at once cost the database one read instead of ten.
 *
 * It is not a cache: the query starts after every read it answers was asked for, so each sees
 * every write committed before it was asked. A read alone is cancelled with its request, as any
 * query is; a shared read runs to its end, and a reader whose client hung up stops waiting for it.
 */
export function sharedPerTurn(read: SignalledRead): (sql: string, bindings: readonly unknown[]) => Promise<Row[]> {
  let turn: Map<string, Asked> | null = null;
  const flush = () => {
    const asked = turn ?? new Map<string, Asked>();
    turn = null;
    for (const { sql, bindings, waiters } of asked.values()) {
      const live = waiters.filter((w) => {
        if (!w.signal?.aborted) return true;
        w.reject(abandoned());
        return false;
      });
      const [only] = live;
      if (live.length === 1 && only) read(sql, bindings, only.signal).then(only.resolve, only.reject);
      else if (live.length > 1) answer(read(sql, bindings, undefined), live);
    }
  };
  return (sql, bindings) => {
    const signal = requestSignal();
    if (signal?.aborted) return Promise.reject(abandoned());
    return new Promise<Row[]>((resolve, reject) => {
      if (!turn) {
        turn = new Map();
        // The queries run outside the request that happened to ask first.
        outsideRequest(() => nextTurn(flush));
      }
      const key = `${sql}\u0000${JSON.stringify(bindings)}`;
      let same = turn.get(key);
      if (!same) turn.set(key, (same = { sql, bindings, waiters: [] }));
      same.waiters.push({ signal, resolve, reject });
    });
  };
}

function answer(running: Promise<Row[]>, waiters: Waiter[]): void {
  for (const w of waiters) {
    const signal = w.signal;
    if (!signal) {
      running.then(w.resolve, w.reject);
      continue;
    }
    const stop = () => w.reject(abandoned());
    signal.addEventListener('abort', stop, { once: true });
    running.then(w.resolve, w.reject).finally(() => signal.removeEventListener('abort', stop));
  }
}
