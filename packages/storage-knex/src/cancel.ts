import { requestSignal } from '@vigil/core';
import type { Knex } from 'knex';

interface QueryingClient {
  query(connection: unknown, query: unknown): Promise<unknown>;
  cancelQuery?(connection: unknown): Promise<unknown>;
}

/**
 * Queries made for a request whose client has hung up (`requestSignal()`, set by the HTTP adapter
 * around read routes) stop: one not yet sent is not sent, and one under way is cancelled, on
 * PostgreSQL by `pg_cancel_backend` from a connection of its own, on SQLite by interrupting the
 * connection that runs it. Work done outside a request is never touched.
 */
export function cancelWithRequest(knex: Knex): void {
  const client = knex.client as unknown as QueryingClient;
  const pg = ['pg', 'postgres', 'postgresql'].includes(String(knex.client.config.client));
  const query = client.query.bind(client);
  client.query = (connection, sql) => {
    const signal = requestSignal();
    if (!signal) return query(connection, sql);
    if (signal.aborted) return Promise.reject(abandoned());
    return cancelOnAbort(knex, pg, connection, signal, query(connection, sql));
  };
}

/**
 * Settles as `running` (a query under way on `connection`) does, cancelling it if `signal` aborts
 * first. A PostgreSQL cancel lands a moment after it is asked for (from a connection of its own):
 * this settles only once it has, so the connection goes back to the pool only then and the cancel
 * never stops another query.
 */
export function cancelOnAbort<R>(knex: Knex, pg: boolean, connection: unknown, signal: AbortSignal, running: Promise<R>): Promise<R> {
  const client = knex.client as unknown as QueryingClient;
  let cancelling: Promise<unknown> | undefined;
  const cancel = () => {
    if (pg) cancelling = client.cancelQuery?.(connection).catch(() => {});
    else (connection as { interrupt?(): void }).interrupt?.();
  };
  signal.addEventListener('abort', cancel, { once: true });
  return running.finally(async () => {
    signal.removeEventListener('abort', cancel);
    await cancelling;
  });
}

/** The error of a query given up because its request's client hung up. */
export function abandoned(): Error {
  return Object.assign(new Error('The request was abandoned: its client hung up'), { name: 'AbortError', code: 'ABORT_ERR' });
}
