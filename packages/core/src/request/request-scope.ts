// The request a piece of work is done for, so that a store can give up on it once its client has
// hung up: the HTTP adapter runs each read route's handler in the scope of the request's signal,
// and a store reads the signal where it starts and runs a query.
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `fn` for a request: everything it awaits sees `signal` through `requestSignal()`. Meant for
 * reads only, whose work is worth nothing once the client has gone; a write, or work a request
 * starts and leaves running, must not run in the scope (it would be cut off halfway).
 */
export function runForRequest<T>(signal: AbortSignal, fn: () => T): T {
  return scope.run(signal, fn);
}

/** The signal of the request this work is done for (aborted once its client hung up), if any. */
export function requestSignal(): AbortSignal | undefined {
  return scope.getStore();
}

/** Runs `fn` outside any request's scope: for work that must finish whoever asked for it. */
export function outsideRequest<T>(fn: () => T): T {
  return scope.exit(fn);
}
