import { describe, expect, it } from 'vitest';
import { runFor } from './fake-time.js';
import { slotResultId } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, passResult } from '../src/testing/index.js';
import { setup, start, T0, tcp } from './engine-support.js';

describe('engine: scheduled runs', () => {
  it('runs a check every period at its planned times and records result and status', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await start(s);
    await runFor(s.clock, 35_000);
    const dues = s.runner.jobs.map((j) => Date.parse(j.dueAt));
    expect(dues.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < dues.length; i++) expect(dues[i]! - dues[i - 1]!).toBe(10_000);
    expect(s.runner.jobs.every((j) => j.runSource === 'SCHEDULER' && j.location === 'us-east-1' && j.attempt === 1)).toBe(true);
    const results = await s.vigil.checkResults.list(s.accountId, check.id, {});
    expect(results.total).toBe(dues.length);
    const status = await s.vigil.checkStatuses.get(s.accountId, check.id);
    expect(status).toMatchObject({ hasFailures: false, lastRunLocation: 'us-east-1', lastCheckRunId: results.items[0]!.id });
  });

  it('follows changes through the API: deactivated checks stop, reactivated ones resume, deleted ones go', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await start(s);
    await runFor(s.clock, 20_000);
    const before = s.runner.jobs.length;
    expect(before).toBeGreaterThanOrEqual(1);
    await s.vigil.checks.update(s.accountId, check.id, { activated: false });
    await runFor(s.clock, 30_000);
    expect(s.runner.jobs.length).toBe(before);
    await s.vigil.checks.update(s.accountId, check.id, { activated: true });
    await runFor(s.clock, 30_000);
    const resumed = s.runner.jobs.length;
    expect(resumed).toBeGreaterThanOrEqual(before + 2);
    await s.vigil.checks.delete(s.accountId, check.id);
    await runFor(s.clock, 30_000);
    expect(s.runner.jobs.length).toBe(resumed);
  });

  it('rotates locations round-robin, or runs in all of them with runParallel', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'rotating', locations: ['us-east-1', 'eu-west-1'] }));
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'parallel', locations: ['us-east-1', 'eu-west-1'], runParallel: true }));
    await start(s);
    await runFor(s.clock, 40_000);
    const of = (name: string) => s.runner.jobs.filter((j) => j.check.name === name);
    const rotating = of('rotating').sort((a, b) => a.dueAt.localeCompare(b.dueAt));
    for (let i = 1; i < rotating.length; i++) {
      expect(rotating[i]!.location).not.toBe(rotating[i - 1]!.location);
      expect(Date.parse(rotating[i]!.dueAt) - Date.parse(rotating[i - 1]!.dueAt)).toBe(10_000);
    }
    const parallel = of('parallel');
    const bySlot = new Map<string, string[]>();
    for (const j of parallel) bySlot.set(j.dueAt, [...(bySlot.get(j.dueAt) ?? []), j.location]);
    expect(bySlot.size).toBeGreaterThanOrEqual(3);
    for (const locations of bySlot.values()) expect(locations.sort()).toEqual(['eu-west-1', 'us-east-1']);
  });

  it('runs only the locations this process serves', async () => {
    const s = await setup({ serves: { locations: ['eu-west-1'], privateLocations: [] } });
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({ locations: ['us-east-1', 'eu-west-1'], runParallel: true }));
    await start(s);
    await runFor(s.clock, 30_000);
    expect(s.runner.jobs.length).toBeGreaterThanOrEqual(2);
    expect(new Set(s.runner.jobs.map((j) => j.location))).toEqual(new Set(['eu-west-1']));
  });

  it('pauses checks during a maintenance window and resumes after it', async () => {
    const s = await setup();
    await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await s.vigil.maintenanceWindows.create(s.accountId, {
      name: 'upgrade', startsAt: T0, endsAt: '2026-05-01T12:01:00.000Z', repeatUnit: 'DAY', pauseAllChecks: true,
    });
    await start(s);
    await runFor(s.clock, 55_000);
    expect(s.runner.jobs).toHaveLength(0);
    await runFor(s.clock, 30_000);
    expect(s.runner.jobs.length).toBeGreaterThanOrEqual(2);
  });

  it('retries a failed run by its retryStrategy and stores the attempts', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused'), failResult('Connection refused'), passResult()]);
    const s = await setup({}, runner);
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      frequency: 1, frequencyOffset: null,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 2, maxRetries: 3, maxDurationSeconds: 60, sameRegion: true },
    }));
    await start(s);
    await runFor(s.clock, 70_000);
    expect(runner.jobs.slice(0, 3).map((j) => j.attempt)).toEqual([1, 2, 3]);
    const gap = Date.parse(runner.jobs[0]!.dueAt);
    expect(gap).toBeGreaterThan(0);
    const results = (await s.vigil.checkResults.list(s.accountId, check.id, { limit: 10 })).items.reverse();
    expect(results.slice(0, 3).map((r) => [r.resultType, r.attempts, r.hasFailures])).toEqual([
      ['ATTEMPT', 1, true], ['ATTEMPT', 2, true], ['FINAL', 3, false],
    ]);
    expect(Date.parse(results[1]!.startedAt) - Date.parse(results[0]!.stoppedAt)).toBe(2_000);
  });

  it('ends a run that does not finish within the time limit as a timeout', async () => {
    const runner = new FakeRunner('TCP', [() => new Promise(() => {})]);
    const s = await setup({ engine: { runTimeoutMs: 5_000 } }, runner);
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await start(s);
    await runFor(s.clock, 20_000);
    const [result] = (await s.vigil.checkResults.list(s.accountId, check.id, {})).items.reverse();
    expect(result).toMatchObject({ hasFailures: true, errorMessage: 'The run did not finish within its time limit of 5 s' });
    expect(Date.parse(result!.stoppedAt) - Date.parse(result!.startedAt)).toBe(5_000);
  });

  it('runs a slot overdue at start once, under its own time, and does not make up the slots that passed', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    // No process is up for 35 s: the first slot and the next three pass.
    s.clock.advance(35_000);
    const startedAt = s.clock.now().getTime();
    await start(s);
    await runFor(s.clock, 20_000);
    const dues = s.runner.jobs.map((j) => Date.parse(j.dueAt));
    const first = dues[0]!;
    expect(first).toBeGreaterThan(Date.parse(T0));
    expect(first).toBeLessThanOrEqual(Date.parse(T0) + 10_000);
    // Then the check's slots from the start on, every 10 s; none of those that passed meanwhile.
    expect(dues[1]).toBeGreaterThan(startedAt);
    expect(dues[1]! - 10_000).toBeLessThanOrEqual(startedAt);
    expect((dues[1]! - first) % 10_000).toBe(0);
    expect(dues.length).toBeGreaterThanOrEqual(3);
    for (let i = 2; i < dues.length; i++) expect(dues[i]! - dues[i - 1]!).toBe(10_000);
    const { items } = await s.vigil.checkResults.list(s.accountId, check.id, {});
    expect(items.map((r) => r.id).sort()).toEqual(dues.map((due) => slotResultId(check.id, 'us-east-1', new Date(due), 1)).sort());
  });
});

describe('engine: runners with a time limit of their own', () => {
  it('gives a runner\'s own time limit to its jobs, keeps its leases longer, and closes it on stop', async () => {
    let closed = 0;
    const runner = Object.assign(new FakeRunner('TCP', [() => new Promise(() => {})]), {
      timeoutMs: 150_000,
      close: async () => {
        closed++;
      },
    });
    const s = await setup({ engine: { runTimeoutMs: 5_000 } }, runner);
    expect((s.vigil.engine as unknown as { o: { leaseMs: number } }).o.leaseMs).toBe(180_000);
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await start(s);
    await runFor(s.clock, 170_000, 1_000);
    expect(s.runner.jobs[0]!.timeoutMs).toBe(150_000);
    const [result] = (await s.vigil.checkResults.list(s.accountId, check.id, {})).items.reverse();
    expect(result).toMatchObject({ hasFailures: true, errorMessage: 'The run did not finish within its time limit of 150 s' });
    // Later runs still hang: the stop deadline passes on the fake clock, then the runner is closed.
    const stopping = s.vigil.stop(0);
    await runFor(s.clock, 1_000);
    await stopping;
    expect(closed).toBe(1);
  });
});

/** Runs that each take `ms` of the fake clock; `most` is the most that went at once. */
function slowRuns(ms: number) {
  const state = { running: 0, most: 0, clock: null as FakeClock | null };
  const outcome = () => new Promise<Record<string, never>>((resolve) => {
    state.most = Math.max(state.most, ++state.running);
    state.clock!.setTimer(new Date(state.clock!.now().getTime() + ms), () => {
      state.running--;
      resolve({});
    });
  });
  return { state, outcome };
}

describe('engine: runners with a concurrency of their own', () => {
  it('holds a runner\'s further runs back until one ends, before their time limit starts', async () => {
    // Each run takes 4 s of the 5 s limit; six are due at once, two may go at a time.
    const { state, outcome } = slowRuns(4_000);
    const runner = Object.assign(new FakeRunner('TCP', [outcome]), { timeoutMs: 5_000, concurrency: 2 });
    const s = await setup({}, runner);
    state.clock = s.clock;
    const checks = [];
    // Daily checks: their own schedule is unlikely to start a run within the test's seconds.
    for (let i = 0; i < 6; i++) checks.push(await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: `db ${i}`, frequency: 1440, frequencyOffset: null })));
    await start(s);
    const { sessions } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: checks.map((c) => c.id) } });
    await runFor(s.clock, 15_000, 500);
    expect(s.runner.jobs.length).toBe(6);
    expect(state.most).toBe(2);
    for (const session of sessions) {
      expect(await s.vigil.checkSessions.get(s.accountId, session.checkSessionId)).toMatchObject({ status: 'PASSED' });
    }
    for (const check of checks) {
      const { items } = await s.vigil.checkResults.list(s.accountId, check.id, {});
      expect(items.map((r) => [r.hasFailures, r.errorMessage])).toEqual([[false, null]]);
    }
    // The waits were real: the six runs started in three turns, 4 s apart.
    const starts = (await Promise.all(checks.map(async (c) => (await s.vigil.checkResults.list(s.accountId, c.id, {})).items[0]!.startedAt))).sort();
    const first = Date.parse(starts[0]!);
    expect(starts.map((t) => Date.parse(t) - first)).toEqual([0, 0, 4_000, 4_000, 8_000, 8_000]);
  });
});

describe('engine: runs waiting for their runner\'s turn', () => {
  it('leave their engine slot to runs of other types meanwhile', async () => {
    // The engine runs two at once; TCP runs go one at a time and take 9 s.
    const { state, outcome } = slowRuns(9_000);
    const tcpRunner = Object.assign(new FakeRunner('TCP', [outcome]), { timeoutMs: 10_000, concurrency: 1 });
    const apiRunner = new FakeRunner('API');
    const s = await setup({ engine: { concurrency: 2 }, runners: [tcpRunner, apiRunner] }, tcpRunner);
    state.clock = s.clock;
    const tcps = [];
    for (let i = 0; i < 3; i++) tcps.push(await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: `db ${i}`, frequency: 1440, frequencyOffset: null })));
    const api = await s.vigil.checks.create(s.accountId, 'API', { name: 'orders API', request: { url: 'https://api.example.com/orders' }, frequency: 1440 });
    await start(s);
    await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [...tcps.map((c) => c.id), api.id] } });
    // The triggered runs (a check's own schedule may also start one within the test's minute).
    const triggered = (runner: FakeRunner) => runner.jobs.filter((j) => j.runSource === 'TRIGGER_API');
    await runFor(s.clock, 1_000, 250);
    // One TCP run goes, two wait for the TCP runner, and the API run is not held behind them.
    expect(tcpRunner.jobs.length).toBe(1);
    expect(triggered(apiRunner).map((j) => j.check.id)).toEqual([api.id]);
    await runFor(s.clock, 40_000, 500);
    expect(triggered(tcpRunner).length).toBe(3);
    expect(state.most).toBe(1);
  });
});

describe('engine: a runner with no turn free before the lease runs short', () => {
  it('skips the slot (no failed result, no alert) and runs the check again at its next slot', async () => {
    // One run at a time, 9 s each; three checks every 10 s cannot all have a turn.
    const { state, outcome } = slowRuns(9_000);
    const runner = Object.assign(new FakeRunner('TCP', [outcome]), { timeoutMs: 10_000, concurrency: 1 });
    const warnings: { msg: string; meta?: Record<string, unknown> }[] = [];
    const logger = { error: () => {}, info: () => {}, debug: () => {}, warn: (msg: string, meta?: Record<string, unknown>) => void warnings.push({ msg, meta }), child: () => logger };
    const s = await setup({ engine: { leaseMs: 12_000 }, logger }, runner);
    state.clock = s.clock;
    const checks = [];
    for (let i = 0; i < 3; i++) checks.push(await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: `db ${i}` })));
    await start(s);
    await runFor(s.clock, 60_000, 500);
    expect(state.most).toBe(1);
    const busy = warnings.filter((w) => w.msg === 'run: skipped, no runner of its type was free in time');
    expect(busy.length).toBeGreaterThan(0);
    let stored = 0;
    for (const check of checks) {
      const { items } = await s.vigil.checkResults.list(s.accountId, check.id, {});
      stored += items.length;
      expect(items.every((r) => !r.hasFailures && !r.hasErrors)).toBe(true);
    }
    // Every slot either ran or was skipped as busy, and the schedule went on.
    expect(stored).toBeGreaterThanOrEqual(5);
    // At most the one run still going has no result yet.
    expect(s.runner.jobs.length - stored).toBeLessThanOrEqual(1);
    const stopping = s.vigil.stop(0);
    await runFor(s.clock, 10_000, 500);
    await stopping;
  });
});
