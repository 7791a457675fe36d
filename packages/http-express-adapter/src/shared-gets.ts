import { outsideRequest } from '@vigil/core';
import type { HangUp } from './hang-up.js';

interface Waiter {
  hangUp: HangUp;
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

// Taken when the module loads: a clock faked later does not hold reads back.
const nextTurn = setImmediate;

/**
 * Identical reads asked for in one turn of the event loop (the same GET route, account, path
 * parameters and query) are answered by one run of the route's handler. Ten clients polling the
 * same check at once cost one read and one JSON text instead of ten.
 *
 * It is not a cache: the run starts after every request it answers arrived, so each sees every
 * write completed before it was sent. The run's signal aborts only once every request it answers
 * has gone; a request whose client hung up stops waiting for it.
 */
export function sharedGets(): (key: string, hangUp: HangUp, run: (signal: AbortSignal) => Promise<unknown>) => Promise<SharedResult> {
  let turn: Map<string, { run: (signal: AbortSignal) => Promise<unknown>; waiters: Waiter[] }> | null = null;
  const flush = () => {
    const asked = turn ?? new Map<string, { run: (signal: AbortSignal) => Promise<unknown>; waiters: Waiter[] }>();
    turn = null;
    for (const { run, waiters } of asked.values()) {
      // A request whose client has gone is not run for: it ends with nothing to send.
      const live = waiters.filter((w) => !w.hangUp.gone || void w.resolve({ result: undefined, shared: false }));
      const [only] = live;
      if (live.length === 1 && only) run(only.hangUp.signal).then((result) => only.resolve({ result, shared: false }), only.reject);
      else if (live.length > 1) answer(run, live);
    }
  };
  return (key, hangUp, run) => new Promise<SharedResult>((resolve, reject) => {
    if (!turn) {
      turn = new Map();
      // The runs happen outside the request that happened to ask first.
      outsideRequest(() => nextTurn(flush));
    }
    let same = turn.get(key);
    if (!same) turn.set(key, (same = { run, waiters: [] }));
    same.waiters.push({ hangUp, resolve, reject });
  });
}

/** Runs once for `waiters`: aborted when the last of them has gone, each answered unless it went first. */
function answer(run: (signal: AbortSignal) => Promise<unknown>, waiters: Waiter[]): void {
  const all = new AbortController();
  let left = waiters.length;
  const gone = () => {
    if (--left === 0) all.abort();
  };
  const stops = waiters.map((w) => w.hangUp.onGone(gone));
  run(all.signal).then((result) => {
    const answered: SharedResult = { result, shared: true };
    for (const stop of stops) stop();
    for (const w of waiters) w.resolve(answered);
  }, (err: unknown) => {
    for (const stop of stops) stop();
    for (const w of waiters) w.reject(err);
  });
}
