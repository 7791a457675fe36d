import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle, stopOnClock } from './fake-time.js';
import { createVigil, type Vigil } from '../src/index.js';
import { FakeClock, FakeRunner, memoryStorage, passResult } from '../src/testing/index.js';

const SECRET = 'b'.repeat(64);

let live: { vigil: Vigil; clock: FakeClock } | null = null;
afterEach(async () => {
  if (live) await stopOnClock(live.vigil, live.clock);
  live = null;
});

describe('a runParallel session with one sequence cancelled', () => {
  it('is alerted on from its other sequences: the cancelled run raises no failure', async () => {
    const clock = new FakeClock('2026-05-01T12:00:00.000Z');
    // eu-west-1 hangs until it is cancelled; us-east-1 passes after a second.
    const runner = new FakeRunner('TCP', [(job) => (job.location === 'eu-west-1'
      ? new Promise<never>(() => {})
      : new Promise((resolve) => clock.setTimer(new Date(clock.now().getTime() + 1_000), () => resolve(passResult()))))]);
    const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner] });
    live = { vigil, clock };
    const account = await vigil.accounts.ensure('acct');
    const channel = await vigil.alertChannels.create(account.id, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await vigil.checks.create(account.id, 'TCP', {
      name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 60, frequencyOffset: 300,
      locations: ['us-east-1', 'eu-west-1'], runParallel: true, doubleCheck: false,
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    });
    await vigil.start();
    const { sessions } = await vigil.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
    await settle();
    const session = sessions[0]!;
    const hung = session.sequences.find((s) => s.runLocation === 'eu-west-1')!;
    await vigil.checkSessions.cancel(account.id, session.checkSessionId, { sequenceId: [hung.sequenceId] });
    await runFor(clock, 3_000);
    const ended = await vigil.checkSessions.get(account.id, session.checkSessionId);
    expect(ended.sequences.map((s) => [s.runLocation, s.status]).sort()).toEqual([['eu-west-1', 'CANCELLED'], ['us-east-1', 'PASSED']]);
    expect(ended.results.find((r) => r.runLocation === 'eu-west-1')).toMatchObject({ errorMessage: 'The run was cancelled' });
    expect(await vigil.storage.outbox.pending(account.id)).toEqual([]);
    expect((await vigil.storage.alertStates.get(account.id, check.id))?.status ?? 'PASSING').toBe('PASSING');
  });
});
