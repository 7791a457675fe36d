import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle, stopOnClock } from './fake-time.js';
import { createVigil, type Runner, type RunJob, type Vigil } from '../src/index.js';
import { FakeClock, memoryStorage } from '../src/testing/index.js';

const SECRET = 'e'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';

const started: Vigil[] = [];
let clock: FakeClock;
afterEach(async () => {
  for (const vigil of started.splice(0)) await stopOnClock(vigil, clock);
});

describe('a runner whose time limit depends on the check (timeoutFor)', () => {
  it('limits each attempt to the check\'s own limit, at most the runner\'s, and plans retries with it', async () => {
    clock = new FakeClock(T0);
    const jobs: RunJob[] = [];
    // A suite runner: up to 60 s an attempt, a check's own limit named in it (here by its name).
    const runner: Runner = {
      checkType: 'TCP',
      timeoutMs: 60_000,
      timeoutFor: (check) => ({ short: 2_000, long: 600_000 } as Record<string, number>)[(check as { name: string }).name] ?? Number.NaN,
      run: (job) => {
        jobs.push(job);
        return new Promise<never>(() => {});
      },
    };
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], engine: { pollMs: 500 } });
    const account = await vigil.accounts.ensure('acct');
    const retry = { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 1, maxDurationSeconds: 600, sameRegion: true } as const;
    const made = async (name: string) => vigil.checks.create(account.id, 'TCP', {
      name, request: { hostname: '127.0.0.1', port: 5432 }, frequency: 5, frequencyOffset: 1, doubleCheck: false, retryStrategy: retry,
    });
    const short = await made('short');
    const long = await made('long');
    const odd = await made('odd');
    await vigil.start();
    started.push(vigil);
    await settle();
    await runFor(clock, 130_000);
    const outcome = async (id: string) => (await vigil.checkResults.list(account.id, id, {})).items.map((r) => [r.resultType, r.errorMessage]);
    // Its own 2 s: the attempt times out at 2 s, and the retry fits in the lease and runs.
    expect(jobs.filter((j) => j.check.id === short.id).map((j) => [j.attempt, j.timeoutMs])).toEqual([[1, 2_000], [2, 2_000]]);
    expect((await outcome(short.id))[0]).toEqual(['FINAL', 'The run did not finish within its time limit of 2 s']);
    // Asking more than the runner's limit, or nothing usable: the runner's 60 s.
    expect(jobs.filter((j) => j.check.id === long.id).map((j) => j.timeoutMs)[0]).toBe(60_000);
    expect(jobs.filter((j) => j.check.id === odd.id).map((j) => j.timeoutMs)[0]).toBe(60_000);
    expect((await outcome(long.id))[0]).toEqual(['FINAL', 'The run did not finish within its time limit of 60 s']);
  });
});
