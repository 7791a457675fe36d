/*
 * The outbox's delivery outcomes (delivered, failed, the attempt log) written together: every
 * call made while a write is under way (or in the same turn of the event loop) joins the next
 * one, which is a single transaction with one UPDATE for the delivered messages and one INSERT
 * for the logged attempts. Under load, dozens of sends finishing together cost one commit
 * instead of two each. Each call still answers its own outcome (the row it changed or not).
 */
import { hasCode, type DeliveryAttempt } from '@vigil/core';
import type { Knex } from 'knex';
import { dbCall } from './errors.js';
import type { TableContext } from './table.js';

type Op =
  | { kind: 'delivered'; id: string; owner: string; at: Date; done: (changed: boolean) => void; fail: (err: unknown) => void }
  | { kind: 'failed'; id: string; owner: string; error: string; next: Date; done: (changed: boolean) => void; fail: (err: unknown) => void }
  | { kind: 'attempt'; attempt: DeliveryAttempt; done: (changed: boolean) => void; fail: (err: unknown) => void };

/** Rows a statement takes at most: its bound values stay under SQLite's limit. */
const CHUNK = 100;

export interface OutboxWrites {
  markDelivered(id: string, owner: string, at: Date): Promise<boolean>;
  markFailed(id: string, owner: string, error: string, nextAttemptAt: Date): Promise<boolean>;
  recordAttempt(attempt: DeliveryAttempt): Promise<void>;
}

export function outboxWrites(ctx: TableContext, table: string, attempts: string): OutboxWrites {
  const run = dbCall(ctx.database);
  let queue: Op[] = [];
  let writing = false;

  async function apply(trx: Knex.Transaction, ops: Op[]): Promise<Map<Op, boolean>> {
    const changed = new Map<Op, boolean>();
    const delivered = ops.filter((o): o is Extract<Op, { kind: 'delivered' }> => o.kind === 'delivered');
    for (let i = 0; i < delivered.length; i += CHUNK) {
      const part = delivered.slice(i, i + CHUNK);
      // Each message keeps its own delivery time; only rows still leased to the caller change.
      const ms = trx.raw(`case id ${part.map(() => 'when ? then cast(? as bigint)').join(' ')} end`, part.flatMap((o) => [o.id, o.at.getTime()]));
      const iso = trx.raw(`case id ${part.map(() => 'when ? then ?').join(' ')} end`, part.flatMap((o) => [o.id, o.at.toISOString()]));
      const byOwner = new Map<string, string[]>();
      for (const o of part) byOwner.set(o.owner, [...(byOwner.get(o.owner) ?? []), o.id]);
      const done = new Set<string>();
      for (const [owner, ids] of byOwner) {
        const rows = (await trx(table).whereIn('id', ids).where('lease_owner', owner).whereNull('delivered_ms')
          .update({ delivered_ms: ms, delivered_at: iso, lease_owner: null, lease_until_ms: null }).returning(['id'])) as { id: string }[];
        for (const r of rows) done.add(String(r.id));
      }
      for (const o of part) changed.set(o, done.has(o.id));
    }
    for (const o of ops) {
      if (o.kind !== 'failed') continue;
      const n = await trx(table).where({ id: o.id, lease_owner: o.owner }).whereNull('delivered_ms').update({
        attempts: trx.raw('attempts + 1'), last_error: o.error, next_attempt_ms: o.next.getTime(), lease_owner: null, lease_until_ms: null,
      });
      changed.set(o, Number(n) > 0);
    }
    const logged = ops.filter((o): o is Extract<Op, { kind: 'attempt' }> => o.kind === 'attempt');
    for (let i = 0; i < logged.length; i += CHUNK) {
      const rows = logged.slice(i, i + CHUNK).map(({ attempt: a }) => ({ account_id: a.accountId, alert_channel_id: a.alertChannelId, outbox_id: a.outboxId, at: a.at, ok: a.ok, detail: a.detail }));
      await trx(attempts).insert(rows);
    }
    return changed;
  }

  const write = (ops: Op[]) => run(() => ctx.knex.transaction((trx) => apply(trx, ops)));

  async function flush(ops: Op[]): Promise<void> {
    try {
      const changed = await write(ops);
      for (const o of ops) o.done(changed.get(o) ?? true);
    } catch (err) {
      // A database that cannot be reached fails every call at once (each alone would wait again).
      if (ops.length === 1 || hasCode(err, 'UNAVAILABLE')) {
        for (const o of ops) o.fail(err);
        return;
      }
      // Otherwise one call's failure is its own: each is written again alone, in the order made.
      for (const o of ops) await flush([o]);
    }
  }

  function start(): void {
    writing = true;
    // Calls made in this turn of the event loop join the write.
    setImmediate(() => {
      const ops = queue;
      queue = [];
      void flush(ops).finally(() => {
        writing = false;
        if (queue.length > 0) start();
      });
    });
  }

  function push(op: Op): void {
    queue.push(op);
    if (!writing) start();
  }

  return {
    markDelivered: (id, owner, at) => new Promise((done, fail) => push({ kind: 'delivered', id, owner, at, done, fail })),
    markFailed: (id, owner, error, next) => new Promise((done, fail) => push({ kind: 'failed', id, owner, error, next, done, fail })),
    recordAttempt: (attempt) => new Promise((done, fail) => push({ kind: 'attempt', attempt, done: () => done(), fail })),
  };
}
