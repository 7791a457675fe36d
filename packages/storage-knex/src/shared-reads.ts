import { AsyncResource } from 'node:async_hooks';
import { requestSignal } from '@vigil/core';
import { abandoned } from './cancel.js';

type Row = Record<string, unknown>;

/** A read of `sql` (placeholders `?`) for `bindings`, cancelled if `signal` aborts first. */
export type SignalledRead = (sql: string, bindings: readonly unknown[], signal: AbortSignal | undefined) => Promise<Row[]>;

/** The async context of the code that made it; `runInAsyncScope` runs a function in it. */
type InContext = AsyncResource;

/** The current async context (an AsyncResource holds it at a fraction of AsyncLocalStorage.snapshot's cost). */
const here = (): InContext => new AsyncResource('VigilSharedRead', { requireManualDestroy: true });

interface Waiter {
  signal: AbortSignal | undefined;
  /** The context of the code that asked (its tracing, its logger's request id). */
  context: InContext;
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
 * every write committed before it was asked. A read alone runs in the context of the code that
 * asked for it and is cancelled with its request, as any query is. A shared read runs in the
 * context the store was made in (never in one of its requests'), a reader whose client hung up
 * stops waiting for it, and it is cancelled once every one of them has.
 */
export function sharedPerTurn(read: SignalledRead): (sql: string, bindings: readonly unknown[]) => Promise<Row[]> {
  const neutral = here();
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
      if (live.length === 1 && only) only.context.runInAsyncScope(() => started(() => read(sql, bindings, only.signal))).then(only.resolve, only.reject);
      else if (live.length > 1) neutral.runInAsyncScope(() => answer(read, sql, bindings, live));
    }
  };
  return (sql, bindings) => {
    const signal = requestSignal();
    if (signal?.aborted) return Promise.reject(abandoned());
    const context = here();
    return new Promise<Row[]>((resolve, reject) => {
      if (!turn) {
        turn = new Map();
        neutral.runInAsyncScope(() => nextTurn(flush));
      }
      const key = `${sql}\u0000${JSON.stringify(bindings)}`;
      let same = turn.get(key);
      if (!same) turn.set(key, (same = { sql, bindings, waiters: [] }));
      same.waiters.push({ signal, context, resolve, reject });
    });
  };
}

/** `start()`, with a synchronous throw as a rejection. */
function started<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (err) {
    return Promise.reject(err);
  }
}

/** One read for `waiters`: cancelled once every one of them has hung up (never while one has no request). */
function answer(read: SignalledRead, sql: string, bindings: readonly unknown[], waiters: Waiter[]): void {
  const all = new AbortController();
  let left = waiters.length;
  const stops: (() => void)[] = [];
  for (const w of waiters) {
    const signal = w.signal;
    if (!signal) continue;
    const gone = () => {
      w.reject(abandoned());
      if (--left === 0) all.abort();
    };
    signal.addEventListener('abort', gone, { once: true });
    stops.push(() => signal.removeEventListener('abort', gone));
  }
  started(() => read(sql, bindings, all.signal)).then((rows) => {
    for (const stop of stops) stop();
    for (const w of waiters) w.resolve(rows);
  }, (err: unknown) => {
    for (const stop of stops) stop();
    for (const w of waiters) w.reject(err);
  });
}
