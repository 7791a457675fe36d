import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle, stopOnClock } from './fake-time.js';
import { createVigil, type Vigil } from '../src/index.js';
import { failResult, FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';

const SECRET = 'f'.repeat(64);

let vigil: Vigil | null = null;
let clock: FakeClock;
afterEach(async () => {
  if (vigil) await stopOnClock(vigil, clock);
  vigil = null;
});

describe('a runParallel round', () => {
  it('is taken in when its final attempts start after the period (late or retried runs)', async () => {
    // Every 10 s in two locations; the first attempt hangs its 6 s, the retry follows 5 s later,
    // at 11 s past the slot. The round was looked for among results started within the period,
    // so it never looked complete and its alert was never raised.
    clock = new FakeClock('2026-05-01T12:00:00.000Z');
    const runner = new FakeRunner('TCP', [(job) => (job.attempt === 1 ? new Promise<never>(() => {}) : failResult('Connection refused'))]);
    vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], engine: { runTimeoutMs: 6_000 } });
    const account = await vigil.accounts.ensure('acct');
    const channel = await vigil.alertChannels.create(account.id, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const check = await vigil.checks.create(account.id, 'TCP', {
      name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 0, frequencyOffset: 10,
      locations: ['us-east-1', 'eu-west-1'], runParallel: true,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 5, maxRetries: 1, maxDurationSeconds: 60, sameRegion: true },
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    });
    await vigil.start();
    await settle();
    await runFor(clock, 25_000);
    const first = runner.jobs[0]!.dueAt;
    const retries = runner.jobs.filter((j) => j.dueAt === first && j.attempt === 2);
    expect(retries.map((j) => j.location).sort()).toEqual(['eu-west-1', 'us-east-1']);
    for (const job of retries) {
      const result = await vigil.storage.checkResults.get(account.id, job.runId);
      expect(result).toMatchObject({ resultType: 'FINAL', hasFailures: true });
      expect(Date.parse(result!.startedAt) - Date.parse(first)).toBeGreaterThan(10_000);
    }
    const pending = await vigil.storage.outbox.pending(account.id);
    expect(pending.map((m) => [m.checkId, m.alertType])).toEqual([[check.id, 'ALERT_FAILURE']]);
  });
});
