import { describe, expect, it } from 'vitest';
import { runFor, settle } from './fake-time.js';
import { createVigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, memoryStorage, passResult } from '../src/testing/index.js';
import { SECRET, setup, start, T0, tcp, track } from './engine-support.js';

describe('engine: alerts, errors and sessions', () => {
  it('groups the error, writes a failure alert to the outbox for subscribed channels, and none for a muted check', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused by 10.0.0.7:5432')]);
    const s = await setup({}, runner);
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const loud = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'loud' }));
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'quiet', muted: true }));
    await start(s);
    await runFor(s.clock, 25_000);
    const pending = await s.vigil.storage.outbox.pending(s.accountId);
    expect(pending.map((m) => [m.checkId, m.alertType, m.alertChannelId])).toEqual([[loud.id, 'ALERT_FAILURE', channel.id]]);
    expect(pending[0]!.payload).toMatchObject({ checkName: 'loud', errorMessage: 'Connection refused by 10.0.0.7:5432', runLocation: 'us-east-1' });
    const groups = await s.vigil.errorGroups.listByCheck(s.accountId, loud.id, {});
    expect(groups).toHaveLength(1);
    expect(groups[0]!.cleanedErrorMessage).toBe('Connection refused by <ip>');
    runner.willReturn(passResult());
    await runFor(s.clock, 15_000);
    expect((await s.vigil.storage.outbox.pending(s.accountId)).map((m) => m.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
  });

  it('alerts a runParallel check on the share of failed locations of each round', async () => {
    const runner = new FakeRunner('TCP', [(job) => (job.location === 'eu-west-1' ? failResult('Connection reset') : passResult())]);
    const s = await setup({}, runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      locations: ['us-east-1', 'eu-west-1'], runParallel: true, useGlobalAlertSettings: false,
      alertSettings: {
        escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 },
        parallelRunFailureThreshold: { enabled: true, percentage: 100 },
      },
    }));
    await start(s);
    await runFor(s.clock, 35_000);
    // Half of the locations fail: under the 100 % threshold, no alert.
    expect(runner.jobs.filter((j) => j.location === 'eu-west-1').length).toBeGreaterThanOrEqual(3);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
    runner.willReturn(failResult('Connection reset'));
    await runFor(s.clock, 15_000);
    const pending = await s.vigil.storage.outbox.pending(s.accountId);
    expect(pending.map((m) => [m.checkId, m.alertType])).toEqual([[check.id, 'ALERT_FAILURE']]);
  });

  it('runs a triggered session at once and completes it', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 60, frequencyOffset: 300 }));
    await start(s);
    const { sessions } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await settle();
    const session = await s.vigil.checkSessions.get(s.accountId, sessions[0]!.checkSessionId);
    expect(session).toMatchObject({ status: 'PASSED', runSource: 'TRIGGER_API' });
    expect(session.results).toHaveLength(1);
    expect(s.runner.jobs.map((j) => j.runSource)).toEqual(['TRIGGER_API']);
  });

  it('runs a group\'s session runs in groupOrder, at most the group\'s concurrency at once', async () => {
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const clock = new FakeClock(T0);
    const runner = new FakeRunner('TCP', [(job) => new Promise((resolve) => {
      running++;
      most = Math.max(most, running);
      order.push(job.check.name);
      clock.setTimer(new Date(clock.now().getTime() + 1_000), () => {
        running--;
        resolve(passResult());
      });
    })]);
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner] });
    const account = await vigil.accounts.ensure('acct');
    const group = await vigil.checkGroups.create(account.id, { name: 'flow', concurrency: 2 });
    // Hourly at half past (frequencyOffset 300 x 6 s): no scheduled run falls in the test's seconds.
    for (const [name, groupOrder] of [['e', 5], ['c', 3], ['a', 1], ['d', 4], ['b', 2]] as const) {
      await vigil.checks.create(account.id, 'TCP', tcp({ name, groupId: group.id, groupOrder, frequency: 60, frequencyOffset: 300 }));
    }
    await vigil.start();
    track(vigil, clock);
    const { sessions } = await vigil.checkSessions.trigger(account.id, { target: { matchTags: [] } });
    expect(sessions).toHaveLength(5);
    await runFor(clock, 5_000);
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(runner.jobs.map((j) => j.runSource)).not.toContain('SCHEDULER');
    expect(most).toBe(2);
    for (const session of sessions) expect((await vigil.checkSessions.get(account.id, session.checkSessionId)).status).toBe('PASSED');
  });

  it('groups the errors of a test session by project and tells the script where it runs from', async () => {
    const runner = new FakeRunner('TCP', [failResult('Timeout after 5000 ms')]);
    const s = await setup({}, runner);
    const group = await s.vigil.checkGroups.create(s.accountId, { name: 'checkout flow' });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'payments', frequency: 60, frequencyOffset: 300, groupId: group.id }));
    await start(s);
    await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] }, projectId: 'web-shop', environment: 'staging' });
    await settle();
    expect(runner.jobs[0]!.environment).toMatchObject({ VIGIL_RUN_SOURCE: 'TEST', CI: 'true' });
    const groups = await s.vigil.errorGroups.listByProject(s.accountId, 'web-shop');
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({
      projectId: 'web-shop', environments: ['staging'],
      pwtMetadata: [{ projectName: 'web-shop', testFile: 'payments', testTitle: 'payments', suitePath: ['checkout flow'] }],
    });
    await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await settle();
    expect(runner.jobs.at(-1)!.environment).toMatchObject({ VIGIL_RUN_SOURCE: 'TRIGGER_API' });
    expect(runner.jobs.at(-1)!.environment.CI).toBeUndefined();
  });

  it('has a failed test session run\'s error groups written by the time its session reads as ended', async () => {
    const storage = memoryStorage();
    // The project's group write is slow: it waits for a few turns of the event loop.
    const insert = storage.testSessionErrorGroups.insert.bind(storage.testSessionErrorGroups);
    storage.testSessionErrorGroups.insert = async (...args) => {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      return insert(...args);
    };
    const s = await setup({ storage }, new FakeRunner('TCP', [failResult('Connection refused')]));
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'payments', frequency: 60, frequencyOffset: 300 }));
    await start(s);
    const { sessions } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] }, projectId: 'web-shop' });
    let ended = false;
    for (let i = 0; i < 200 && !ended; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      ended = (await s.vigil.checkSessions.get(s.accountId, sessions[0]!.checkSessionId)).status === 'FAILED';
      if (ended) expect((await s.vigil.errorGroups.listByProject(s.accountId, 'web-shop')).map((g) => g.rawErrorMessage)).toEqual(['Connection refused']);
    }
    expect(ended).toBe(true);
  });

  it('records each failed test of a Playwright suite in a test session as its own error, with the test\'s metadata', async () => {
    const tests = [
      { title: 'shows the cart', file: 'tests/cart.spec.ts', suitePath: ['Cart'], project: 'chromium', status: 'failed', error: 'Expected 2, received 1' },
      { title: 'pays', file: 'tests/pay.spec.ts', suitePath: [], project: 'chromium', status: 'timedOut', error: null },
      { title: 'logs in', file: 'tests/login.spec.ts', suitePath: [], project: 'chromium', status: 'passed', error: null },
      { title: 'retries', file: 'tests/login.spec.ts', suitePath: [], project: 'chromium', status: 'flaky', error: null },
      { title: 'checks out', file: 'tests/pay.spec.ts', suitePath: [], project: 'chromium', status: 'interrupted', error: null },
    ];
    const runner = new FakeRunner('PLAYWRIGHT', [{ ...failResult('tests/cart.spec.ts › Cart › shows the cart: Expected 2, received 1'), details: { tests } }]);
    const s = await setup({}, runner);
    const check = await s.vigil.checks.create(s.accountId, 'PLAYWRIGHT', {
      name: 'shop suite', frequency: 60, files: { 'tests/cart.spec.ts': "import { test } from '@playwright/test';\ntest('x', () => {});" },
    });
    await start(s);
    await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] }, projectId: 'web-shop' });
    await settle();
    const groups = await s.vigil.errorGroups.listByProject(s.accountId, 'web-shop');
    expect(groups.map((g) => [g.rawErrorMessage, g.pwtMetadata]).sort()).toEqual([
      ['tests/cart.spec.ts › Cart › shows the cart: Expected 2, received 1', [{ projectName: 'chromium', testFile: 'tests/cart.spec.ts', testTitle: 'shows the cart', suitePath: ['Cart'] }]],
      ['tests/pay.spec.ts › checks out: the suite\'s time ran out during the test', [{ projectName: 'chromium', testFile: 'tests/pay.spec.ts', testTitle: 'checks out', suitePath: [] }]],
      ['tests/pay.spec.ts › pays: the test timed out', [{ projectName: 'chromium', testFile: 'tests/pay.spec.ts', testTitle: 'pays', suitePath: [] }]],
    ]);
    // The check's own error group keeps the run's message.
    expect((await s.vigil.errorGroups.listByCheck(s.accountId, check.id, {})).map((g) => g.rawErrorMessage)).toEqual(['tests/cart.spec.ts › Cart › shows the cart: Expected 2, received 1']);
  });

  it('cancels a running session: the run stops, the session ends CANCELLED and no alert is raised', async () => {
    const runner = new FakeRunner('TCP', [() => new Promise(() => {})]);
    const s = await setup({ engine: { runTimeoutMs: 600_000 } }, runner);
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 60, frequencyOffset: 300 }));
    await start(s);
    const { sessions } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await settle();
    expect((await s.vigil.checkSessions.get(s.accountId, sessions[0]!.checkSessionId)).status).toBe('PROGRESS');
    const cancelled = await s.vigil.checkSessions.cancel(s.accountId, sessions[0]!.checkSessionId, {});
    expect(cancelled.status).toBe('CANCELLED');
    await settle();
    expect(s.vigil.engine.active).toBe(0);
    expect(await s.vigil.storage.outbox.pending(s.accountId)).toEqual([]);
    expect((await s.vigil.checkSessions.get(s.accountId, sessions[0]!.checkSessionId)).status).toBe('CANCELLED');
  });

  it('fails a heartbeat check without pings and passes it once pinged', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'HEARTBEAT', {
      name: 'nightly', heartbeat: { period: 1, periodUnit: 'minutes', grace: 1, graceUnit: 'minutes' },
    });
    await start(s);
    await runFor(s.clock, 190_000, 1_000);
    expect(await s.vigil.checkStatuses.get(s.accountId, check.id)).toMatchObject({ hasFailures: true });
    const token = (await s.vigil.storage.checks.get(s.accountId, check.id) as { heartbeat: { pingToken: string } }).heartbeat.pingToken;
    await s.vigil.heartbeats.ping(token);
    await runFor(s.clock, 61_000, 1_000);
    expect(await s.vigil.checkStatuses.get(s.accountId, check.id)).toMatchObject({ hasFailures: false });
  });
});

describe('engine: several processes and stopping', () => {
  it('two engines on one store run each slot once', async () => {
    const clock = new FakeClock(T0);
    const storage = memoryStorage();
    const runners = [new FakeRunner('TCP'), new FakeRunner('TCP')];
    // Small claim batches, so that both engines find due slots to take.
    const engines = runners.map((r) => createVigil({ storage, secretKey: SECRET, clock, runners: [r], engine: { claimBatch: 3 } }));
    const account = await engines[0]!.accounts.ensure('acct');
    for (let i = 0; i < 20; i++) await engines[0]!.checks.create(account.id, 'TCP', tcp({ name: `c${i}` }));
    for (const e of engines) {
      await e.start();
      track(e, clock);
    }
    await runFor(clock, 60_000);
    const jobs = runners.flatMap((r) => r.jobs);
    const all = jobs.map((j) => `${j.check.id}@${j.dueAt}`);
    expect(new Set(all).size).toBe(all.length);
    // No slot is missed either: each check's runs are one period apart.
    const byCheck = new Map<string, number[]>();
    for (const j of jobs) byCheck.set(j.check.id, [...(byCheck.get(j.check.id) ?? []), Date.parse(j.dueAt)]);
    expect(byCheck.size).toBe(20);
    for (const dues of byCheck.values()) {
      dues.sort((a, b) => a - b);
      expect(dues.length).toBeGreaterThanOrEqual(5);
      for (let i = 1; i < dues.length; i++) expect(dues[i]! - dues[i - 1]!).toBe(10_000);
    }
  });

  it('stop lets a running job finish and releases the leases of the rest', async () => {
    let finish: () => void = () => {};
    const runner = new FakeRunner('TCP', [() => new Promise((resolve) => {
      finish = () => resolve(passResult());
    })]);
    const s = await setup({ engine: { lookaheadMs: 5_000 } }, runner);
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await start(s);
    await runFor(s.clock, 12_000);
    expect(s.vigil.engine.active).toBe(1);
    const stopping = s.vigil.stop(10_000);
    finish();
    await stopping;
    expect(s.vigil.engine.state).toBe('stopped');
    expect((await s.vigil.checkResults.list(s.accountId, check.id, {})).total).toBe(1);
    const [entry] = await s.vigil.storage.schedule.list(s.accountId, check.id);
    const claim = await s.vigil.storage.schedule.claimDue(new Date(Date.parse(entry!.dueAt)), {}, 10, 1_000, 'other');
    expect(claim).toHaveLength(1);
  });
});
