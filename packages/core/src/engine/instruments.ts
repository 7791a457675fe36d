import type { RunResult } from '../ports/runner.js';
import { DURATION_BUCKETS_SECONDS, noopMetrics } from '../defaults/metrics.js';
import type { GaugeSpec, HistogramSpec, MetricSpec, Metrics } from '../ports/metrics.js';

/** What a run came to, as the `outcome` label says it. */
export type RunOutcomeLabel = 'passed' | 'degraded' | 'failed' | 'error' | 'cancelled';

export function runOutcomeLabel(result: Pick<RunResult, 'hasErrors' | 'hasFailures' | 'isDegraded'>, cancelled = false): RunOutcomeLabel {
  if (cancelled) return 'cancelled';
  if (result.hasErrors) return 'error';
  if (result.hasFailures) return 'failed';
  return result.isDegraded ? 'degraded' : 'passed';
}

const LAG_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** The engine's metrics, declared once; the README of @vigil/http-express-adapter lists them. */
export const ENGINE_METRICS = {
  runs: {
    name: 'vigil_runs_total',
    help: 'Check runs this process finished (retries inside one run count once), by the final outcome',
    labelNames: ['check_type', 'location', 'outcome'],
  },
  runDuration: {
    name: 'vigil_run_duration_seconds',
    help: 'Time from the start of a run\'s first attempt to the end of its last (retries and their waits included)',
    labelNames: ['check_type', 'location', 'outcome'],
    buckets: DURATION_BUCKETS_SECONDS,
  },
  runRetries: {
    name: 'vigil_run_retries_total',
    help: 'Attempts made after a run\'s first (retryStrategy)',
    labelNames: ['check_type', 'location'],
  },
  runsSkipped: {
    name: 'vigil_runs_skipped_total',
    help: 'Due slots that did not run: the check was gone, inactive, paused by maintenance, another process had already stored the slot, or no runner of its type was free before the lease ran short (busy)',
    labelNames: ['reason'],
  },
  schedulerLag: {
    name: 'vigil_scheduler_lag_seconds',
    help: 'How late a claimed slot started after its due time',
    labelNames: [],
    buckets: LAG_BUCKETS_SECONDS,
  },
  claims: {
    name: 'vigil_schedule_claims_total',
    help: 'Due slots this process claimed from the shared schedule',
    labelNames: [],
  },
  claimFailures: {
    name: 'vigil_schedule_claim_failures_total',
    help: 'Reads of the shared schedule that failed (the store was unreachable)',
    labelNames: [],
  },
  leaseExpiries: {
    name: 'vigil_schedule_lease_expiries_total',
    help: 'Slots this process claimed after another holder\'s lease ran out unfinished (that process died or hung)',
    labelNames: [],
  },
  alertsQueued: {
    name: 'vigil_alerts_queued_total',
    help: 'Alert messages written to the outbox, one per channel',
    labelNames: ['alert_type'],
  },
  deliveryAttempts: {
    name: 'vigil_alert_delivery_attempts_total',
    help: 'Outbox deliveries tried, by result: delivered, failed (retried later), gave_up (past the retry window), dropped (channel deleted, or a payload that cannot be read; a status-page email with nothing to send any more)',
    labelNames: ['channel_type', 'result'],
  },
  deliveryDuration: {
    name: 'vigil_alert_delivery_duration_seconds',
    help: 'Time a transport took to deliver or fail one alert',
    labelNames: ['channel_type', 'result'],
    buckets: DURATION_BUCKETS_SECONDS,
  },
} as const satisfies Record<string, MetricSpec | HistogramSpec>;

/** Gauges read at collection time; the container registers them with their callbacks. */
export const GAUGE_METRICS = {
  outboxDepth: {
    name: 'vigil_outbox_depth',
    help: 'Alerts and status-page subscribers\' emails not yet delivered, counted in the shared store (the same in every process)',
    labelNames: [],
  },
  activeRuns: {
    name: 'vigil_engine_active_runs',
    help: 'Runs in progress in this process',
    labelNames: [],
  },
} as const satisfies Record<string, Omit<GaugeSpec, 'collect'>>;

export type EngineInstruments = ReturnType<typeof build>;

function build(metrics: Metrics) {
  const m = ENGINE_METRICS;
  return {
    runs: metrics.counter(m.runs),
    runDuration: metrics.histogram(m.runDuration),
    runRetries: metrics.counter(m.runRetries),
    runsSkipped: metrics.counter(m.runsSkipped),
    schedulerLag: metrics.histogram(m.schedulerLag),
    claims: metrics.counter(m.claims),
    claimFailures: metrics.counter(m.claimFailures),
    leaseExpiries: metrics.counter(m.leaseExpiries),
    alertsQueued: metrics.counter(m.alertsQueued),
    deliveryAttempts: metrics.counter(m.deliveryAttempts),
    deliveryDuration: metrics.histogram(m.deliveryDuration),
  };
}

const built = new WeakMap<Metrics, EngineInstruments>();

/** The engine's instruments on `metrics` (made once per Metrics, shared by engine, pipeline and dispatcher). */
export function engineInstruments(metrics: Metrics = noopMetrics): EngineInstruments {
  let found = built.get(metrics);
  if (!found) built.set(metrics, (found = build(metrics)));
  return found;
}
