import { afterEach, describe, expect, it } from 'vitest';
import { mortalClock, runFor, stopOnClock } from './fake-time.js';
import { createVigil, slotResultId, type Vigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';

const SECRET = 'c'.repeat(64);

let live: { vigil: Vigil; clock: FakeClock } | null = null;
afterEach(async () => {
  if (live) await stopOnClock(live.vigil, live.clock);
  live = null;
});

describe('a slot\'s run stored by a process that died before it wrote the check\'s status', () => {
  it('has its status written by the process that takes the slot over', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const storage = memoryStorage();
    const engine = { leaseMs: 20_000, runTimeoutMs: 5_000 };
    // A stores its run's result, then its write of the check's status never answers: it dies there.
    const replace = storage.checkStatuses.replace.bind(storage.checkStatuses);
    let hung = false;
    storage.checkStatuses.replace = (...args) => {
      if (hung) return replace(...args);
      hung = true;
      return new Promise<never>(() => {});
    };
    const first = mortalClock(clock);
    const failing = () => new FakeRunner('TCP', [failResult('Connection refused')]);
    const a = createVigil({ storage, secretKey: SECRET, clock: first.clock, runners: [failing()], engine: { ...engine, owner: 'a' } });
    const account = await a.accounts.ensure('acct');
    const check = await a.checks.create(account.id, 'TCP', {
      name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 1, frequencyOffset: 1, doubleCheck: false,
    });
    await a.start();
    await runFor(clock, 7_000);
    const runId = slotResultId(check.id, 'us-east-1', new Date('2026-05-01T12:00:06.000Z'), 1);
    expect(await storage.checkResults.get(account.id, runId)).toMatchObject({ resultType: 'FINAL', hasFailures: true });
    expect(await storage.checkStatuses.get(account.id, check.id)).toBeNull();
    first.kill();

    const b = createVigil({ storage, secretKey: SECRET, clock, runners: [failing()], engine: { ...engine, owner: 'b' } });
    live = { vigil: b, clock };
    await b.start();
    await runFor(clock, 30_000);
    // Taken over (and found stored) before the next slot, at 12:01:06.
    expect((await storage.schedule.list(account.id, check.id)).find((e) => e.kind === 'run')!.dueAt).toBe('2026-05-01T12:01:06.000Z');
    expect(await storage.checkStatuses.get(account.id, check.id)).toMatchObject({ lastCheckRunId: runId, hasFailures: true });
  });
});
