import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runFor } from './fake-time.js';
import { createVigil, type Vigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, FakeTransport, memoryStorage, passResult } from '../src/testing/index.js';

const SECRET = 'f'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';


const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

async function setup(transport = new FakeTransport('EMAIL'), runner = new FakeRunner('TCP'), storage = memoryStorage(), clock = new FakeClock(T0)) {
  const vigil = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], transports: [transport], alerts: { pollMs: 1_000 } });
  const account = await vigil.accounts.ensure('acct');
  return { vigil, clock, transport, runner, storage, accountId: account.id };
}

async function enqueue(vigil: Vigil, accountId: string, channelId: number, checkId: string, n: number, clock: FakeClock) {
  await vigil.storage.outbox.enqueue(Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    accountId, checkId, alertChannelId: channelId, alertType: i % 2 ? 'ALERT_RECOVERY' : 'ALERT_FAILURE',
    payload: { checkId, checkName: `check ${checkId}`, checkType: 'TCP', runLocation: 'eu-west-1', errorMessage: 'refused', checkResultId: `r${i}`, sequence: i },
    created_at: new Date(clock.now().getTime() + i).toISOString(), nextAttemptAt: clock.now().toISOString(),
  })));
}

describe('alert dispatcher', () => {
  it('sends what the outbox holds through the channel type\'s transport and logs each delivery', async () => {
    const s = await setup();
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await enqueue(s.vigil, s.accountId, channel.id, 'a', 2, s.clock);
    await s.vigil.start();
    started.push(s.vigil);
    await runFor(s.clock, 2_000);
    expect(s.transport.sent.map((d) => [d.alert.title, d.channel.config])).toEqual([
      ['"check a" is failing in eu-west-1', { address: 'ops@example.com' }],
      ['"check a" has recovered', { address: 'ops@example.com' }],
    ]);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
    const log = await s.vigil.alertChannels.deliveries(s.accountId, channel.id, {});
    expect(log.map((l) => [l.ok, l.detail])).toEqual([[true, 'delivered (fake-2)'], [true, 'delivered (fake-1)']]);
  });

  it('retries a failed send with exponential backoff, keeps the order of a check\'s alerts, and logs every attempt', async () => {
    const transport = new FakeTransport('EMAIL').failNext(2);
    const s = await setup(transport);
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await enqueue(s.vigil, s.accountId, channel.id, 'a', 2, s.clock);
    await s.vigil.start();
    started.push(s.vigil);
    await runFor(s.clock, 9_000, 500);
    expect(transport.attempts).toBe(1);
    expect(transport.sent).toEqual([]);
    await runFor(s.clock, 2_000, 500);
    expect(transport.attempts).toBe(2);
    await runFor(s.clock, 25_000, 500);
    expect(transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    const log = await s.vigil.alertChannels.deliveries(s.accountId, channel.id, {});
    expect(log.map((l) => l.ok).reverse()).toEqual([false, false, true, true]);
    expect(log.at(-1)!.detail).toBe('Provider unavailable');
  });

  it('gives an alert up after 24 hours of failures, saying so in the log', async () => {
    const transport = new FakeTransport('EMAIL');
    const s = await setup(transport);
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    transport.refuseChannel(channel.id);
    await enqueue(s.vigil, s.accountId, channel.id, 'a', 1, s.clock);
    await s.vigil.start();
    started.push(s.vigil);
    await runFor(s.clock, 25 * 3_600_000, 60_000);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
    const log = await s.vigil.alertChannels.deliveries(s.accountId, channel.id, { limit: 100 });
    expect(log[0]!.detail).toMatch(/^Given up after 24 h: Channel \d+ refused the alert$/);
    // Backoff doubles from 10 s up to 1 h: about 30 attempts in a day, not thousands.
    expect(log.length).toBeGreaterThan(20);
    expect(log.length).toBeLessThan(40);
  });

  it('two dispatchers on one outbox send each alert once', async () => {
    const storage = memoryStorage();
    const clock = new FakeClock(T0);
    const a = await setup(new FakeTransport('EMAIL'), new FakeRunner('TCP'), storage, clock);
    const b = await setup(new FakeTransport('EMAIL'), new FakeRunner('TCP'), storage, clock);
    const channel = await a.vigil.alertChannels.create(a.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    for (const check of ['a', 'b', 'c', 'd', 'e']) await enqueue(a.vigil, a.accountId, channel.id, check, 4, clock);
    for (const v of [a.vigil, b.vigil]) {
      await v.start();
      started.push(v);
    }
    await runFor(clock, 10_000, 500);
    const sent = [...a.transport.sent, ...b.transport.sent].map((d) => `${d.alert.check.id}:${d.alert.result?.id}`);
    expect(sent).toHaveLength(20);
    expect(new Set(sent).size).toBe(20);
  });

  it('drops the alerts of a deleted channel', async () => {
    const s = await setup();
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await enqueue(s.vigil, s.accountId, channel.id, 'a', 1, s.clock);
    await s.vigil.alertChannels.delete(s.accountId, channel.id);
    await s.vigil.start();
    started.push(s.vigil);
    await runFor(s.clock, 2_000);
    expect(s.transport.attempts).toBe(0);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
  });
});

describe('alerting end to end with the engine', () => {
  const tcp = (overrides: Record<string, unknown> = {}) => ({
    name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 0, frequencyOffset: 10, useGlobalAlertSettings: false, retryStrategy: null, doubleCheck: false,
    alertSettings: {
      escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 }, reminders: { amount: 2, interval: 1 },
      parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    },
    ...overrides,
  });

  it('a check failing twice sends one failure alert, reminders per amount and interval, and one recovery', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
    const s = await setup(new FakeTransport('EMAIL'), runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await s.vigil.start();
    started.push(s.vigil);
    // One failed run is under the threshold of two; the second sends the alert (within a poll).
    while (runner.jobs.length < 1) await runFor(s.clock, 500, 500);
    await runFor(s.clock, 2_000, 500);
    expect(s.transport.sent).toHaveLength(0);
    while (runner.jobs.length < 2) await runFor(s.clock, 500, 500);
    await runFor(s.clock, 2_000, 500);
    expect(s.transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE']);
    expect(s.transport.sent[0]!.alert.result?.errorMessage).toBe('Connection refused');
    await runFor(s.clock, 240_000, 1_000);
    expect(s.transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN']);
    runner.willReturn(passResult());
    await runFor(s.clock, 15_000, 500);
    expect(s.transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN', 'ALERT_RECOVERY']);
  });

  it('reminders and time-based escalation fire on time between the runs of an hourly check', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
    const s = await setup(new FakeTransport('EMAIL'), runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      // Fixed phases (minute 1 and 2 of the hour): a phase derived from a random id could put the
      // second check's run late enough in the hour that the first one runs again in the window.
      name: 'reminded', frequency: 60, frequencyOffset: 10,
      alertSettings: {
        escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 2, interval: 5 },
        parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      },
    }));
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      name: 'escalated', frequency: 60, frequencyOffset: 20,
      alertSettings: {
        escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 }, runBasedEscalation: { failedRunThreshold: 1 },
        reminders: { amount: 0, interval: 5 }, parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      },
    }));
    await s.vigil.start();
    started.push(s.vigil);
    // Both checks run once within the hour; from then on only the minute ticks move them.
    while (runner.jobs.length < 2) await runFor(s.clock, 60_000, 1_000);
    await runFor(s.clock, 12 * 60_000, 1_000);
    expect(runner.jobs).toHaveLength(2);
    const of = (name: string) => s.transport.sent.filter((d) => d.alert.check.name === name).map((d) => d.alert.alertType);
    expect(of('reminded')).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN']);
    expect(of('escalated')).toEqual(['ALERT_FAILURE']);
  });

  it('a failing check keeps its between-runs reminders when it is edited', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
    const s = await setup(new FakeTransport('EMAIL'), runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      name: 'edited', frequency: 60, frequencyOffset: null,
      alertSettings: {
        escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 1, interval: 5 },
        parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      },
    }));
    await s.vigil.start();
    started.push(s.vigil);
    while (runner.jobs.length < 1) await runFor(s.clock, 60_000, 1_000);
    await runFor(s.clock, 2_000, 1_000);
    expect(s.transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE']);
    // The edit plans the check's schedule anew; the failing check's minute tick must survive it.
    await s.vigil.checks.update(s.accountId, check.id, { tags: ['edited'] });
    await runFor(s.clock, 7 * 60_000, 1_000);
    expect(runner.jobs).toHaveLength(1);
    expect(s.transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN']);
  });

  it('a maintenance window with silenceAllAlerts sends nothing', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
    const s = await setup(new FakeTransport('EMAIL'), runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await s.vigil.maintenanceWindows.create(s.accountId, {
      name: 'quiet', startsAt: T0, endsAt: '2026-05-01T13:00:00.000Z', repeatUnit: 'DAY', silenceAllAlerts: true,
    });
    await s.vigil.start();
    started.push(s.vigil);
    await runFor(s.clock, 60_000, 1_000);
    expect(runner.jobs.length).toBeGreaterThanOrEqual(5);
    expect(s.transport.attempts).toBe(0);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
  });
});
