import { afterEach, describe, expect, it } from 'vitest';
import { mortalClock, runFor, stopOnClock } from './fake-time.js';
import { createVigil, type ScheduledJob, type Vigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';

const SECRET = 'a'.repeat(64);

let live: { vigil: Vigil; clock: FakeClock } | null = null;
afterEach(async () => {
  if (live) await stopOnClock(live.vigil, live.clock);
  live = null;
});

describe('a stored run finished again by the process that takes its slot over', () => {
  it('is taken into the alert state once, though another run of the check was taken in meanwhile', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const storage = memoryStorage();
    const engine = { leaseMs: 20_000, runTimeoutMs: 5_000 };
    // A takes its slot's run into the alert state, then its move of the slot's entry never answers: it dies there.
    const complete = storage.schedule.complete.bind(storage.schedule);
    storage.schedule.complete = (job: ScheduledJob, next) => (job.leaseOwner === 'a' && job.kind === 'run' ? new Promise<never>(() => {}) : complete(job, next));
    const first = mortalClock(clock);
    const failing = () => new FakeRunner('TCP', [failResult('Connection refused')]);
    const a = createVigil({ storage, secretKey: SECRET, clock: first.clock, runners: [failing()], engine: { ...engine, owner: 'a' } });
    const account = await a.accounts.ensure('acct');
    const channel = await a.alertChannels.create(account.id, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    // A failure alert after three failed runs: a run taken in twice would raise it after two.
    const check = await a.checks.create(account.id, 'TCP', {
      name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 1, frequencyOffset: 1, doubleCheck: false,
      useGlobalAlertSettings: false, alertSettings: { runBasedEscalation: { failedRunThreshold: 3 } },
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    });
    await a.start();
    await runFor(clock, 7_000);
    expect((await storage.alertStates.get(account.id, check.id))?.consecutiveFailures).toBe(1);
    first.kill();

    // B runs a session of the check (taken in: two failures), then takes the slot over once A's lease ran out.
    const b = createVigil({ storage, secretKey: SECRET, clock, runners: [failing()], engine: { ...engine, owner: 'b' } });
    live = { vigil: b, clock };
    await b.start();
    await b.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
    await runFor(clock, 1_000);
    expect((await storage.alertStates.get(account.id, check.id))?.consecutiveFailures).toBe(2);
    await runFor(clock, 30_000);
    expect((await storage.schedule.list(account.id, check.id)).find((e) => e.kind === 'run')!.dueAt).toBe('2026-05-01T12:01:06.000Z');
    expect((await storage.alertStates.get(account.id, check.id))?.consecutiveFailures).toBe(2);
    expect(await storage.outbox.pending(account.id)).toEqual([]);
  });
});
