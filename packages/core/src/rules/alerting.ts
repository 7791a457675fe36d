/**
 * The per-check alert state machine. Pure: the engine stores the state per check and feeds each
 * run (or round of parallel runs) through `evaluateRun`; the alerts it answers go to the outbox.
 */
import type { AlertType } from '../model/alert-channel.js';

// The list lives in the alert channel model (channels and webhooks name these types too); it is
// re-exported, not redeclared, because the package entry re-exports both modules with `export *`.
export { ALERT_TYPES, type AlertType } from '../model/alert-channel.js';

export const UNLIMITED_REMINDER_AMOUNT = 100000;

export interface AlertSettingsInput {
  escalationType: 'RUN_BASED' | 'TIME_BASED';
  runBasedEscalation: { failedRunThreshold: number };
  timeBasedEscalation: { minutesFailingThreshold: number };
  reminders: { amount: number; interval: number };
  parallelRunFailureThreshold: { enabled: boolean; percentage: number };
}

export interface RunOutcomeInput {
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
}

export type CheckHealth = 'PASSING' | 'DEGRADED' | 'FAILING';

export interface AlertState {
  status: CheckHealth;
  consecutiveFailures: number;
  consecutiveDegraded: number;
  failingSince: string | null;
  degradedSince: string | null;
  /** What was last notified in this episode. */
  alerted: 'NONE' | 'DEGRADED' | 'FAILURE';
  remindersSent: number;
  lastAlertAt: string | null;
  lastSslAlertDay: string | null;
  /**
   * The status-page incident this failure episode opened through the check's triggerIncident, kept
   * until the check passes again (absent in states stored before incidents were triggered).
   */
  incidentId?: string | null;
  /**
   * The run this state last took in, so that a second process finishing a stored run whose first
   * process died (see the run pipeline) takes it in once (absent in states stored before).
   */
  lastRunId?: string | null;
  /**
   * The runs this state took in lately, newest last: a stored run finished again by a second
   * process is taken in once even when other runs were taken in meanwhile (absent in states stored before).
   */
  recentRunIds?: string[];
}

export const INITIAL_ALERT_STATE: AlertState = Object.freeze({
  status: 'PASSING',
  consecutiveFailures: 0,
  consecutiveDegraded: 0,
  failingSince: null,
  degradedSince: null,
  alerted: 'NONE',
  remindersSent: 0,
  lastAlertAt: null,
  lastSslAlertDay: null,
  incidentId: null,
}) as AlertState;

export interface AlertContext {
  settings: AlertSettingsInput;
  runParallel: boolean;
  muted: boolean;
  /** A maintenance window silences this check's alerts now. */
  silenced: boolean;
  now: Date;
}

export interface AlertStep {
  state: AlertState;
  /** What is sent: nothing while muted or silenced. */
  alerts: AlertType[];
  /** What the alert settings decided at this step, before muting and silencing took it away. */
  raised: AlertType[];
}

const MINUTE = 60_000;

const failed = (r: RunOutcomeInput) => r.hasFailures || r.hasErrors;

/**
 * The health of one run or of a round of parallel runs (one per location). The percentage threshold
 * counts only for a runParallel check (docs/decisions.md); otherwise any failed location fails the round.
 */
export function classifyRound(
  run: RunOutcomeInput | RunOutcomeInput[],
  settings: AlertSettingsInput,
  runParallel: boolean,
): CheckHealth {
  const runs = Array.isArray(run) ? run : [run];
  if (runs.length === 0) return 'PASSING';
  const failedCount = runs.filter(failed).length;
  const threshold = settings.parallelRunFailureThreshold;
  const isFailed = runParallel && threshold.enabled
    ? (failedCount / runs.length) * 100 >= threshold.percentage
    : failedCount > 0;
  if (isFailed) return 'FAILING';
  return runs.some((r) => r.isDegraded && !failed(r)) ? 'DEGRADED' : 'PASSING';
}

function minutesSince(iso: string | null, now: Date): number {
  return iso === null ? 0 : (now.getTime() - Date.parse(iso)) / MINUTE;
}

function thresholdMet(count: number, since: string | null, settings: AlertSettingsInput, now: Date): boolean {
  if (settings.escalationType === 'TIME_BASED') {
    return minutesSince(since, now) >= settings.timeBasedEscalation.minutesFailingThreshold;
  }
  return count >= settings.runBasedEscalation.failedRunThreshold;
}

/** Muted or silenced: the state moves, but nothing is sent and nothing counts as notified. */
function emit(before: AlertState, after: AlertState, alerts: AlertType[], ctx: AlertContext): AlertStep {
  if (alerts.length === 0) return { state: after, alerts, raised: [] };
  if (ctx.muted || ctx.silenced) {
    return {
      state: { ...after, alerted: before.alerted, lastAlertAt: before.lastAlertAt, remindersSent: before.remindersSent },
      alerts: [],
      raised: alerts,
    };
  }
  return { state: after, alerts, raised: alerts };
}

function reminderDue(state: AlertState, settings: AlertSettingsInput, now: Date): boolean {
  if (state.alerted !== 'FAILURE' || state.lastAlertAt === null) return false;
  const { amount, interval } = settings.reminders;
  if (amount !== UNLIMITED_REMINDER_AMOUNT && state.remindersSent >= amount) return false;
  return minutesSince(state.lastAlertAt, now) >= interval;
}

function stepFailing(state: AlertState, ctx: AlertContext): Omit<AlertStep, 'raised'> {
  const nowIso = ctx.now.toISOString();
  if (state.alerted !== 'FAILURE' && thresholdMet(state.consecutiveFailures, state.failingSince, ctx.settings, ctx.now)) {
    const type: AlertType = state.alerted === 'DEGRADED' ? 'ALERT_DEGRADED_FAILURE' : 'ALERT_FAILURE';
    return { state: { ...state, alerted: 'FAILURE', lastAlertAt: nowIso, remindersSent: 0 }, alerts: [type] };
  }
  if (reminderDue(state, ctx.settings, ctx.now)) {
    return { state: { ...state, lastAlertAt: nowIso, remindersSent: state.remindersSent + 1 }, alerts: ['ALERT_FAILURE_REMAIN'] };
  }
  return { state, alerts: [] };
}

function stepDegraded(state: AlertState, ctx: AlertContext): Omit<AlertStep, 'raised'> {
  const nowIso = ctx.now.toISOString();
  if (state.alerted === 'FAILURE') {
    return { state: { ...state, alerted: 'DEGRADED', lastAlertAt: nowIso, remindersSent: 0 }, alerts: ['ALERT_FAILURE_DEGRADED'] };
  }
  if (state.alerted === 'NONE' && thresholdMet(state.consecutiveDegraded, state.degradedSince, ctx.settings, ctx.now)) {
    return { state: { ...state, alerted: 'DEGRADED', lastAlertAt: nowIso }, alerts: ['ALERT_DEGRADED'] };
  }
  return { state, alerts: [] };
}

/** Feeds one finished run (or a round of parallel runs) through the state machine. */
export function evaluateRun(previous: AlertState, run: RunOutcomeInput | RunOutcomeInput[], ctx: AlertContext): AlertStep {
  const health = classifyRound(run, ctx.settings, ctx.runParallel);
  const nowIso = ctx.now.toISOString();

  if (health === 'PASSING') {
    const alerts: AlertType[] = previous.alerted === 'FAILURE'
      ? ['ALERT_RECOVERY']
      : previous.alerted === 'DEGRADED' ? ['ALERT_DEGRADED_RECOVERY'] : [];
    // Passing ends the episode: its incident too (the engine resolves it from `previous`).
    const reset: AlertState = { ...INITIAL_ALERT_STATE, lastSslAlertDay: previous.lastSslAlertDay };
    if (alerts.length > 0 && (ctx.muted || ctx.silenced)) return { state: reset, alerts: [], raised: alerts };
    return { state: reset, alerts, raised: alerts };
  }

  if (health === 'FAILING') {
    const moved: AlertState = {
      ...previous,
      status: 'FAILING',
      consecutiveFailures: previous.consecutiveFailures + 1,
      consecutiveDegraded: 0,
      failingSince: previous.failingSince ?? nowIso,
      degradedSince: null,
    };
    const step = stepFailing(moved, ctx);
    return emit(moved, step.state, step.alerts, ctx);
  }

  const moved: AlertState = {
    ...previous,
    status: 'DEGRADED',
    consecutiveDegraded: previous.consecutiveDegraded + 1,
    consecutiveFailures: 0,
    failingSince: null,
    degradedSince: previous.degradedSince ?? nowIso,
  };
  const step = stepDegraded(moved, ctx);
  return emit(moved, step.state, step.alerts, ctx);
}

/**
 * Re-evaluates a check with no new run (its runs are far apart, or paused): time-based escalation
 * and reminders still fire on time. Run counts do not move here, so RUN_BASED escalation waits for a run.
 */
export function evaluateTick(state: AlertState, ctx: AlertContext): AlertStep {
  const timeBased = ctx.settings.escalationType === 'TIME_BASED';
  if (state.status === 'FAILING' && (timeBased || state.alerted === 'FAILURE')) {
    const step = stepFailing(state, ctx);
    return emit(state, step.state, step.alerts, ctx);
  }
  if (state.status === 'DEGRADED' && timeBased && state.alerted === 'NONE') {
    const step = stepDegraded(state, ctx);
    return emit(state, step.state, step.alerts, ctx);
  }
  return { state, alerts: [], raised: [] };
}

/** The largest sslExpiryThreshold a channel may set. */
export const MAX_SSL_EXPIRY_THRESHOLD = 30;

/** ALERT_SSL at most once per UTC day while the certificate has 30 days or fewer left. */
export function evaluateSsl(state: AlertState, sslDaysRemaining: number | null, now: Date): { state: AlertState; alert: boolean } {
  if (sslDaysRemaining === null || sslDaysRemaining > MAX_SSL_EXPIRY_THRESHOLD) return { state, alert: false };
  const day = now.toISOString().slice(0, 10);
  if (state.lastSslAlertDay === day) return { state, alert: false };
  return { state: { ...state, lastSslAlertDay: day }, alert: true };
}

export interface ChannelFlagsInput {
  sendFailure: boolean;
  sendRecovery: boolean;
  sendDegraded: boolean;
  sslExpiry: boolean;
  sslExpiryThreshold: number;
}

export function sslAlertAppliesToChannel(channel: Pick<ChannelFlagsInput, 'sslExpiry' | 'sslExpiryThreshold'>, daysRemaining: number): boolean {
  return channel.sslExpiry && daysRemaining <= channel.sslExpiryThreshold;
}

/** Whether a channel's flags ask for this kind of alert (the spec's sendFailure/Recovery/Degraded, sslExpiry). */
export function channelWantsAlert(channel: ChannelFlagsInput, alertType: AlertType, sslDaysRemaining?: number | null): boolean {
  switch (alertType) {
    case 'ALERT_FAILURE':
    case 'ALERT_FAILURE_REMAIN':
    case 'ALERT_DEGRADED_FAILURE':
      return channel.sendFailure;
    case 'ALERT_RECOVERY':
    case 'ALERT_DEGRADED_RECOVERY':
      return channel.sendRecovery;
    case 'ALERT_DEGRADED':
    case 'ALERT_FAILURE_DEGRADED':
      return channel.sendDegraded;
    case 'ALERT_SSL':
      return sslDaysRemaining !== null && sslDaysRemaining !== undefined && sslAlertAppliesToChannel(channel, sslDaysRemaining);
  }
}
