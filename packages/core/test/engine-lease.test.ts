import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle, stopOnClock } from './fake-time.js';
import { createVigil, type Vigil } from '../src/index.js';
import { FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';

const SECRET = 'e'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';

const started: Vigil[] = [];
let clock: FakeClock;
afterEach(async () => {
  for (const vigil of started.splice(0)) await stopOnClock(vigil, clock);
});

describe('a lease and the look ahead of the processes that share it', () => {
  it('a slot whose run (with its retry) takes the whole lease is run once, not taken over as it ends', async () => {
    // Every claim looks ahead (claimDue(now + 1 s)), so it sees a lease run out a second before
    // leaseUntil. A run allowed to end at leaseUntil less a second ended just as the next claim (of
    // either process) took its slot over: the slot ran twice and its run was taken in twice.
    clock = new FakeClock(T0);
    const storage = memoryStorage();
    const hang = () => new Promise<never>(() => {});
    const runners = [new FakeRunner('TCP', [hang]), new FakeRunner('TCP', [hang])];
    const engine = { leaseMs: 4_000, runTimeoutMs: 1_000, lookaheadMs: 1_000, pollMs: 500 };
    const [a, b] = runners.map((runner, i) => createVigil({ storage, secretKey: SECRET, clock, runners: [runner], engine: { ...engine, owner: `p${i}` } }));
    const account = await a!.accounts.ensure('acct');
    // Due at 12:00:06, claimed at 12:00:05 (a poll), lease until 12:00:10; an attempt hangs its 1 s,
    // the retry follows a second later.
    const check = await a!.checks.create(account.id, 'TCP', {
      name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 1, frequencyOffset: 1,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 1, maxDurationSeconds: 60, sameRegion: true },
    });
    for (const v of [a!, b!]) {
      await v.start();
      started.push(v);
    }
    await settle();
    await runFor(clock, 12_000);
    const slot = '2026-05-01T12:00:06.000Z';
    const attempts = runners.flatMap((r, i) => r.jobs.filter((j) => j.dueAt === slot).map((j) => `p${i} attempt ${j.attempt}`));
    expect(attempts).toEqual(['p0 attempt 1']);
    const results = await a!.checkResults.list(account.id, check.id, {});
    expect(results.items.map((r) => [r.resultType, r.errorMessage])).toEqual([['FINAL', 'The run did not finish within its time limit of 1 s']]);
    expect((await storage.schedule.list(account.id, check.id)).find((e) => e.kind === 'run')!.dueAt).toBe('2026-05-01T12:01:06.000Z');
  });
});
