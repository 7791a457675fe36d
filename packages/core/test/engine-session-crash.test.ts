import { afterEach, describe, expect, it } from 'vitest';
import { mortalClock, runFor, stopOnClock } from './fake-time.js';
import { createVigil, type Vigil } from '../src/index.js';
import { FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';

const SECRET = 'd'.repeat(64);
const LEASE_MS = 20_000;

let live: { vigil: Vigil; clock: FakeClock } | null = null;
afterEach(async () => {
  if (live) await stopOnClock(live.vigil, live.clock);
  live = null;
});

describe('a session run stored by a process that died before it ended the sequence', () => {
  it.each([
    { run: 'passed', outcome: {}, status: 'PASSED' },
    { run: 'failed', outcome: { hasFailures: true, errorMessage: 'Connection refused', failureKind: 'NETWORK_ERROR' as const }, status: 'FAILED' },
  ])('is ended from the stored result by the next process, not run and stored again (a run that $run)', async ({ outcome, status }) => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const storage = memoryStorage();
    const first = mortalClock(clock);
    const ranInA = new FakeRunner('TCP', [outcome]);
    const a = createVigil({ storage, secretKey: SECRET, clock: first.clock, runners: [ranInA], engine: { leaseMs: LEASE_MS, runTimeoutMs: 5_000 } });
    const account = await a.accounts.ensure('acct');
    const check = await a.checks.create(account.id, 'TCP', { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 1440 });
    // A stores its run's result, then its write that ends the sequence never answers: it dies there.
    const replace = storage.checkSessions.replace.bind(storage.checkSessions);
    let hung = false;
    storage.checkSessions.replace = (accountId, expected, next) => {
      if (hung || !next.sequences.some((q) => q.status === 'PASSED' || q.status === 'FAILED')) return replace(accountId, expected, next);
      hung = true;
      return new Promise(() => {});
    };
    await a.start();
    const { sessions: [session] } = await a.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
    await runFor(clock, 1_000);
    expect(ranInA.jobs.length).toBeGreaterThan(0);
    expect(hung).toBe(true);
    first.kill();
    const finals = async () => (await storage.checkResults.listByCheck(account.id, check.id, { limit: 10, offset: 0, checkSessionId: session!.checkSessionId, resultType: 'FINAL' })).items;
    expect(await finals()).toHaveLength(1);
    expect((await storage.checkSessions.get(account.id, session!.checkSessionId))?.status).toBe('PROGRESS');

    const runner = new FakeRunner('TCP');
    const b = createVigil({ storage, secretKey: SECRET, clock, runners: [runner], engine: { leaseMs: LEASE_MS, runTimeoutMs: 5_000 } });
    await b.start();
    live = { vigil: b, clock };
    await runFor(clock, LEASE_MS + 2_000);
    expect(runner.jobs).toHaveLength(0);
    const done = await b.checkSessions.completion(account.id, session!.checkSessionId, { maxWaitSeconds: '1' });
    expect(done).toMatchObject({ done: true, session: { status, sequences: [{ status }] } });
    expect(done.session.results.filter((r) => r.resultType === 'FINAL')).toHaveLength(1);
    expect(await finals()).toHaveLength(1);
    // What a did not reach after storing its run is done once: the check's status and the alert step.
    const runId = (await finals())[0]!.id;
    expect(await b.checkStatuses.get(account.id, check.id)).toMatchObject({ lastCheckRunId: runId, hasFailures: status === 'FAILED' });
    expect(await storage.alertStates.get(account.id, check.id)).toMatchObject({ lastRunId: runId, status: status === 'FAILED' ? 'FAILING' : 'PASSING' });
    expect((await storage.schedule.list(account.id, check.id)).filter((e) => e.kind === 'session')).toEqual([]);
  });
});
