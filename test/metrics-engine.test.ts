/**
 * The engine's Prometheus metrics as a host reads them: a Vigil on the in-memory store, a fake
 * runner and a fake clock, counting into a prom-client registry through `prometheusMetrics()`.
 * Runs that pass, fail and retry, claims and their lag, a lease that ran out, and an alert that
 * fails once and is then delivered each move their series.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createVigil, type Vigil, type VigilOptions } from '@vigil/core';
import { failResult, FakeClock, FakeRunner, FakeTransport, memoryStorage, passResult } from '@vigil/core/testing';
import { prometheusMetrics } from '@vigil/http-express-adapter';
import { runFor, settle } from '../packages/core/test/fake-time.js';

const T0 = '2026-05-01T12:00:00.000Z';
const TCP = { check_type: 'TCP', location: 'us-east-1' };

const tcp = (overrides: Record<string, unknown> = {}) => ({
  name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 0, frequencyOffset: 10, ...overrides,
});

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

async function setup(runner: FakeRunner, options: Partial<VigilOptions> = {}) {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const vigil = createVigil({
    storage: memoryStorage(), secretKey: 'd'.repeat(64), clock, runners: [runner],
    metrics: prometheusMetrics({ registry }), ...options,
  });
  const account = await vigil.accounts.ensure('acct');
  return { vigil, clock, registry, accountId: account.id };
}

async function start(vigil: Vigil): Promise<void> {
  await vigil.start();
  started.push(vigil);
  await settle();
}

/** The sum of a series' samples whose labels include `labels` (`_count`/`_sum` name a histogram's parts). */
async function sample(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name) ?? registry.getSingleMetric(name.replace(/_(count|sum)$/, ''));
  if (!metric) throw new Error(`no metric ${name} in the registry`);
  const { values } = await metric.get();
  return values
    // A histogram's samples name their part (`_bucket`, `_sum`, `_count`); a counter's do not.
    .filter((v) => ((v as { metricName?: string }).metricName ?? name) === name && Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('engine metrics on a prom-client registry', () => {
  it('counts runs by check type, location and outcome, with durations, retries, claims and scheduler lag', async () => {
    const runner = new FakeRunner('TCP', [passResult(), passResult(), failResult('Connection refused')]);
    const s = await setup(runner);
    await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await start(s.vigil);
    await runFor(s.clock, 45_000);

    // A run is its first attempt; the default retryStrategy retries the failing ones.
    const runs = runner.jobs.filter((j) => j.attempt === 1).length;
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(await sample(s.registry, 'vigil_runs_total', { ...TCP, outcome: 'passed' })).toBe(2);
    expect(await sample(s.registry, 'vigil_runs_total', { ...TCP, outcome: 'failed' })).toBe(runs - 2);
    expect(await sample(s.registry, 'vigil_run_duration_seconds_count', TCP)).toBe(runs);
    expect(await sample(s.registry, 'vigil_run_duration_seconds_count', { ...TCP, outcome: 'failed' })).toBe(runs - 2);
    expect(await sample(s.registry, 'vigil_run_retries_total', TCP)).toBe(runner.jobs.length - runs);

    // Every run started from a claimed slot (alert ticks of the failing check are claimed too).
    const claims = await sample(s.registry, 'vigil_schedule_claims_total');
    expect(claims).toBeGreaterThanOrEqual(runs);
    const lagged = await sample(s.registry, 'vigil_scheduler_lag_seconds_count');
    expect(lagged).toBeGreaterThanOrEqual(runs);
    expect(lagged).toBeLessThanOrEqual(claims);
    // Claimed a second ahead and started by one timer: on time, within the clock's 100 ms steps.
    expect(await sample(s.registry, 'vigil_scheduler_lag_seconds_sum') / lagged).toBeLessThanOrEqual(0.1);
    expect(await sample(s.registry, 'vigil_schedule_lease_expiries_total')).toBe(0);
    expect(await sample(s.registry, 'vigil_engine_active_runs')).toBe(0);
  });

  it('counts retries inside a run once as a run, and the attempts after the first as retries', async () => {
    const runner = new FakeRunner('TCP', [failResult('refused'), failResult('refused'), passResult()]);
    const s = await setup(runner);
    await s.vigil.checks.create(s.accountId, 'TCP', tcp({
      frequency: 1, frequencyOffset: 1,
      retryStrategy: { type: 'FIXED', baseBackoffSeconds: 2, maxRetries: 3, maxDurationSeconds: 60, sameRegion: true },
    }));
    await start(s.vigil);
    // One slot (6 s into the minute) with its two retries; the next slot is a minute later.
    await runFor(s.clock, 30_000, 250);

    expect(runner.jobs.map((j) => j.attempt).slice(0, 3)).toEqual([1, 2, 3]);
    expect(await sample(s.registry, 'vigil_runs_total', { ...TCP, outcome: 'passed' })).toBe(1);
    expect(await sample(s.registry, 'vigil_runs_total', { outcome: 'failed' })).toBe(0);
    expect(await sample(s.registry, 'vigil_run_retries_total', TCP)).toBe(2);
    // Two waits of 2 s between three attempts: the run took at least 4 s.
    expect(await sample(s.registry, 'vigil_run_duration_seconds_sum', TCP)).toBeGreaterThanOrEqual(4);
  });

  it('counts slots that did not run by reason (paused by a maintenance window)', async () => {
    const runner = new FakeRunner('TCP');
    const s = await setup(runner);
    await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    await s.vigil.maintenanceWindows.create(s.accountId, {
      name: 'upgrade', startsAt: T0, endsAt: '2026-05-01T12:00:30.000Z', repeatUnit: 'DAY', pauseAllChecks: true,
    });
    await start(s.vigil);
    await runFor(s.clock, 25_000);
    expect(runner.jobs).toHaveLength(0);
    expect(await sample(s.registry, 'vigil_runs_skipped_total', { reason: 'paused' })).toBeGreaterThanOrEqual(2);
    expect(await sample(s.registry, 'vigil_runs_total')).toBe(0);
  });

  it('counts a slot claimed again after another process\'s lease ran out', async () => {
    const runner = new FakeRunner('TCP');
    const s = await setup(runner);
    const check = await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    // Another process claims the first due slot and dies holding a 5 s lease.
    s.clock.advance(10_000);
    const held = await s.vigil.storage.schedule.claimDue(s.clock.now(), {}, 10, 5_000, 'dead-process');
    expect(held.map((j) => j.checkId)).toEqual([check.id]);
    await start(s.vigil);
    await runFor(s.clock, 3_000);
    expect(runner.jobs).toHaveLength(0);
    expect(await sample(s.registry, 'vigil_schedule_lease_expiries_total')).toBe(0);
    await runFor(s.clock, 4_000);
    expect(runner.jobs[0]?.dueAt).toBe(held[0]!.dueAt);
    expect(await sample(s.registry, 'vigil_schedule_lease_expiries_total')).toBe(1);
    // The lease this process took for itself, completed and reclaimed by nobody, counts no expiry.
    await runFor(s.clock, 20_000);
    expect(runner.jobs.length).toBeGreaterThanOrEqual(3);
    expect(await sample(s.registry, 'vigil_schedule_lease_expiries_total')).toBe(1);
  });

  it('counts queued alerts, delivery attempts by result and the outbox depth read from the store', async () => {
    const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
    const transport = new FakeTransport('EMAIL').failNext(1);
    const s = await setup(runner, { transports: [transport] });
    await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    await s.vigil.checks.create(s.accountId, 'TCP', tcp());
    expect(await sample(s.registry, 'vigil_outbox_depth')).toBe(0);
    await start(s.vigil);
    // The check's phase within its 10 s period comes from its id: step until the first send.
    for (let waited = 0; transport.attempts === 0 && waited < 30_000; waited += 250) await runFor(s.clock, 250);

    expect(await sample(s.registry, 'vigil_alerts_queued_total', { alert_type: 'ALERT_FAILURE' })).toBe(1);
    expect(transport.attempts).toBe(1);
    expect(await sample(s.registry, 'vigil_alert_delivery_attempts_total', { channel_type: 'EMAIL', result: 'failed' })).toBe(1);
    expect(await sample(s.registry, 'vigil_alert_delivery_attempts_total', { result: 'delivered' })).toBe(0);
    expect(await sample(s.registry, 'vigil_outbox_depth')).toBe(1);

    // The retry after the 10 s backoff goes through.
    await runFor(s.clock, 12_000);
    expect(transport.sent).toHaveLength(1);
    expect(await sample(s.registry, 'vigil_alert_delivery_attempts_total', { channel_type: 'EMAIL', result: 'delivered' })).toBe(1);
    expect(await sample(s.registry, 'vigil_alert_delivery_duration_seconds_count', { channel_type: 'EMAIL' })).toBe(2);
    expect(await sample(s.registry, 'vigil_outbox_depth')).toBe(0);

    // Another process's row counts too: the depth is the store's, not this process's.
    await s.vigil.storage.outbox.enqueue([{
      id: '00000000-0000-4000-8000-0000000000aa', accountId: s.accountId, checkId: null, alertChannelId: 999_999, alertType: 'ALERT_FAILURE',
      payload: {}, created_at: s.clock.now().toISOString(), nextAttemptAt: new Date(s.clock.now().getTime() + 3_600_000).toISOString(),
    }]);
    expect(await sample(s.registry, 'vigil_outbox_depth')).toBe(1);
  });

  it('reads the outbox depth as NaN, without failing the scrape, while the store is away', async () => {
    const storage = memoryStorage();
    const s = await setup(new FakeRunner('TCP'), { storage });
    storage.outbox.depth = async () => {
      throw new Error('connection refused');
    };
    expect(Number.isNaN(await sample(s.registry, 'vigil_outbox_depth'))).toBe(true);
    expect(await s.registry.metrics()).toMatch(/^vigil_outbox_depth nan$/im);
  });

  it('shares one registry between two Vigil instances without registering a metric twice', async () => {
    const registry = new Registry();
    const metrics = prometheusMetrics({ registry });
    const a = createVigil({ storage: memoryStorage(), secretKey: 'd'.repeat(64), metrics });
    const b = createVigil({ storage: memoryStorage(), secretKey: 'd'.repeat(64), metrics: prometheusMetrics({ registry }) });
    expect(a.engine).toBeDefined();
    expect(b.engine).toBeDefined();
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('vigil_runs_total');
    // Vigil's own registry only: the host's registry is not given Node's process metrics.
    expect(names.some((n) => n.startsWith('process_') || n.startsWith('nodejs_'))).toBe(false);
  });
});
