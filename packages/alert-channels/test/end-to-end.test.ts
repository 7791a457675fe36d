import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { FakeClock, memoryStorage } from '@vigil/core/testing';
import { registerTcpRunner } from '@vigil/runner-tcp';
import { registerAlertChannels } from '@vigil/alert-channels';
import { Receiver } from './support/receiver.js';

const T0 = '2026-05-01T12:00:00.000Z';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on (until `open()`), so TCP runs to it fail with ECONNREFUSED. */
async function target() {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  let server: Server | null = null;
  cleanups.push(async () => {
    if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  });
  return {
    port,
    open: () => new Promise<void>((resolve) => {
      server = createServer((s) => s.end());
      server.listen(port, '127.0.0.1', () => resolve());
    }),
  };
}

/**
 * The engine and dispatcher on a fake clock with real sockets: the clock moves in steps, and
 * between steps real I/O (the TCP connect, the webhook request) gets time to finish.
 */
async function runFor(clock: FakeClock, ms: number, step = 1_000) {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await new Promise((r) => setTimeout(r, 4));
  }
}

/** Moves the clock a second at a time until `cond` holds (real I/O gets time between steps). */
async function advanceUntil(clock: FakeClock, cond: () => Promise<boolean>, limitMs = 120_000) {
  for (let t = 0; !(await cond()); t += 1_000) {
    if (t >= limitMs) throw new Error(`not reached within ${limitMs / 1000} s of clock time`);
    clock.advance(1_000);
    await new Promise((r) => setTimeout(r, 4));
  }
}

async function setup() {
  const clock = new FakeClock(T0);
  const receiver = await Receiver.start();
  const vigil: Vigil = createVigil(
    { storage: memoryStorage(), secretKey: 'c'.repeat(64), clock, alerts: { pollMs: 1_000 } },
    (c) => {
      registerTcpRunner(c);
      registerAlertChannels(c, { certificates: false });
    },
  );
  cleanups.push(async () => {
    await vigil.stop(0);
    await receiver.close();
  });
  const { id: accountId } = await vigil.accounts.ensure('e2e');
  await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: { name: 'ops', url: `${receiver.url}/alerts`, webhookSecret: 'k' } });
  const alertTypes = () => receiver.requests.map((r) => (r.json as { ALERT_TYPE: string }).ALERT_TYPE);
  return { clock, receiver, vigil, accountId, alertTypes };
}

const tcpCheck = (port: number) => ({
  name: 'orders-db', request: { hostname: '127.0.0.1', port }, frequency: 0, frequencyOffset: 10,
  useGlobalAlertSettings: false, retryStrategy: null, doubleCheck: false,
  alertSettings: {
    escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 }, reminders: { amount: 2, interval: 1 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
  },
});

describe('alerting end to end: engine, TCP runner and a webhook', () => {
  it('a failing TCP check with failedRunThreshold 2 sends one failure alert, reminders per amount and interval, and one recovery', async () => {
    const s = await setup();
    const t = await target();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcpCheck(t.port));
    await s.vigil.start();
    const finalResults = async () =>
      (await s.vigil.storage.checkResults.listByCheck(s.accountId, check.id, { limit: 10, offset: 0, resultType: 'FINAL' })).items;
    // The first failed run is under the threshold: nothing is sent.
    await advanceUntil(s.clock, async () => (await finalResults()).length >= 1);
    await runFor(s.clock, 2_000);
    const [firstRun] = await finalResults();
    expect(firstRun!.hasErrors || firstRun!.hasFailures).toBe(true);
    expect(s.alertTypes()).toEqual([]);
    // The second failed run sends the failure alert.
    await advanceUntil(s.clock, async () => s.receiver.requests.length >= 1);
    expect(await finalResults()).toHaveLength(2);
    expect(s.alertTypes()).toEqual(['ALERT_FAILURE']);
    const first = s.receiver.requests[0]!.json as Record<string, unknown>;
    expect(first).toMatchObject({ CHECK_NAME: 'orders-db', CHECK_TYPE: 'TCP', CHECK_ID: check.id, RUN_LOCATION: 'us-east-1', IS_REMINDER: false });
    expect(String(first.CHECK_ERROR_MESSAGE)).toMatch(/^Connection refused by 127.0.0.1:/);
    // Two reminders a minute apart, then no more.
    await runFor(s.clock, 180_000);
    expect(s.alertTypes()).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN']);
    expect(s.receiver.requests.slice(1).map((r) => (r.json as { REMINDER_SEQUENCE: number }).REMINDER_SEQUENCE)).toEqual([1, 2]);
    // The target comes up: one recovery.
    await t.open();
    await advanceUntil(s.clock, async () => s.receiver.requests.length >= 4);
    await runFor(s.clock, 20_000);
    expect(s.alertTypes()).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN', 'ALERT_RECOVERY']);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
  });

  it('a maintenance window with silenceAllAlerts sends nothing while the check keeps failing', async () => {
    const s = await setup();
    const t = await target();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcpCheck(t.port));
    await s.vigil.maintenanceWindows.create(s.accountId, {
      name: 'db upgrade', startsAt: T0, endsAt: '2026-05-01T13:00:00.000Z', repeatUnit: 'DAY', silenceAllAlerts: true,
    });
    await s.vigil.start();
    await runFor(s.clock, 120_000);
    const results = await s.vigil.storage.checkResults.listByCheck(s.accountId, check.id, { limit: 100, offset: 0, resultType: 'FINAL' });
    expect(results.items.length).toBeGreaterThanOrEqual(10);
    expect(results.items.every((r) => r.hasErrors || r.hasFailures)).toBe(true);
    expect(s.receiver.requests).toEqual([]);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
  });
});
