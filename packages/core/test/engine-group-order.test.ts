import { afterEach, describe, expect, it } from 'vitest';
import { runFor, stopOnClock } from './fake-time.js';
import { createVigil, type Vigil } from '../src/index.js';
import { FakeClock, FakeRunner, memoryStorage, passResult } from '../src/testing/index.js';

const SECRET = 'd'.repeat(64);

let live: { vigil: Vigil; clock: FakeClock } | null = null;
afterEach(async () => {
  if (live) await stopOnClock(live.vigil, live.clock);
  live = null;
});

describe('session runs of a group that wait so long they go back to the schedule', () => {
  it('still start before the runs of a higher groupOrder claimed after them', async () => {
    // One at a time, 0.9 s each. Ten runs of groupOrder 0 are claimed at once; one of groupOrder 5
    // two seconds later. The last of the ten run out of time to start (their claim is older) and
    // go back to be claimed again; the later claim of groupOrder 5 had time left and overtook them.
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const runner = new FakeRunner('TCP', [() => new Promise((resolve) => clock.setTimer(new Date(clock.now().getTime() + 900), () => resolve(passResult())))]);
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], engine: { leaseMs: 10_000, runTimeoutMs: 1_000 } });
    live = { vigil, clock };
    const account = await vigil.accounts.ensure('acct');
    const group = await vigil.checkGroups.create(account.id, { name: 'checkout', concurrency: 1 });
    // Hourly at half past (frequencyOffset 300 x 6 s): no scheduled run falls in the test's 17 s
    // from 12:00, so only the session runs run. (Without an offset a check's minute in the hour
    // comes from its random id, and one of eleven fell in those seconds about once in twenty.)
    const body = (name: string, groupOrder: number) => ({
      name, request: { hostname: '127.0.0.1', port: 5432 }, frequency: 60, frequencyOffset: 300, groupId: group.id, groupOrder, doubleCheck: false,
    });
    const first: string[] = [];
    for (let i = 1; i <= 10; i++) first.push((await vigil.checks.create(account.id, 'TCP', body(`a${i}`, 0))).id);
    const last = await vigil.checks.create(account.id, 'TCP', body('z', 5));
    await vigil.start();
    await vigil.checkSessions.trigger(account.id, { target: { checkId: first } });
    await runFor(clock, 2_000);
    await vigil.checkSessions.trigger(account.id, { target: { checkId: [last.id] } });
    await runFor(clock, 15_000);
    expect(runner.jobs.map((j) => j.runSource)).not.toContain('SCHEDULER');
    const order = runner.jobs.map((j) => j.check.name);
    expect(order).toHaveLength(11);
    expect(order.at(-1)).toBe('z');
  });
});

/** The next read of a session of check `for` (set it) takes 2 s of the clock. */
function slowSessionRead(storage: ReturnType<typeof memoryStorage>, clock: FakeClock): { for: string | null } {
  const slow: { for: string | null } = { for: null };
  const get = storage.checkSessions.get.bind(storage.checkSessions);
  storage.checkSessions.get = async (accountId, id) => {
    const session = await get(accountId, id);
    if (session && session.checkId === slow.for) {
      slow.for = null;
      await new Promise((resolve) => clock.setTimer(new Date(clock.now().getTime() + 2_000), () => resolve(undefined)));
    }
    return session;
  };
  return slow;
}

/**
 * Starts the engine and triggers a session of each set of checks 0.1 s apart, the read of the last
 * set's session slowed (its one check); then runs the clock for `ms`.
 */
async function triggerInTurn(vigil: Vigil, accountId: string, clock: FakeClock, slow: { for: string | null }, sets: string[][], ms: number): Promise<void> {
  await vigil.start();
  for (const [k, ids] of sets.entries()) {
    if (k > 0) await runFor(clock, 100);
    if (k === sets.length - 1) slow.for = ids[0]!;
    await vigil.checkSessions.trigger(accountId, { target: { checkId: ids } });
  }
  await runFor(clock, ms);
}

describe('session runs claimed while a run of their group ends', () => {
  it('wait until every run of the claim is admitted, then start in groupOrder', async () => {
    // One run of the group at a time, 0.9 s each. A (groupOrder 0) runs; B (9) is claimed and waits;
    // C (1) is claimed next, and reading its session takes 2 s, during which A ends. B must not
    // take the room A left while C, ordered ahead of it, is still being admitted.
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const runner = new FakeRunner('TCP', [() => new Promise((resolve) => clock.setTimer(new Date(clock.now().getTime() + 900), () => resolve(passResult())))]);
    const storage = memoryStorage();
    const slow = slowSessionRead(storage, clock);
    const vigil = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], engine: { leaseMs: 30_000, runTimeoutMs: 1_000 } });
    live = { vigil, clock };
    const account = await vigil.accounts.ensure('acct');
    const group = await vigil.checkGroups.create(account.id, { name: 'checkout', concurrency: 1 });
    const check = async (name: string, groupOrder: number) => (await vigil.checks.create(account.id, 'TCP', {
      name, request: { hostname: '127.0.0.1', port: 5432 }, frequency: 60, frequencyOffset: 300, groupId: group.id, groupOrder, doubleCheck: false,
    })).id;
    const [a, b, c] = [await check('a', 0), await check('b', 9), await check('c', 1)];
    await triggerInTurn(vigil, account.id, clock, slow, [[a], [b], [c]], 6_000);
    expect(slow.for).toBeNull();
    expect(runner.jobs.map((j) => j.check.name)).toEqual(['a', 'c', 'b']);
  });

  it('hold back no run outside a group meanwhile', async () => {
    // Two runs at a time in the whole engine. A1 (0.9 s) and A2 (5 s) run; D, in no group, is
    // claimed and waits; C, in a group, is claimed next and its session takes 2 s to read. When A1
    // ends, D starts at once, not after C is read in.
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const started = new Map<string, number>();
    const runner = new FakeRunner('TCP', [(job) => {
      started.set(job.check.name, clock.now().getTime());
      const ms = job.check.name === 'a2' ? 5_000 : 900;
      return new Promise((resolve) => clock.setTimer(new Date(clock.now().getTime() + ms), () => resolve(passResult())));
    }]);
    const storage = memoryStorage();
    const slow = slowSessionRead(storage, clock);
    const vigil = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], engine: { concurrency: 2, leaseMs: 30_000, runTimeoutMs: 10_000 } });
    live = { vigil, clock };
    const account = await vigil.accounts.ensure('acct');
    const group = await vigil.checkGroups.create(account.id, { name: 'checkout', concurrency: 1 });
    const check = async (name: string, groupId: number | null) => (await vigil.checks.create(account.id, 'TCP', {
      name, request: { hostname: '127.0.0.1', port: 5432 }, frequency: 60, frequencyOffset: 300, groupId, groupOrder: groupId === null ? null : 1, doubleCheck: false,
    })).id;
    const [a1, a2, d, c] = [await check('a1', null), await check('a2', null), await check('d', null), await check('c', group.id)];
    await triggerInTurn(vigil, account.id, clock, slow, [[a1, a2], [d], [c]], 8_000);
    expect(slow.for).toBeNull();
    expect(runner.jobs.map((j) => j.check.name).sort()).toEqual(['a1', 'a2', 'c', 'd']);
    // D starts as A1 ends, while C is still being read in (2 s from its claim).
    expect(started.get('d')! - started.get('a1')!).toBeLessThan(1_000);
    expect(started.get('c')! - started.get('d')!).toBeGreaterThan(1_000);
  });
});
