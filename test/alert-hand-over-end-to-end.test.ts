/**
 * A failed run's alert, on SQLite and PostgreSQL with the real WEBHOOK transport and a real HTTP
 * receiver on 127.0.0.1: the alert step leases it in the write that queues it and the dispatcher
 * sends it at once. The dispatcher polls once an hour here, so an alert that needed a claim would
 * not arrive within the test.
 */
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { registerAlertChannels } from '@vigil/alert-channels';
import { tcpRunner } from '@vigil/runner-tcp';
import type { KnexStorage } from '@vigil/storage-knex';
import { closedPort, freshStore, STORES, webhookServer } from './support/engine-stack.js';

describe.each(STORES)('an alert handed over from the run that raised it (%s)', (kind) => {
  let vigil: Vigil;
  let storage: KnexStorage;
  /** One receiver per channel. */
  let hooks: Awaited<ReturnType<typeof webhookServer>>[] = [];
  let port: number;
  let accountId: string;
  let channelIds: number[];
  let claims = 0;

  beforeAll(async () => {
    hooks = await Promise.all([0, 1, 2].map(() => webhookServer()));
    port = await closedPort();
    storage = await freshStore(kind, 'vigil_hand_over');
    const claim = storage.outbox.claim.bind(storage.outbox);
    storage.outbox.claim = (...args) => {
      claims++;
      return claim(...args);
    };
    vigil = createVigil(
      { storage, secretKey: 'a7'.repeat(32), runners: [tcpRunner()], engine: { pollMs: 20 }, alerts: { pollMs: 3_600_000 } },
      (c) => registerAlertChannels(c, { certificates: false }),
    );
    accountId = (await vigil.accounts.ensure()).id;
    channelIds = [];
    for (const [i, hook] of hooks.entries()) {
      channelIds.push((await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: { name: `hook ${i}`, url: hook.url } })).id);
    }
    await vigil.start();
  }, 30_000);

  afterAll(async () => {
    await vigil?.stop(0);
    await storage?.close();
    for (const hook of hooks) await hook.close();
  });

  /** The alert types each receiver got, once each has `n` (or 10 s have passed). */
  async function arrived(n: number) {
    for (const deadline = Date.now() + 10_000; hooks.some((h) => h.bodies.length < n) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 20));
    }
    return hooks.map((h) => h.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_NAME]));
  }

  /** Each send is marked delivered once the receiver has answered it. */
  async function delivered() {
    for (const deadline = Date.now() + 10_000; (await storage.outbox.pending(accountId)).length > 0 && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await storage.outbox.pending(accountId)).toEqual([]);
  }

  it('reaches every subscribed channel with no claim, and a recovery follows it in order', async () => {
    const check = await vigil.checks.create(accountId, 'TCP', {
      name: 'orders-db', request: { hostname: '127.0.0.1', port }, frequency: 1440, frequencyOffset: 12,
      useGlobalAlertSettings: false, retryStrategy: null, doubleCheck: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 } },
      alertChannelSubscriptions: channelIds.map((alertChannelId) => ({ alertChannelId, activated: true })),
    });
    // The start's first poll has answered before any alert exists.
    await new Promise((r) => setTimeout(r, 200));
    const claimsBefore = claims;

    await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } });
    const failure = ['ALERT_FAILURE', 'orders-db'];
    expect(await arrived(1)).toEqual([[failure], [failure], [failure]]);
    expect(claims).toBe(claimsBefore);
    // The recovery is leased only once the failure is marked delivered on each channel (a check's
    // alerts go to a channel one at a time, in order).
    await delivered();

    // The port opens: the next run passes and its recovery is handed over the same way.
    const open = net.createServer((s) => s.end()).listen(port, '127.0.0.1');
    await once(open, 'listening');
    try {
      await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } });
      const recovery = ['ALERT_RECOVERY', 'orders-db'];
      expect(await arrived(2)).toEqual([[failure, recovery], [failure, recovery], [failure, recovery]]);
    } finally {
      await new Promise<void>((resolve) => open.close(() => resolve()));
    }
    await delivered();
    expect(claims).toBe(claimsBefore);
  }, 30_000);
});
