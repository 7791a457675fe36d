/**
 * A failed run's alert, on SQLite and PostgreSQL with the real WEBHOOK transport and a real HTTP
 * receiver on 127.0.0.1: the alert step leases it in the write that queues it and the dispatcher
 * sends it at once. The dispatcher polls once an hour here, so an alert that needed a claim would
 * not arrive within the test.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { registerAlertChannels } from '@vigil/alert-channels';
import { tcpRunner } from '@vigil/runner-tcp';
import type { KnexStorage } from '@vigil/storage-knex';
import { freshStore, STORES } from './support/engine-stack.js';

interface Arrival { path: string; body: { ALERT_TYPE: string; CHECK_NAME: string } }

describe.each(STORES)('an alert handed over from the run that raised it (%s)', (kind) => {
  let vigil: Vigil;
  let storage: KnexStorage;
  let receiver: http.Server;
  let closedPort: number;
  let accountId: string;
  let channelIds: number[];
  const arrivals: Arrival[] = [];
  const waiters: (() => void)[] = [];
  let claims = 0;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      req.on('end', () => {
        arrivals.push({ path: req.url!, body: JSON.parse(text) });
        res.end('ok');
        for (const w of waiters.splice(0)) w();
      });
    }).listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const probe = net.createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

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
    const url = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}`;
    channelIds = [];
    for (const name of ['a', 'b', 'c']) {
      channelIds.push((await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: { name, url: `${url}/${name}` } })).id);
    }
    await vigil.start();
  }, 30_000);

  afterAll(async () => {
    await vigil?.stop(0);
    await storage?.close();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  async function arrived(n: number, withinMs = 10_000) {
    const deadline = Date.now() + withinMs;
    while (arrivals.length < n && Date.now() < deadline) {
      await Promise.race([new Promise<void>((r) => waiters.push(r)), new Promise((r) => setTimeout(r, 100))]);
    }
    return arrivals.length;
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
      name: 'orders-db', request: { hostname: '127.0.0.1', port: closedPort }, frequency: 1440, frequencyOffset: 12,
      useGlobalAlertSettings: false, retryStrategy: null, doubleCheck: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 } },
      alertChannelSubscriptions: channelIds.map((alertChannelId) => ({ alertChannelId, activated: true })),
    });
    // The start's first poll has answered before any alert exists.
    await new Promise((r) => setTimeout(r, 200));
    const claimsBefore = claims;

    await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } });
    expect(await arrived(3)).toBe(3);
    expect(arrivals.map((a) => [a.path, a.body.ALERT_TYPE, a.body.CHECK_NAME]).sort()).toEqual([
      ['/a', 'ALERT_FAILURE', 'orders-db'], ['/b', 'ALERT_FAILURE', 'orders-db'], ['/c', 'ALERT_FAILURE', 'orders-db'],
    ]);
    expect(claims).toBe(claimsBefore);
    // The recovery is leased only once the failure is marked delivered on each channel (a check's
    // alerts go to a channel one at a time, in order).
    await delivered();

    // The port opens: the next run passes and its recovery is handed over the same way.
    const open = net.createServer((s) => s.end()).listen(closedPort, '127.0.0.1');
    await once(open, 'listening');
    try {
      await vigil.checkSessions.trigger(accountId, { target: { checkId: [check.id] } });
      expect(await arrived(6)).toBe(6);
    } finally {
      await new Promise<void>((resolve) => open.close(() => resolve()));
    }
    for (const path of ['/a', '/b', '/c']) {
      expect(arrivals.filter((a) => a.path === path).map((a) => a.body.ALERT_TYPE)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    }
    await delivered();
    expect(claims).toBe(claimsBefore);
  }, 30_000);
});
