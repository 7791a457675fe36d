import { AsyncResource } from 'node:async_hooks';
import type { HangUp } from './hang-up.js';

/** The async context of the code that made it; `runInAsyncScope` runs a function in it. */
type InContext = AsyncResource;

/** The current async context (an AsyncResource holds it at a fraction of AsyncLocalStorage.snapshot's cost). */
const here = (): InContext => new AsyncResource('VigilSharedRead', { requireManualDestroy: true });

type Run = (signal: AbortSignal) => Promise<unknown>;

interface Waiter {
  hangUp: HangUp;
  /** The context of the request (its tracing, its logger's request id). */
  context: InContext;
  resolve(result: SharedResult): void;
  reject(err: unknown): void;
}

/** A route's result, and whether more than one request got it (they then get this same object). */
export interface SharedResult {
  result: unknown;
  shared: boolean;
  /** The result's JSON text, written once for all the requests that share it. */
  text?: Buffer;
}

/** What a request whose client has gone gets: nothing to send. */
const NOTHING: SharedResult = Object.freeze({ result: undefined, shared: false });

// Taken when the module loads: a clock faked later does not hold reads back.
const nextTurn = setImmediate;

/**
 * Identical reads of one route asked for in one turn of the event loop (the same `key`: account,
 * path parameters and query) are answered by one run of the route's handler. Ten clients polling
 * the same check at once cost one read and one JSON text instead of ten.
 *
 * It is not a cache: the run starts after every request it answers arrived, so each sees every
 * write completed before it was sent. A run for one request runs in that request's context with
 * its signal. A shared run runs in the context the router was made in, and its signal aborts once
 * every request it answers has gone; a request whose client hangs up stops waiting for it.
 */
export function sharedGets(): (key: string, hangUp: HangUp, run: Run) => Promise<SharedResult> {
  const neutral = here();
  let turn: Map<string, { run: Run; waiters: Waiter[] }> | null = null;
  const flush = () => {
    const asked = turn ?? new Map<string, { run: Run; waiters: Waiter[] }>();
    turn = null;
    for (const { run, waiters } of asked.values()) {
      // A request whose client has gone is not run for: it ends with nothing to send.
      const live = waiters.filter((w) => !w.hangUp.gone || void w.resolve(NOTHING));
      const [only] = live;
      if (live.length === 1 && only) {
        only.context.runInAsyncScope(() => started(() => run(only.hangUp.signal))).then((result) => only.resolve({ result, shared: false }), only.reject);
      } else if (live.length > 1) neutral.runInAsyncScope(() => answer(run, live));
    }
  };
  return (key, hangUp, run) => {
    const context = here();
    return new Promise<SharedResult>((resolve, reject) => {
      if (!turn) {
        turn = new Map();
        neutral.runInAsyncScope(() => nextTurn(flush));
      }
      let same = turn.get(key);
      if (!same) turn.set(key, (same = { run, waiters: [] }));
      same.waiters.push({ hangUp, context, resolve, reject });
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

/** Runs once for `waiters`: aborted when the last of them has gone; each that goes first ends at once. */
function answer(run: Run, waiters: Waiter[]): void {
  const all = new AbortController();
  let left = waiters.length;
  const stops = waiters.map((w) => w.hangUp.onGone(() => {
    w.resolve(NOTHING);
    if (--left === 0) all.abort();
  }));
  started(() => run(all.signal)).then((result) => {
    const answered: SharedResult = { result, shared: true };
    for (const stop of stops) stop();
    for (const w of waiters) w.resolve(answered);
  }, (err: unknown) => {
    for (const stop of stops) stop();
    for (const w of waiters) w.reject(err);
  });
}
