// Delivery outcomes made at the same time are written together, yet each call answers its own
// outcome, and one call that cannot be written fails alone.
import type { NewOutboxMessage } from '@vigil/core';
import { afterAll, describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';

const ACCOUNT = 'acct-outbox-writes';
const AT = new Date('2026-05-01T12:00:00.000Z');
const opened: KnexStorage[] = [];
afterAll(async () => Promise.all(opened.map((s) => s.close())));

function message(n: number): NewOutboxMessage {
  return {
    id: `m${n}`, accountId: ACCOUNT, checkId: `check-${n}`, alertChannelId: n, alertType: 'ALERT_FAILURE',
    payload: { checkId: `check-${n}`, checkName: `check ${n}` }, created_at: AT.toISOString(), nextAttemptAt: AT.toISOString(),
  } as NewOutboxMessage;
}

describe.each(STORES)('outbox outcomes written together on %s', (kind) => {
  it('answers each call its own outcome, keeps each delivery time, and fails only the call that cannot be written', async () => {
    const storage = await freshStore(kind, 'vigil_outbox_writes');
    opened.push(storage);
    await storage.outbox.enqueue([1, 2, 3, 4].map(message));
    const claimed = await storage.outbox.claim(AT, 10, 60_000, 'A');
    expect(claimed.map((m) => m.id)).toEqual(['m1', 'm2', 'm3', 'm4']);
    const attempt = (id: string, ok: boolean) => ({ outboxId: id, accountId: ACCOUNT, alertChannelId: 1, at: AT.toISOString(), ok, detail: ok ? 'delivered' : 'down' });
    const results = await Promise.allSettled([
      storage.outbox.markDelivered('m1', 'A', new Date(AT.getTime() + 1_000)),
      storage.outbox.markDelivered('m2', 'A', new Date(AT.getTime() + 2_000)),
      // Another owner's lease: nothing changes.
      storage.outbox.markDelivered('m3', 'B', new Date(AT.getTime() + 3_000)),
      storage.outbox.markFailed('m4', 'A', 'down', new Date(AT.getTime() + 10_000)),
      storage.outbox.recordAttempt(attempt('m1', true)),
      storage.outbox.recordAttempt(attempt('m4', false)),
      // Not storable (no account): this call fails, the others stand.
      storage.outbox.recordAttempt({ ...attempt('m2', true), accountId: null as unknown as string }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(results.slice(0, 4).map((r) => (r as PromiseFulfilledResult<boolean>).value)).toEqual([true, true, false, true]);
    const rows = await storage.knex('vigil_outbox').select('id', 'delivered_ms', 'delivered_at', 'attempts', 'lease_owner').orderBy('id');
    expect(rows.map((r) => [r.id, r.delivered_ms === null ? null : Number(r.delivered_ms), r.delivered_at, Number(r.attempts), r.lease_owner])).toEqual([
      ['m1', AT.getTime() + 1_000, new Date(AT.getTime() + 1_000).toISOString(), 0, null],
      ['m2', AT.getTime() + 2_000, new Date(AT.getTime() + 2_000).toISOString(), 0, null],
      ['m3', null, null, 0, 'A'],
      ['m4', null, null, 1, null],
    ]);
    expect((await storage.outbox.listAttempts(ACCOUNT, 1, 10)).map((a) => [a.outboxId, a.ok])).toEqual([['m4', false], ['m1', true]]);
  });

  it('writes the outcomes of sends finishing at once in one transaction: one UPDATE and one INSERT', async () => {
    const storage = await freshStore(kind, 'vigil_outbox_writes');
    opened.push(storage);
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    await storage.outbox.enqueue(ids.map(message));
    expect(await storage.outbox.claim(AT, 50, 60_000, 'A')).toHaveLength(20);
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase().replace(/;$/, ''));
    storage.knex.on('query', onQuery);
    const done = await Promise.all(ids.flatMap((n) => [
      storage.outbox.markDelivered(`m${n}`, 'A', new Date(AT.getTime() + n)),
      storage.outbox.recordAttempt({ outboxId: `m${n}`, accountId: ACCOUNT, alertChannelId: n, at: AT.toISOString(), ok: true, detail: 'delivered' }),
    ]));
    storage.knex.off('query', onQuery);
    expect(done.filter((d) => d === true)).toHaveLength(20);
    expect(statements.filter((s) => s === 'update')).toHaveLength(1);
    expect(statements.filter((s) => s === 'insert')).toHaveLength(1);
    expect(statements.filter((s) => s === 'begin')).toHaveLength(1);
    expect(await storage.outbox.depth!()).toBe(0);
  });
});
