import { describe, expect, it } from 'vitest';
import { AlertChannelService } from '../src/services/alert-channels.js';
import { AnalyticsService } from '../src/services/analytics.js';
import { browserCheckFixture, checkResultFixture, emailChannelFixture, outboxMessageFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

/** A browser check (a type the typed queries do not cover) with six runs over two hours and two locations. */
async function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  const check = await storage.checks.insert(ACCOUNT_A, browserCheckFixture({ name: 'signup' }));
  const runs = [
    { at: '2026-05-01T10:05:00.000Z', ms: 10, loc: 'eu-west-1' },
    { at: '2026-05-01T10:15:00.000Z', ms: 20, loc: 'us-east-1' },
    { at: '2026-05-01T10:25:00.000Z', ms: 30, loc: 'eu-west-1' },
    { at: '2026-05-01T10:35:00.000Z', ms: 40, loc: 'us-east-1', failed: true },
    { at: '2026-05-01T11:05:00.000Z', ms: 100, loc: 'eu-west-1' },
    { at: '2026-05-01T11:15:00.000Z', ms: 200, loc: 'eu-west-1', failed: true },
  ];
  await storage.checkResults.insertMany(ACCOUNT_A, runs.map((r) => checkResultFixture(check.id, {
    checkType: 'BROWSER', startedAt: r.at, responseTime: r.ms, phases: { total: r.ms }, hasFailures: r.failed === true, runLocation: r.loc,
  })));
  return { storage, deps, check, analytics: new AnalyticsService(deps) };
}

const window = { from: new Date('2026-05-01T10:00:00Z'), to: new Date('2026-05-01T12:00:00Z') };

describe('AnalyticsService.responseTimes (any check type)', () => {
  it('gives p50, p95, p99 and availability per bucket, oldest first', async () => {
    const { analytics, check } = await setup();
    const out = await analytics.responseTimes(ACCOUNT_A, check.id, { ...window, bucketMs: 3_600_000 });
    expect(out).toMatchObject({ checkId: check.id, checkType: 'BROWSER', from: '2026-05-01T10:00:00.000Z', to: '2026-05-01T12:00:00.000Z', bucketMs: 3_600_000, approximate: false });
    expect(out.points).toEqual([
      { startedAt: '2026-05-01T10:00:00.000Z', runLocation: null, runs: 4, failures: 1, availability: 75, p50: 25, p95: 38.5, p99: expect.closeTo(39.7, 9) },
      { startedAt: '2026-05-01T11:00:00.000Z', runLocation: null, runs: 2, failures: 1, availability: 50, p50: 150, p95: 195, p99: expect.closeTo(199, 9) },
    ]);
    const whole = await analytics.responseTimes(ACCOUNT_A, check.id, { ...window, bucketMs: null });
    expect(whole.points).toEqual([{ startedAt: '2026-05-01T10:00:00.000Z', runLocation: null, runs: 6, failures: 2, availability: (4 / 6) * 100, p50: 35, p95: expect.closeTo(175, 9), p99: expect.closeTo(195, 9) }]);
  });

  it('splits each bucket by run location when asked', async () => {
    const { analytics, check } = await setup();
    const out = await analytics.responseTimes(ACCOUNT_A, check.id, { ...window, bucketMs: 3_600_000, byLocation: true });
    expect(out.points.map((p) => [p.startedAt.slice(11, 13), p.runLocation, p.runs, p.availability, p.p50])).toEqual([
      ['10', 'eu-west-1', 2, 100, 20],
      ['10', 'us-east-1', 2, 50, 30],
      ['11', 'eu-west-1', 2, 50, 150],
    ]);
  });

  it('answers 404 for another account\'s check and refuses a window without buckets that fit', async () => {
    const { analytics, check } = await setup();
    expect(await code(analytics.responseTimes(ACCOUNT_B, check.id, { ...window, bucketMs: 60_000 }))).toBe('NOT_FOUND');
    expect(await code(analytics.responseTimes(ACCOUNT_A, check.id, { from: window.to, to: window.from, bucketMs: 60_000 }))).toBe('VALIDATION');
    expect(await code(analytics.responseTimes(ACCOUNT_A, check.id, { ...window, bucketMs: 0 }))).toBe('VALIDATION');
    expect(await code(analytics.responseTimes(ACCOUNT_A, check.id, { ...window, bucketMs: 100 }))).toBe('VALIDATION');
  });
});

describe('AlertChannelService.checkAlerts', () => {
  it('lists a check\'s alerts newest first with their channel and every delivery attempt, in its account only', async () => {
    const { storage, deps, check } = await setup();
    const channel = await storage.alertChannels.insert(ACCOUNT_A, emailChannelFixture());
    const other = await storage.checks.insert(ACCOUNT_A, browserCheckFixture({ name: 'other' }));
    const msg = (id: string, checkId: string, at: string, alertType = 'ALERT_FAILURE') => outboxMessageFixture(ACCOUNT_A, {
      id, checkId, alertChannelId: channel.id, alertType, created_at: at, nextAttemptAt: at, payload: { kind: 'alert', errorMessage: `failed ${id}` } as never,
    });
    const [first, second] = ['00000001-0000-4000-8000-000000000000', '00000002-0000-4000-8000-000000000000'];
    await storage.outbox.enqueue([
      msg(first, check.id, '2026-05-01T10:36:00.000Z'),
      msg(second, check.id, '2026-05-01T11:16:00.000Z', 'ALERT_RECOVERY'),
      msg('00000003-0000-4000-8000-000000000000', other.id, '2026-05-01T11:00:00.000Z'),
    ]);
    await storage.outbox.claim(new Date('2026-05-01T12:00:00Z'), 10, 60_000, 'me');
    await storage.outbox.markDelivered(first, 'me', new Date('2026-05-01T10:37:00Z'));
    await storage.outbox.recordAttempt({ outboxId: first, accountId: ACCOUNT_A, alertChannelId: channel.id, at: '2026-05-01T10:36:30.000Z', ok: false, detail: 'SMTP 451' });
    await storage.outbox.recordAttempt({ outboxId: first, accountId: ACCOUNT_A, alertChannelId: channel.id, at: '2026-05-01T10:37:00.000Z', ok: true, detail: 'delivered' });
    const alerts = new AlertChannelService(deps);
    const list = await alerts.checkAlerts(ACCOUNT_A, check.id, {});
    expect(list.map((a) => [a.id, a.alertType, a.state, a.channel?.type, a.log.map((l) => l.detail)])).toEqual([
      [second, 'ALERT_RECOVERY', 'PENDING', 'EMAIL', []],
      [first, 'ALERT_FAILURE', 'DELIVERED', 'EMAIL', ['SMTP 451', 'delivered']],
    ]);
    expect(list[1]!.payload).toMatchObject({ errorMessage: `failed ${first}` });
    expect(await alerts.checkAlerts(ACCOUNT_A, check.id, { limit: '1' })).toHaveLength(1);
    expect(await code(alerts.checkAlerts(ACCOUNT_B, check.id, {}))).toBe('NOT_FOUND');
  });
});
