import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle, stopOnClock } from './fake-time.js';
import { createVigil, silentLogger, type ScheduledJob, type Vigil } from '../src/index.js';
import { ClaimedJobs } from '../src/engine/claimed-jobs.js';
import { engineInstruments } from '../src/engine/instruments.js';
import { FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';
import { SECRET, T0, tcp } from './engine-support.js';

const started: Vigil[] = [];
let clock: FakeClock;
afterEach(async () => {
  for (const vigil of started.splice(0)) await stopOnClock(vigil, clock);
});

describe('what a busy process claims', () => {
  it('a process whose slots are all taken leaves due entries to the others, which run them', async () => {
    // Twelve entries due at one instant, two processes of two slots each, claims of four, runs of a
    // second. A process that went on claiming whole batches while its slots were taken held
    // entries under its lease that waited for its slots while the other process had room: it
    // takes four (two to run, two to wait), then nothing until a slot frees.
    clock = new FakeClock(T0);
    const storage = memoryStorage();
    const second = () => new Promise<Record<string, never>>((resolve) => clock.setTimer(new Date(clock.now().getTime() + 1_000), () => resolve({})));
    const runners = [new FakeRunner('TCP', [second]), new FakeRunner('TCP', [second])];
    // A look ahead shorter than a poll: the entries are due when they are claimed, as in a backlog.
    const engine = { concurrency: 2, claimBatch: 4, pollMs: 500, lookaheadMs: 100 };
    const [a, b] = runners.map((runner, i) => createVigil({ storage, secretKey: SECRET, clock, runners: [runner], engine: { ...engine, owner: `p${i}` } }));
    const account = await a!.accounts.ensure('acct');
    for (let i = 0; i < 12; i++) await a!.checks.create(account.id, 'TCP', tcp({ name: `db-${i}`, frequency: 10, frequencyOffset: 1 }));
    for (const v of [a!, b!]) {
      await v.start();
      started.push(v);
    }
    await settle();
    await runFor(clock, 70_000);
    const slots = runners.map((r) => r.jobs.map((j) => `${j.check.id} ${j.dueAt}`));
    const all = slots.flat();
    // Each check's first slot, once.
    expect(new Set(all.map((s) => s.split(' ')[0])).size).toBe(12);
    expect(new Set(all).size).toBe(all.length);
    expect(new Set(all.map((s) => s.split(' ')[1])).size).toBe(1);
    // Shared: each process ran half of them.
    expect(slots.map((s) => s.length)).toEqual([6, 6]);
  });

  it('a busy process does not claim again at once the entries it had to give back', async () => {
    // One slot, taken by a run that lasts until the test ends it; a session run of the same check
    // that this process cannot read yet (its session's read fails), so each claim gives it back,
    // due as it was.
    clock = new FakeClock(T0);
    const storage = memoryStorage();
    let claims = 0;
    let readsFail = false;
    const claimDue = storage.schedule.claimDue.bind(storage.schedule);
    storage.schedule.claimDue = (...args) => {
      // A claim after every give-back would never yield; the reads succeed again after 100.
      if (++claims >= 100) readsFail = false;
      return claimDue(...args);
    };
    const getSession = storage.checkSessions.get.bind(storage.checkSessions);
    storage.checkSessions.get = async (...args) => {
      if (readsFail) throw new Error('the session could not be read');
      return getSession(...args);
    };
    let endRun = () => {};
    const held = () => new Promise<Record<string, never>>((resolve) => (endRun = () => resolve({})));
    const runner = new FakeRunner('TCP', [held, {}]);
    const vigil = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], logger: silentLogger, engine: { concurrency: 1, claimBatch: 50, pollMs: 500, lookaheadMs: 100 } });
    const account = await vigil.accounts.ensure('acct');
    const check = await vigil.checks.create(account.id, 'TCP', tcp());
    await vigil.start();
    started.push(vigil);
    await settle();
    for (let s = 0; s < 60 && runner.jobs.length === 0; s++) await runFor(clock, 1_000);
    expect(runner.jobs).toHaveLength(1);
    readsFail = true;
    claims = 0;
    await vigil.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
    await runFor(clock, 2_000);
    // A claim a poll (500 ms), not one after every give-back.
    expect(claims).toBeGreaterThanOrEqual(2);
    expect(claims).toBeLessThanOrEqual(6);
    // Once it can be read, the session run waits for the slot and runs.
    readsFail = false;
    endRun();
    await runFor(clock, 2_000);
    expect(runner.jobs.map((j) => j.checkSessionId !== null)).toEqual([false, true]);
  });

  it('counts the jobs claimed ahead of their time among those waiting for a slot', () => {
    const jobs = new ClaimedJobs({ storage: memoryStorage(), logger: silentLogger }, engineInstruments());
    const o = { concurrency: 3, claimBatch: 50 };
    const entry = (checkId: string, dueAt: string): ScheduledJob => ({
      kind: 'run', accountId: 'acct', checkId, location: 'us-east-1', dueAt, leaseOwner: 'p0', leaseUntil: '2026-05-01T12:02:00.000Z',
    });
    // Two entries claimed ahead: due in a second, while every slot is taken.
    jobs.take([entry('a', '2026-05-01T12:00:01.000Z'), entry('b', '2026-05-01T12:00:01.000Z')]);
    expect(jobs.claimRoom(2, o)).toBe(50);
    expect(jobs.claimRoom(3, o)).toBe(1);
    jobs.take([entry('c', '2026-05-01T12:00:01.500Z')]);
    expect(jobs.claimRoom(3, o)).toBe(0);
  });
});
