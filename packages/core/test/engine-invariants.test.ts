import { afterEach, describe, expect, it } from 'vitest';
import { capture, type Line } from './capture-logger.js';
import { mortalClock, runFor, settle, stopOnClock } from './fake-time.js';
import { createVigil, LOCATIONS, type Vigil, type VigilOptions } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, FakeTransport, memoryStorage } from '../src/testing/index.js';

type MemoryStorage = ReturnType<typeof memoryStorage>;

const SECRET = 'd'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';
const LEASE_MS = 20_000;

const tcp = (overrides: Record<string, unknown> = {}) => ({
  name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 0, frequencyOffset: 10, ...overrides,
});

const started: Vigil[] = [];
let sharedClock: FakeClock | null = null;
afterEach(async () => {
  for (const vigil of started.splice(0)) await stopOnClock(vigil, sharedClock!, 200);
  sharedClock = null;
});

interface Setup {
  vigil: Vigil;
  clock: FakeClock;
  storage: MemoryStorage;
  runner: FakeRunner;
  lines: Line[];
  accountId: string;
}

async function setup(options: Partial<VigilOptions> = {}, runner = new FakeRunner('TCP')): Promise<Setup> {
  const clock = new FakeClock(T0);
  sharedClock = clock;
  const storage = memoryStorage();
  const lines: Line[] = [];
  const vigil = createVigil({
    storage, secretKey: SECRET, clock, runners: [runner], logger: capture(lines), engine: { leaseMs: LEASE_MS, runTimeoutMs: 5_000 }, ...options,
  });
  const account = await vigil.accounts.ensure('acct');
  return { vigil, clock, storage, runner, lines, accountId: account.id };
}

async function start(vigil: Vigil): Promise<void> {
  await vigil.start();
  started.push(vigil);
  await settle();
}

/** Makes one repository method fail (or hang) the next `times` calls, then behave again. */
function breakOnce<T extends object>(repo: T, method: keyof T, how: 'throw' | 'hang', times = 1): void {
  const original = (repo[method] as (...args: unknown[]) => Promise<unknown>).bind(repo);
  let left = times;
  (repo as Record<keyof T, unknown>)[method] = (...args: unknown[]) => {
    if (left <= 0) return original(...args);
    left--;
    return how === 'throw' ? Promise.reject(new Error(`store refused ${String(method)}`)) : new Promise(() => {});
  };
}

const failures = (lines: Line[]) => lines.filter((l) => l.msg === 'engine: job failed');

describe('engine invariants: a scheduled slot always completes and re-arms', () => {
  it('when the pipeline throws after the run, logged once with the check id; the next slot runs', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    breakOnce(s.storage.checkStatuses, 'replace', 'throw');
    await start(s.vigil);
    await runFor(s.clock, 35_000);
    expect(failures(s.lines)).toHaveLength(1);
    expect(failures(s.lines)[0]!.meta).toMatchObject({ kind: 'run', checkId: check.id, accountId: s.accountId, error: 'store refused replace' });
    // The slot after the failed one ran, and the one after that: the entry kept moving.
    const dues = [...new Set(s.runner.jobs.map((j) => j.dueAt))];
    expect(dues.length).toBeGreaterThanOrEqual(3);
    const entries = await s.storage.schedule.list(s.accountId, check.id);
    expect(entries.filter((e) => e.kind === 'run')).toHaveLength(1);
    expect(Date.parse(entries[0]!.dueAt)).toBeGreaterThan(s.clock.now().getTime());
    expect((await s.vigil.checkStatuses.get(s.accountId, check.id)).hasFailures).toBe(false);
  });

  it('when a store call hangs, given up before its lease can be taken over: the entry re-arms and the check runs on', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    breakOnce(s.storage.checkStatuses, 'replace', 'hang');
    await start(s.vigil);
    await runFor(s.clock, 12_000);
    const ranBefore = s.runner.jobs.length;
    expect(ranBefore).toBeGreaterThanOrEqual(1);
    expect(failures(s.lines)).toHaveLength(0);
    await runFor(s.clock, LEASE_MS + 25_000, 250);
    expect(failures(s.lines)).toHaveLength(1);
    expect(String(failures(s.lines)[0]!.meta.error)).toContain('did not finish within its lease of 20 s');
    expect(s.runner.jobs.length).toBeGreaterThan(ranBefore + 1);
    expect((await s.storage.schedule.list(s.accountId, check.id)).filter((e) => e.kind === 'run')).toHaveLength(1);
  });
});

describe('engine invariants: a claimed slot runs in one process at a time', () => {
  it('a slot that waited too long for room is given back rather than started late; none runs twice', async () => {
    // One run at a time, each 4.9 s; six checks due at the same instants every 10 s: the engine
    // falls behind, and slots wait in its queue while their leases run down.
    const runner = new FakeRunner('TCP', [() => new Promise((resolve) => {
      sharedClock!.setTimer(new Date(sharedClock!.now().getTime() + 4_900), () => resolve({}));
    })]);
    const s = await setup({ engine: { leaseMs: LEASE_MS, runTimeoutMs: 5_000, concurrency: 1 } }, runner);
    for (let i = 0; i < 6; i++) await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: `db ${i}`, retryStrategy: null, doubleCheck: false }));
    await start(s.vigil);
    await runFor(s.clock, 60_000, 100);
    const slots = runner.jobs.map((j) => `${j.check.id}@${j.dueAt}`);
    expect(slots.length).toBeGreaterThan(10);
    expect(slots.length - new Set(slots).size).toBe(0);
  });
});

describe('engine invariants: runs of one check finishing at the same instant all count', () => {
  it('a runParallel session in every data center ends with every sequence, none lost to the others', async () => {
    // Every run answers at the same instant of the fake clock.
    const runner = new FakeRunner('TCP', [() => new Promise((resolve) => {
      sharedClock!.setTimer(new Date(sharedClock!.now().getTime() + 2_000), () => resolve({}));
    })]);
    const s = await setup({}, runner);
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 1440, frequencyOffset: null, locations: [...LOCATIONS], runParallel: true }));
    await start(s.vigil);
    const { sessions: [session] } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    expect(session!.sequences).toHaveLength(LOCATIONS.length);
    await runFor(s.clock, 5_000);
    const done = await s.storage.checkSessions.get(s.accountId, session!.checkSessionId);
    expect(done?.sequences.map((q) => q.status)).toEqual(LOCATIONS.map(() => 'PASSED'));
    expect(done?.status).toBe('PASSED');
    expect(failures(s.lines)).toEqual([]);
  });
});

describe('engine invariants: a session always ends', () => {
  it('when its run cannot be recorded, the sequence ends FAILED with a result naming the cause', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 1440, frequencyOffset: null }));
    breakOnce(s.storage.checkResults, 'insertMany', 'throw');
    await start(s.vigil);
    const { sessions: [session] } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await runFor(s.clock, 2_000);
    const done = await s.vigil.checkSessions.completion(s.accountId, session!.checkSessionId, { maxWaitSeconds: '1' });
    expect(done.done).toBe(true);
    expect(done.session.status).toBe('FAILED');
    expect(done.session.stoppedAt).not.toBeNull();
    const errored = done.session.results.find((r) => r.hasErrors);
    expect(errored?.errorMessage).toBe('The run could not be completed: store refused insertMany');
    expect(failures(s.lines).map((l) => l.meta.checkSessionId)).toEqual([session!.checkSessionId]);
    expect(await s.storage.schedule.list(s.accountId, check.id)).not.toContainEqual(expect.objectContaining({ kind: 'session' }));
  });

  it('when its run was recorded but its check status could not be: the sequence ends as the run did', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 1440, frequencyOffset: null }));
    breakOnce(s.storage.checkStatuses, 'replace', 'throw');
    await start(s.vigil);
    const { sessions: [session] } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await runFor(s.clock, 2_000);
    const done = await s.vigil.checkSessions.completion(s.accountId, session!.checkSessionId, { maxWaitSeconds: '1' });
    expect(done).toMatchObject({ done: true, session: { status: 'PASSED' } });
    expect(done.session.results.map((r) => [r.resultType, r.hasErrors])).toEqual([['FINAL', false]]);
    expect(failures(s.lines)).toHaveLength(1);
  });

  it('of a check deleted before its run: the sequence ends FAILED, saying so', async () => {
    const s = await setup();
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 1440, frequencyOffset: null }));
    // No engine yet: the session's run waits in the schedule while the check goes.
    const { sessions: [session] } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await s.vigil.checks.delete(s.accountId, check.id);
    await start(s.vigil);
    await runFor(s.clock, 2_000);
    const stored = await s.storage.checkSessions.get(s.accountId, session!.checkSessionId);
    expect(stored).toMatchObject({ status: 'FAILED' });
    expect(stored!.stoppedAt).not.toBeNull();
    expect(s.runner.jobs).toHaveLength(0);
  });

  it('in flight at a crash: another process runs it again once the lease runs out', async () => {
    const clock = new FakeClock(T0);
    sharedClock = clock;
    const storage = memoryStorage();
    // The first process's run never answers; the second's passes.
    const hanging = new FakeRunner('TCP', [() => new Promise(() => {})]);
    const first = mortalClock(clock);
    const a = createVigil({ storage, secretKey: SECRET, clock: first.clock, runners: [hanging], engine: { leaseMs: LEASE_MS, runTimeoutMs: 60_000 } });
    const account = await a.accounts.ensure('acct');
    const check = await a.checks.create(account.id, 'TCP', tcp({ frequency: 1440, frequencyOffset: null }));
    await a.start();
    const { sessions: [session] } = await a.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
    await runFor(clock, 1_000);
    expect(hanging.jobs).toHaveLength(1);
    expect((await storage.checkSessions.get(account.id, session!.checkSessionId))?.status).toBe('PROGRESS');
    // A dies: nothing of it runs any more and nothing is given back.
    first.kill();
    const runner = new FakeRunner('TCP');
    const b = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], engine: { leaseMs: LEASE_MS, runTimeoutMs: 5_000 } });
    await start(b);
    await runFor(clock, LEASE_MS - 2_000);
    expect(runner.jobs).toHaveLength(0);
    await runFor(clock, 4_000);
    expect(runner.jobs.map((j) => j.sequenceId)).toEqual([session!.sequences[0]!.sequenceId]);
    const done = await b.checkSessions.completion(account.id, session!.checkSessionId, { maxWaitSeconds: '1' });
    expect(done).toMatchObject({ done: true, session: { status: 'PASSED' } });
  });

  it('ended by a process that died before its alert step: the next process raises the alert, running nothing again', async () => {
    const clock = new FakeClock(T0);
    sharedClock = clock;
    const storage = memoryStorage();
    // The first process's alert step never gets through: it dies there.
    const stuck = { ...storage, alertStates: { ...storage.alertStates, transition: () => new Promise<boolean>(() => {}) } };
    const failing = new FakeRunner('TCP', [failResult('connect ECONNREFUSED')]);
    const first = mortalClock(clock);
    const a = createVigil({ storage: stuck, secretKey: SECRET, clock: first.clock, runners: [failing], engine: { leaseMs: LEASE_MS, runTimeoutMs: 5_000 } });
    const account = await a.accounts.ensure('acct');
    const channel = await a.alertChannels.create(account.id, { type: 'WEBHOOK', config: { name: 'ops', url: 'https://hooks.example.com/in' } });
    const check = await a.checks.create(account.id, 'TCP', tcp({
      frequency: 1440, frequencyOffset: null, retryStrategy: null, alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    }));
    await a.start();
    const { sessions: [session] } = await a.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
    await runFor(clock, 1_000);
    expect((await storage.checkSessions.get(account.id, session!.checkSessionId))?.status).toBe('FAILED');
    expect(await storage.outbox.pending(account.id)).toEqual([]);
    first.kill();
    const transport = new FakeTransport('WEBHOOK');
    const runner = new FakeRunner('TCP');
    const b = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], transports: [transport], engine: { leaseMs: LEASE_MS } });
    await start(b);
    await runFor(clock, LEASE_MS + 5_000, 250);
    expect(runner.jobs).toHaveLength(0);
    expect(transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE']);
    expect((await storage.checkResults.listByCheck(account.id, check.id, { limit: 10, offset: 0, resultType: 'FINAL' })).total).toBe(1);
    expect((await storage.schedule.list(account.id, check.id)).filter((e) => e.kind === 'session')).toEqual([]);
  });

  it('cancelled through another process while it runs here: its result is kept, no status, no alert', async () => {
    const failing = new FakeRunner('TCP', [() => new Promise((resolve) => {
      sharedClock!.setTimer(new Date(sharedClock!.now().getTime() + 3_000), () => resolve(failResult('connect ECONNREFUSED')));
    })]);
    const s = await setup({}, failing);
    const channel = await s.vigil.alertChannels.create(s.accountId, { type: 'WEBHOOK', config: { name: 'ops', url: 'https://hooks.example.com/in' } });
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      frequency: 1440, frequencyOffset: null, retryStrategy: null, doubleCheck: false, alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    }));
    await start(s.vigil);
    const { sessions: [session] } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await runFor(s.clock, 1_000);
    expect(failing.jobs).toHaveLength(1);
    // The API process that takes the cancel runs no engine: the run here does not hear of it.
    const api = createVigil({ storage: s.storage, secretKey: SECRET, clock: s.clock });
    await api.checkSessions.cancel(s.accountId, session!.checkSessionId, {});
    await runFor(s.clock, 5_000);
    expect((await s.storage.checkSessions.get(s.accountId, session!.checkSessionId))?.status).toBe('CANCELLED');
    expect((await s.vigil.checkResults.list(s.accountId, check.id, {})).total).toBe(1);
    expect(await s.storage.checkStatuses.get(s.accountId, check.id)).toBeNull();
    expect(await s.storage.outbox.pending(s.accountId)).toEqual([]);
    expect(await s.storage.errorGroups.listByCheck(s.accountId, check.id, { limit: 10, offset: 0 })).toMatchObject({ total: 0 });
  });

  it('cancelled while it waits for its group: it never runs and its entry goes at once', async () => {
    // Each run takes 3 s; the group runs one at a time.
    const runner = new FakeRunner('TCP', [(job) => new Promise((resolve) => {
      sharedClock!.setTimer(new Date(sharedClock!.now().getTime() + 3_000), () => resolve({}));
      void job;
    })]);
    const s = await setup({}, runner);
    const group = await s.vigil.checkGroups.create(s.accountId, { name: 'flow', concurrency: 1 });
    const first = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'first', groupId: group.id, groupOrder: 0, frequency: 1440, frequencyOffset: null }));
    const second = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ name: 'second', groupId: group.id, groupOrder: 1, frequency: 1440, frequencyOffset: null }));
    await start(s.vigil);
    const { sessions } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [first.id, second.id] } });
    await runFor(s.clock, 1_000);
    expect(runner.jobs.map((j) => j.check.name)).toEqual(['first']);
    const waiting = sessions.find((x) => x.checkId === second.id)!;
    await s.vigil.checkSessions.cancel(s.accountId, waiting.checkSessionId, {});
    await settle();
    expect((await s.storage.schedule.list(s.accountId, second.id)).filter((e) => e.kind === 'session')).toEqual([]);
    await runFor(s.clock, 10_000);
    expect(runner.jobs.map((j) => j.check.name)).toEqual(['first']);
    expect((await s.storage.checkSessions.get(s.accountId, waiting.checkSessionId))?.status).toBe('CANCELLED');
  });

  it('stopped with the process: its run is left for another, not recorded as cancelled', async () => {
    const s = await setup({}, new FakeRunner('TCP', [() => new Promise(() => {})]));
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp({ frequency: 1440, frequencyOffset: null }));
    await s.vigil.start();
    const { sessions: [session] } = await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [check.id] } });
    await runFor(s.clock, 1_000);
    let stopped = false;
    const stopping = s.vigil.stop(0).finally(() => {
      stopped = true;
    });
    for (let i = 0; i < 20 && !stopped; i++) {
      s.clock.advance(100);
      await settle();
    }
    await stopping;
    expect((await s.storage.checkSessions.get(s.accountId, session!.checkSessionId))?.status).toBe('PROGRESS');
    expect((await s.vigil.checkResults.list(s.accountId, check.id, {})).total).toBe(0);
    // Its entry is due again at once, for the next process.
    const [entry] = (await s.storage.schedule.list(s.accountId, check.id)).filter((e) => e.kind === 'session');
    expect(entry).toMatchObject({ session: { checkSessionId: session!.checkSessionId } });
    const [claimed] = await s.storage.schedule.claimDue(s.clock.now(), {}, 10, 1_000, 'next');
    expect(claimed).toMatchObject({ kind: 'session', checkId: check.id });
  });
});
