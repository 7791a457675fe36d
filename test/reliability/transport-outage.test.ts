import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type VigilStorage } from '@vigil/core';
import { FakeClock, memoryStorage } from '@vigil/core/testing';
import { webhookTransport } from '@vigil/alert-channels';
import { knexStorage } from '@vigil/storage-knex';
import { freshDatabase, PG_URL } from './support/postgres.js';
import { webhookReceiver } from './support/servers.js';

const MINUTE = 60_000;
const OUTAGE_MS = 10 * MINUTE;
const CHECKS = 3;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Store = [name: string, make: () => Promise<VigilStorage>];
const stores: Store[] = [
  ['in-memory store', async () => memoryStorage()],
  ['SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-transport-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return knexStorage({ client: 'sqlite3', connection: join(dir, 'vigil.sqlite') });
  }],
  ...(PG_URL
    ? [['PostgreSQL', async () => {
      const db = await freshDatabase('transport');
      cleanups.push(() => db.drop());
      return knexStorage({ client: 'pg', connection: db.url });
    }] as Store]
    : []),
];

describe('a webhook receiver down for ten minutes (fake time)', () => {
  it.each(stores)('%s: once it is back it gets every alert, once each, in the order of each check', async (_name, make) => {
    const storage = await make();
    const clock = new FakeClock('2026-06-01T00:00:00.000Z');
    const receiver = await webhookReceiver();
    cleanups.push(() => receiver.close());
    const vigil = createVigil({ storage, clock, secretKey: 'e'.repeat(64), transports: [webhookTransport({ timeoutMs: 5_000 })], alerts: { enabled: false } });
    cleanups.push(() => vigil.close());
    const account = await vigil.accounts.ensure();
    const channel = await vigil.alertChannels.create(account.id, { type: 'WEBHOOK', config: { name: 'ops', url: receiver.url } });
    const checks = Array.from({ length: CHECKS }, () => randomUUID());
    const queued = new Map<string, string[]>(checks.map((id) => [id, []]));

    /** What a run of a check that flips every minute queues: failing, recovered, failing, ... */
    const raise = async (minute: number) => {
      const now = clock.now().toISOString();
      await vigil.storage.outbox.enqueue(checks.map((checkId) => {
        const alertType = minute % 2 === 0 ? 'ALERT_FAILURE' : 'ALERT_RECOVERY';
        const resultId = randomUUID();
        queued.get(checkId)!.push(resultId);
        return {
          id: randomUUID(), accountId: account.id, checkId, alertChannelId: channel.id, alertType,
          payload: { alertType, checkId, checkName: `check ${checkId.slice(0, 4)}`, checkType: 'TCP', checkResultId: resultId, runLocation: 'us-east-1', errorMessage: null },
          created_at: now, nextAttemptAt: now,
        };
      }));
    };
    /** Moves fake time on in steps of one second; each step the dispatcher claims what is due and sends it. */
    const runFor = async (ms: number, onMinute?: (minute: number) => Promise<void>) => {
      const end = clock.now().getTime() + ms;
      while (clock.now().getTime() < end) {
        const t = clock.now().getTime() - start;
        if (onMinute && t % MINUTE === 0) await onMinute(t / MINUTE);
        await vigil.alerts.drain();
        clock.advance(1_000);
      }
    };
    const start = clock.now().getTime();

    // Down for ten minutes while the checks keep alerting: refusing connections for five, then
    // answering 503 for five.
    await receiver.stop();
    await runFor(OUTAGE_MS / 2, raise);
    await receiver.start();
    receiver.status = 503;
    await runFor(OUTAGE_MS / 2, raise);
    expect(receiver.delivered).toEqual([]);
    expect(receiver.refused.length).toBeGreaterThan(0);
    const attemptsDuringOutage = await vigil.alertChannels.deliveries(account.id, channel.id, { limit: 100 });
    expect(attemptsDuringOutage.length).toBeGreaterThan(CHECKS);
    expect(attemptsDuringOutage.every((a) => !a.ok)).toBe(true);

    // Back: everything arrives with the next retries (the backoff doubles from 10 s, so after ten
    // minutes down the oldest alert is tried again within about ten more).
    receiver.status = 204;
    const backAt = clock.now().getTime();
    while ((await vigil.storage.outbox.pending(account.id)).length > 0 && clock.now().getTime() - backAt < OUTAGE_MS) await runFor(1_000);
    const deliveredWithinMs = clock.now().getTime() - backAt;
    expect(await vigil.storage.outbox.pending(account.id)).toEqual([]);
    const ids = receiver.delivered.map((c) => c.alertId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(CHECKS * (OUTAGE_MS / MINUTE));
    for (const checkId of checks) {
      const arrived = receiver.delivered.filter((c) => c.checkId === checkId);
      expect(arrived.map((c) => c.checkResultId)).toEqual(queued.get(checkId));
      expect(arrived.map((c) => c.alertType)).toEqual(queued.get(checkId)!.map((_, i) => (i % 2 === 0 ? 'ALERT_FAILURE' : 'ALERT_RECOVERY')));
    }
    expect(deliveredWithinMs).toBeLessThan(2 * MINUTE);
  }, 60_000);
});
