import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle } from './fake-time.js';
import { createVigil, type Logger, type LogMeta, type StatusPageIncidentEntry, type SubscriberMail, type SubscriberMailer, type Vigil, type VigilOptions } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, memoryStorage, passResult } from '../src/testing/index.js';

const SECRET = 'c'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';

// Runs every 10 s (frequency 0, offset 10), first at 12:00:10; no retry, so one job is one run.
const tcp = (overrides: Record<string, unknown> = {}) => ({
  name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 0, frequencyOffset: 10, doubleCheck: false, ...overrides,
});

const alertAfter = (failedRunThreshold: number) => ({
  useGlobalAlertSettings: false,
  alertSettings: {
    escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold }, reminders: { amount: 0, interval: 5 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
  },
});

interface Setup {
  vigil: Vigil;
  clock: FakeClock;
  runner: FakeRunner;
  accountId: string;
  serviceId: string;
  warnings: { msg: string; meta?: LogMeta }[];
}

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

async function setup(runner = new FakeRunner('TCP', [failResult('Connection refused by db-7')]), options: Partial<VigilOptions> = {}): Promise<Setup> {
  const clock = new FakeClock(T0);
  const warnings: Setup['warnings'] = [];
  const logger: Logger = {
    error: () => {}, info: () => {}, debug: () => {},
    warn: (msg, meta) => warnings.push({ msg, meta }),
    child: () => logger,
  };
  const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], logger, ...options });
  const account = await vigil.accounts.ensure('acct');
  const service = await vigil.services.create(account.id, { name: 'Orders API' });
  return { vigil, clock, runner, accountId: account.id, serviceId: service.id, warnings };
}

async function start(s: Setup): Promise<void> {
  await s.vigil.start();
  started.push(s.vigil);
  await settle();
}

/** Moves the clock on until the runner has been given `count` jobs in all, and lets their runs finish. */
async function untilRuns(s: Setup, count: number): Promise<void> {
  for (let i = 0; i < 2_000 && s.runner.jobs.length < count; i++) {
    s.clock.advance(100);
    await settle();
  }
  await settle(50);
  expect(s.runner.jobs).toHaveLength(count);
}

async function incidents(s: Setup): Promise<StatusPageIncidentEntry[]> {
  return (await s.vigil.statusPageIncidents.list(s.accountId, { limit: 100 })).entries;
}

const trigger = (s: Setup, overrides: Record<string, unknown> = {}) => ({
  triggerIncident: { serviceId: s.serviceId, name: 'Orders are down', description: 'We are looking into failed orders.', notifySubscribers: true, ...overrides },
});

describe('engine: triggerIncident opens and resolves a status-page incident', () => {
  it('a failure alert opens exactly one incident on the service, however long the check keeps failing', async () => {
    const s = await setup();
    // No alert channel is subscribed: the incident follows the alert settings, not the channels.
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await start(s);
    await untilRuns(s, 1);
    const [opened, ...more] = await incidents(s);
    expect(more).toEqual([]);
    expect(opened).toMatchObject({
      name: 'Orders are down', services: [{ id: s.serviceId, name: 'Orders API' }], status: 'INVESTIGATING', stoppedAt: null,
      incidentUpdates: [{ description: 'We are looking into failed orders.', status: 'INVESTIGATING', notifySubscribers: true }],
    });
    expect(await s.vigil.storage.alertStates.get(s.accountId, check.id)).toMatchObject({ incidentId: opened!.id });
    await untilRuns(s, 4);
    const after = await incidents(s);
    expect(after.map((i) => [i.id, i.status, i.incidentUpdates.length])).toEqual([[opened!.id, 'INVESTIGATING', 1]]);
    expect(s.warnings).toEqual([]);
  });

  it('resolves the incident when the check recovers, and a later failure opens a new one', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await start(s);
    await untilRuns(s, 2);
    s.runner.willReturn(passResult());
    await untilRuns(s, 3);
    const recoveredAt = (await s.vigil.checkResults.list(s.accountId, check.id, {})).items[0]!.stoppedAt;
    const [resolved, ...more] = await incidents(s);
    expect(more).toEqual([]);
    expect(resolved!.status).toBe('RESOLVED');
    expect(resolved!.stoppedAt).toBe(recoveredAt);
    expect(resolved!.incidentUpdates.map((u) => [u.description, u.status, u.notifySubscribers])).toEqual([
      ['orders-db recovered', 'RESOLVED', true],
      ['We are looking into failed orders.', 'INVESTIGATING', true],
    ]);
    expect((await s.vigil.storage.alertStates.get(s.accountId, check.id))?.incidentId ?? null).toBeNull();
    await untilRuns(s, 5);
    expect((await incidents(s)).map((i) => i.status)).toEqual(['RESOLVED']);
    s.runner.willReturn(failResult('Connection reset'));
    await untilRuns(s, 6);
    const [fresh, old] = await incidents(s);
    expect(old!.id).toBe(resolved!.id);
    expect(fresh).toMatchObject({ status: 'INVESTIGATING', stoppedAt: null });
    expect(fresh!.id).not.toBe(resolved!.id);
  });

  it('emails the status page\'s confirmed subscribers when it opens and when it resolves the incident', async () => {
    const sent: SubscriberMail[] = [];
    const mailer: SubscriberMailer = {
      send: async (mail) => {
        sent.push(mail);
        return { detail: 'taken' };
      },
    };
    const s = await setup(undefined, { subscriberMailer: mailer, statusPageSubscriptions: { publicUrl: 'https://status.example.com' } });
    const page = await s.vigil.statusPages.create(s.accountId, { name: 'Orders', url: 'orders', cards: [{ name: 'Shop', serviceIds: [s.serviceId] }] });
    const stored = await s.vigil.storage.statusPages.get(s.accountId, page.id);
    await s.vigil.statusPageSubscribers.subscribe(stored!, { email: 'ana@example.com' });
    await s.vigil.alerts.drain();
    const token = /token=([\w-]+)/.exec(sent[0]!.text)![1];
    expect(await s.vigil.statusPageSubscribers.confirm(stored!, token)).toBe(true);
    await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await start(s);
    await untilRuns(s, 2);
    s.runner.willReturn(passResult());
    await untilRuns(s, 3);
    await s.vigil.alerts.drain();
    expect(sent.map((m) => [m.to, m.subject])).toEqual([
      ['ana@example.com', 'Confirm your subscription to Orders'],
      ['ana@example.com', '[Orders] Orders are down: Investigating'],
      ['ana@example.com', '[Orders] Orders are down: Resolved'],
    ]);
    expect(sent[2]!.text).toContain('orders-db recovered');
  });

  it('a check without triggerIncident opens no incident, beside one with it that does', async () => {
    const s = await setup();
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const plain = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'payments-db' }));
    const triggering = await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await start(s);
    await untilRuns(s, 6);
    const alerted = (await s.vigil.storage.outbox.pending(s.accountId)).map((m) => [m.checkId, m.alertType]);
    expect(alerted).toEqual(expect.arrayContaining([[plain.id, 'ALERT_FAILURE'], [triggering.id, 'ALERT_FAILURE']]));
    expect((await incidents(s)).map((i) => i.name)).toEqual(['Orders are down']);
    expect((await s.vigil.storage.alertStates.get(s.accountId, plain.id))?.incidentId ?? null).toBeNull();
  });

  it('waits for the escalation threshold: with an alert after 3 failed runs, no incident before the third', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ ...trigger(s), ...alertAfter(3) }));
    await start(s);
    await untilRuns(s, 2);
    expect(await incidents(s)).toEqual([]);
    await untilRuns(s, 3);
    expect(await incidents(s)).toHaveLength(1);
    await untilRuns(s, 5);
    expect(await incidents(s)).toHaveLength(1);
  });

  it('a pass between failures starts the count again: under a threshold of 2, only two failures in a row open one', async () => {
    const s = await setup(new FakeRunner('TCP', [failResult(), passResult(), failResult(), passResult(), failResult(), failResult()]));
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ ...trigger(s), ...alertAfter(2) }));
    await start(s);
    await untilRuns(s, 5);
    expect(await incidents(s)).toEqual([]);
    await untilRuns(s, 6);
    expect(await incidents(s)).toHaveLength(1);
  });

  it('time-based escalation opens the incident on the minute tick, between runs far apart', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      ...trigger(s), frequency: 10, frequencyOffset: 1, useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 }, reminders: { amount: 0, interval: 5 } },
    }));
    await start(s);
    await untilRuns(s, 1);
    const failedAt = Date.parse(s.runner.jobs[0]!.dueAt);
    await runFor(s.clock, failedAt + 4 * 60_000 - s.clock.now().getTime(), 1_000);
    expect(await incidents(s)).toEqual([]);
    await runFor(s.clock, 2 * 60_000, 1_000);
    expect(s.runner.jobs).toHaveLength(1);
    const [opened] = await incidents(s);
    expect(opened).toMatchObject({ name: 'Orders are down', status: 'INVESTIGATING' });
    expect(Date.parse(opened!.created_at) - failedAt).toBeGreaterThanOrEqual(5 * 60_000);
  });

  it('a deleted service: the run is stored and alerted, a warning is logged, no incident is opened', async () => {
    const s = await setup();
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await s.vigil.services.delete(s.accountId, s.serviceId);
    await start(s);
    await untilRuns(s, 2);
    expect((await s.vigil.checkResults.list(s.accountId, check.id, {})).total).toBe(2);
    expect(await s.vigil.checkStatuses.get(s.accountId, check.id)).toMatchObject({ hasFailures: true });
    expect((await s.vigil.storage.outbox.pending(s.accountId)).map((m) => [m.alertType, m.alertChannelId])).toEqual([['ALERT_FAILURE', channel.id]]);
    expect(await incidents(s)).toEqual([]);
    expect(s.warnings).toEqual([{
      msg: 'incident trigger: could not open a status-page incident',
      meta: expect.objectContaining({ accountId: s.accountId, checkId: check.id, serviceId: s.serviceId }),
    }]);
    // The runs go on, and recovery has nothing to resolve.
    s.runner.willReturn(passResult());
    await untilRuns(s, 3);
    expect((await s.vigil.checkResults.list(s.accountId, check.id, {})).total).toBe(3);
    expect(s.warnings).toHaveLength(1);
  });

  it('no incident inside a maintenance window that silences alerts; the failure opens one once the window is over', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await s.vigil.maintenanceWindows.create(s.accountId, {
      name: 'db upgrade', startsAt: T0, endsAt: '2026-05-01T12:01:00.000Z', repeatUnit: 'DAY', silenceAllAlerts: true,
    });
    await start(s);
    await untilRuns(s, 5); // 12:00:10 .. 12:00:50, all failing inside the window
    expect(await incidents(s)).toEqual([]);
    await untilRuns(s, 7);
    expect(Date.parse(s.runner.jobs[6]!.dueAt)).toBeGreaterThan(Date.parse('2026-05-01T12:01:00.000Z'));
    expect(await incidents(s)).toHaveLength(1);
  });

  it('an incident opened before a silencing window is still resolved when the check recovers inside it', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await start(s);
    await untilRuns(s, 1);
    await s.vigil.maintenanceWindows.create(s.accountId, {
      name: 'db fix', startsAt: '2026-05-01T12:00:12.000Z', endsAt: '2026-05-01T12:05:00.000Z', repeatUnit: 'DAY', silenceAllAlerts: true,
    });
    s.runner.willReturn(passResult());
    await untilRuns(s, 2);
    expect((await incidents(s)).map((i) => i.status)).toEqual(['RESOLVED']);
  });

  it('a muted check still opens and resolves its incident; only its notifications are muted', async () => {
    const s = await setup();
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ ...trigger(s), muted: true }));
    await start(s);
    await untilRuns(s, 3);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
    expect((await incidents(s)).map((i) => i.status)).toEqual(['INVESTIGATING']);
    s.runner.willReturn(passResult());
    await untilRuns(s, 4);
    expect((await incidents(s)).map((i) => i.status)).toEqual(['RESOLVED']);
  });

  it('an incident resolved by hand: recovery adds nothing, the next failure opens a new incident', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s)));
    await start(s);
    await untilRuns(s, 1);
    const [opened] = await incidents(s);
    await s.vigil.statusPageIncidents.addUpdate(s.accountId, opened!.id, { description: 'Fixed by ops', status: 'RESOLVED' });
    await untilRuns(s, 2);
    s.runner.willReturn(passResult());
    await untilRuns(s, 3);
    const [byHand] = await incidents(s);
    expect(byHand!.incidentUpdates.map((u) => u.description)).toEqual(['Fixed by ops', 'We are looking into failed orders.']);
    s.runner.willReturn(failResult());
    await untilRuns(s, 4);
    expect((await incidents(s)).map((i) => [i.id === opened!.id, i.status])).toEqual([[false, 'INVESTIGATING'], [true, 'RESOLVED']]);
  });

  it('an empty description is filled with the check name and its error', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp(trigger(s, { description: '', notifySubscribers: false })));
    await start(s);
    await untilRuns(s, 1);
    const [opened] = await incidents(s);
    expect(opened!.incidentUpdates).toMatchObject([
      { description: 'orders-db is failing: Connection refused by db-7', status: 'INVESTIGATING', notifySubscribers: false },
    ]);
  });
});
