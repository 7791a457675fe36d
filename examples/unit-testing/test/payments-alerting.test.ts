/**
 * The host's own tests of its monitoring (src/monitoring.ts): does the payments check alert after
 * three failures, and not during Sunday's maintenance window? Vigil runs here as in production
 * (scheduler, retries, alert rules, outbox, dispatcher), on a fake clock, an in-memory store, a
 * fake runner the test decides the outcome of, and a fake transport that keeps what it was sent.
 * An hour of fake time takes milliseconds; nothing touches the network.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import {
  advance,
  advanceUntil,
  failResult,
  FakeClock,
  FakeRunner,
  FakeTransport,
  memoryStorage,
  passResult,
  settle,
} from '@vigil/core/testing';
import { setUpPaymentsMonitoring } from '../src/monitoring.js';

const MINUTE = 60_000;
const REFUSED = 'connect ECONNREFUSED 10.20.0.7:8443';

const running: Vigil[] = [];
afterEach(async () => {
  for (const vigil of running.splice(0)) await vigil.stop(0);
});

/** The host's monitoring on fakes, started at `startAt`, with a payments service the test takes down. */
async function payments(startAt: string) {
  const clock = new FakeClock(startAt);
  const service = { up: true };
  const runner = new FakeRunner('TCP', [() => (service.up ? passResult() : failResult(REFUSED))]);
  const onCall = new FakeTransport('WEBHOOK');
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'a'.repeat(64), clock, runners: [runner], transports: [onCall] });
  const account = await vigil.accounts.ensure();
  const { channel, check } = await setUpPaymentsMonitoring(vigil, account.id);
  await vigil.start();
  running.push(vigil);
  await settle();
  /** Finished runs that failed, or passed (a run's retries are part of it). */
  const finishedRuns = async (failed: boolean) => {
    const results = await vigil.checkResults.list(account.id, check.id, { limit: 100 });
    return results.items.filter((r) => r.resultType === 'FINAL' && r.hasFailures === failed).length;
  };
  const failedRuns = () => finishedRuns(true);
  const passedRuns = () => finishedRuns(false);
  const alerts = () => onCall.sent.map((d) => d.alert.alertType);
  return { clock, service, runner, onCall, vigil, accountId: account.id, channel, check, failedRuns, passedRuns, alerts };
}

describe('payments-api alerting', () => {
  it('alerts the on-call webhook at the third failed run in a row, not before, once, and again on recovery', async () => {
    // A Wednesday, at the hour the Sunday window would cover: it does not apply today.
    const p = await payments('2026-05-06T02:30:00+02:00');
    await advance(p.clock, 3 * MINUTE);
    expect(p.runner.jobs.length).toBeGreaterThanOrEqual(2);

    p.service.up = false;
    await advanceUntil(p.clock, async () => (await p.failedRuns()) === 2);
    await settle();
    expect(p.alerts()).toEqual([]);

    await advanceUntil(p.clock, async () => (await p.failedRuns()) === 3);
    await settle();
    expect(p.alerts()).toEqual(['ALERT_FAILURE']);
    const [sent] = p.onCall.sent;
    expect(sent!.channel.id).toBe(p.channel.id);
    expect(sent!.alert).toMatchObject({
      title: '"payments-api" is failing in us-east-1',
      check: { name: 'payments-api', tags: ['payments'] },
      result: { errorMessage: REFUSED },
    });

    // No reminders are configured: ten more failed runs send nothing more.
    await advance(p.clock, 10 * MINUTE);
    expect(await p.failedRuns()).toBeGreaterThanOrEqual(12);
    expect(p.alerts()).toEqual(['ALERT_FAILURE']);

    p.service.up = true;
    await advance(p.clock, 2 * MINUTE);
    expect(p.alerts()).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
  });

  it('never alerts for failures that a passing run interrupts', async () => {
    const p = await payments('2026-05-06T10:00:00Z');
    for (let round = 1; round <= 3; round++) {
      p.service.up = false;
      await advanceUntil(p.clock, async () => (await p.failedRuns()) === 2 * round);
      p.service.up = true;
      await advanceUntil(p.clock, async () => (await p.passedRuns()) === round);
    }
    expect(await p.failedRuns()).toBe(6);
    expect(p.alerts()).toEqual([]);
  });

  it('stays quiet during Sunday\'s maintenance window, while the check keeps running and shows the failure', async () => {
    const p = await payments('2026-05-10T02:05:00+02:00');
    p.service.up = false;
    await advance(p.clock, 30 * MINUTE);
    expect(await p.failedRuns()).toBeGreaterThanOrEqual(25);
    expect(p.alerts()).toEqual([]);
    expect(await p.vigil.checkStatuses.get(p.accountId, p.check.id)).toMatchObject({ hasFailures: true });
  });

  it('alerts at the first failed run after the window when the service is still down', async () => {
    const p = await payments('2026-05-10T03:50:00+02:00');
    p.service.up = false;
    await advanceUntil(p.clock, () => p.clock.now() >= new Date('2026-05-10T03:59:30+02:00'));
    expect(await p.failedRuns()).toBeGreaterThanOrEqual(8);
    expect(p.alerts()).toEqual([]);
    // The runs are once a minute: the first one that ends after 04:00 alerts.
    await advanceUntil(p.clock, () => p.onCall.sent.length > 0);
    expect(p.alerts()).toEqual(['ALERT_FAILURE']);
    expect(p.onCall.sent[0]!.alert.created_at >= '2026-05-10T02:00:00.000Z').toBe(true);
    expect(p.clock.now().getTime()).toBeLessThanOrEqual(Date.parse('2026-05-10T04:02:00+02:00'));
  });

  it('keeps the window on Berlin time when the clocks change: 02:00-04:00 in winter too', async () => {
    // 1 November 2026 is a Sunday in CET (UTC+1): the window is 01:00-03:00 UTC.
    const p = await payments('2026-11-01T01:05:00Z');
    p.service.up = false;
    await advance(p.clock, 20 * MINUTE);
    expect(await p.failedRuns()).toBeGreaterThanOrEqual(15);
    expect(p.alerts()).toEqual([]);
  });
});
