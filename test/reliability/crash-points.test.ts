import { describe, expect, it } from 'vitest';
import { createVigil, slotResultId, type VigilStorage } from '@vigil/core';
import { FakeClock, FakeRunner, failResult, memoryStorage } from '@vigil/core/testing';

const T0 = '2026-06-01T00:00:00.000Z';
const SECRET = 'c'.repeat(64);
const LEASE_MS = 5_000;
const PERIOD_MS = 10_000;

/** Lets pending promise chains run (the engine awaits the store between steps). */
async function settle(rounds = 30): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * The store as seen by a process that is killed (kill -9) just before or just after one repository
 * call (`checkResults.insertMany`, ...) reaches it: from then on nothing it calls returns.
 */
function dying(storage: VigilStorage, point: string, when: 'before' | 'after'): VigilStorage {
  let dead = false;
  const hang = () => new Promise<never>(() => {});
  const out: Record<string, unknown> = { ...storage };
  for (const [name, repo] of Object.entries(storage)) {
    if (typeof repo !== 'object' || repo === null || name === 'capabilities') continue;
    const proxied: Record<string, unknown> = {};
    for (const [method, fn] of Object.entries(repo as Record<string, unknown>)) {
      if (typeof fn !== 'function') continue;
      proxied[method] = async (...args: unknown[]) => {
        const here = `${name}.${method}` === point;
        if (dead || (here && when === 'before')) {
          dead = true;
          return hang();
        }
        const value = await (fn as (...a: unknown[]) => Promise<unknown>).apply(repo, args);
        if (!here) return value;
        dead = true;
        return hang();
      };
    }
    out[name] = proxied;
  }
  return out as unknown as VigilStorage;
}

/**
 * Kill -9 at each step of a run's pipeline, made exact: process A runs a slot of a failing check
 * and dies at one store call (its clock then stands still); process B, on the same store, takes the
 * slot over once A's lease has run out. Whatever the point, the slot's result is stored once and
 * its failure alert queued once.
 */
describe('a process killed at each step of a run, another taking over', () => {
  it.each([
    ['before the result is stored', 'checkResults.insertMany', 'before'],
    ['after the result is stored', 'checkResults.insertMany', 'after'],
    ['after the check status is updated', 'checkStatuses.upsert', 'after'],
    ['after the alert state is read', 'alertStates.get', 'after'],
    ['after the alerts are queued', 'outbox.enqueue', 'after'],
    ['after the alert state is recorded', 'alertStates.put', 'after'],
  ] as const)('%s (%s): the slot is stored once and its alert queued once', async (_what, point, when) => {
    const shared = memoryStorage();
    const setupClock = new FakeClock(T0);
    const setup = createVigil({ storage: shared, secretKey: SECRET, clock: setupClock });
    const account = await setup.accounts.ensure();
    const channel = await setup.alertChannels.create(account.id, { type: 'WEBHOOK', config: { name: 'ops', url: 'http://127.0.0.1:9/' } });
    const check = await setup.checks.create(account.id, 'TCP', { name: 'db', request: { hostname: '127.0.0.1', port: 9 }, frequency: 0, frequencyOffset: 10 });
    const due = Date.parse((await shared.schedule.list(account.id, check.id))[0]!.dueAt);
    const engine = { leaseMs: LEASE_MS, lookaheadMs: 1_000, pollMs: 250 };

    const clockA = new FakeClock(T0);
    const runnerA = new FakeRunner('TCP', [failResult()]);
    const processA = createVigil({
      storage: dying(shared, point, when), secretKey: SECRET, clock: clockA, runners: [runnerA], engine: { ...engine, owner: 'process-a' }, alerts: { enabled: false },
    });
    await processA.start();
    while (runnerA.jobs.length === 0 && clockA.now().getTime() < due + 1_000) {
      clockA.advance(100);
      await settle();
    }
    expect(runnerA.jobs).toHaveLength(1);
    await settle();

    // B runs within the slot's period, after A's lease ran out.
    const clockB = new FakeClock(clockA.now());
    const runnerB = new FakeRunner('TCP', [failResult()]);
    const processB = createVigil({
      storage: shared, secretKey: SECRET, clock: clockB, runners: [runnerB], engine: { ...engine, owner: 'process-b' }, alerts: { enabled: false },
    });
    await processB.start();
    while (clockB.now().getTime() < due + PERIOD_MS - 2_000) {
      clockB.advance(100);
      await settle();
    }
    await processB.stop(0);

    const slot = slotResultId(check.id, 'us-east-1', new Date(due), 1);
    const results = await shared.checkResults.listByCheck(account.id, check.id, { limit: 100, offset: 0 });
    expect(results.items.map((r) => r.id)).toEqual([slot]);
    const queued = await shared.outbox.pending(account.id);
    expect(queued.map((m) => [m.alertType, m.payload.checkResultId, m.alertChannelId])).toEqual([['ALERT_FAILURE', slot, channel.id]]);
    expect(await shared.alertStates.get(account.id, check.id)).toMatchObject({ status: 'FAILING', lastRunId: slot });
    // The slot is done: the check's entry moved on to its next run.
    expect(Date.parse((await shared.schedule.list(account.id, check.id)).find((e) => e.location === 'us-east-1')!.dueAt)).toBe(due + PERIOD_MS);
  });
});
