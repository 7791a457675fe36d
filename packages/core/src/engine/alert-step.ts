/*
 * Stage 3 of the run pipeline, the alert step: a stored run (or the round of several locations or
 * sequences it completes) moves the check's alert state on, compare-and-set, and the alerts that
 * raises are queued in the outbox in the same write, for the dispatcher to send. The alert tick
 * of a failing check and the certificate look step the same state through here.
 */
import type { AlertType } from '../model/alert-channel.js';
import type { CheckResult } from '../model/check-result.js';
import type { CheckSession } from '../model/check-session.js';
import type { NewOutboxMessage, OutboxLease, OutboxMessage } from '../ports/storage.js';
import { alertPayload } from '../rules/alert-payload.js';
import { channelWantsAlert, evaluateRun, evaluateSsl, evaluateTick, INITIAL_ALERT_STATE, type AlertState, type AlertStep as AlertStepOutcome } from '../rules/alerting.js';
import { incidentOpeningText, incidentResolvedText, incidentTriggerAction } from '../rules/incident-trigger.js';
import { ALERT_TICK_MS, alertTickEntry, runLocations } from '../rules/schedule-plan.js';
import { isFinalSessionStatus } from '../rules/transitions.js';
import type { CheckForRun } from '../services/checks.js';
import type { ServiceDeps } from '../services/deps.js';
import type { MaintenanceWindowService } from '../services/maintenance-windows.js';
import type { StatusPageIncidentService } from '../services/status-page-incidents.js';
import type { AlertDispatcher, ChannelsOf } from './dispatcher.js';
import type { EngineInstruments } from './instruments.js';
import { storedSlotResult } from './result-sink.js';
import { hashedUuid, maintenanceEffect, STATE_TRIES, type RunSpec } from './run-spec.js';

/**
 * How many runs a check's alert state remembers having taken in. A stored run is finished again
 * (by the process that takes its entry over) within about a lease of being taken in; 32 covers a
 * two-minute lease of a check run every 10 s, with room for its sessions.
 */
const RECENT_RUNS = 32;

/** What the alert step is given. */
export interface AlertStepCollaborators {
  deps: ServiceDeps;
  maintenanceWindows: MaintenanceWindowService;
  /** Opens and resolves the incidents of checks with triggerIncident. */
  incidents: Pick<StatusPageIncidentService, 'create' | 'addUpdate'>;
  meter: EngineInstruments;
  /** This process's dispatcher, which sends the alerts queued here without waiting for its next poll. */
  dispatcher?: AlertHandOver | undefined;
}

/**
 * What the alert step asks of this process's dispatcher: the terms on which it takes the alerts a
 * step queues straight from the step's write (null: not now), the channels of those alerts (read
 * while the write runs), and then those alerts, with the ones the write leased to it.
 */
export type AlertHandOver = Pick<AlertDispatcher, 'leaseTerms' | 'channelsFor' | 'queued' | 'release'>;

/** A plan for one step of a check's alert state: the next state and the alerts it queues (null: nothing to do). */
export type AlertPlan = (stored: AlertState | null) => Promise<{ next: AlertState; messages: NewOutboxMessage[] } | null>;

/** The outbox id of a run's alert to one channel: a repeat of the run's alert step queues it once. */
function runAlertId(runId: string, alertType: string, alertChannelId: number): string {
  return hashedUuid(`alert|${runId}|${alertType}|${alertChannelId}`);
}

/**
 * What the alert state records as taken in: the run, or for a round of several locations (or of a
 * session's sequences) the round itself, so that two of its runs finishing together and both
 * seeing it complete take it in once.
 */
function roundId(spec: RunSpec, checkId: string, round: readonly CheckResult[], runId: string): string {
  if (round.length < 2) return runId;
  return hashedUuid(`round|${checkId}|${spec.session?.checkSessionId ?? spec.dueAt.toISOString()}`);
}

/** The newest result of each location. */
function latestPerLocation(results: readonly CheckResult[]): CheckResult[] {
  const byLocation = new Map<string, CheckResult>();
  for (const r of results) {
    const seen = byLocation.get(r.runLocation);
    if (!seen || r.startedAt > seen.startedAt) byLocation.set(r.runLocation, r);
  }
  return [...byLocation.values()];
}

export class AlertStep {
  /** The alert step under way of each check in this process: the next waits for it. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly c: AlertStepCollaborators) {}

  private get deps() {
    return this.c.deps;
  }

  /**
   * Takes a stored run in: the round it belongs to (once that is complete) moves the alert state
   * on and queues its alerts. Runs, rounds and repeats of one are each taken in once.
   */
  async takeIn(spec: RunSpec, forRun: CheckForRun, result: CheckResult, session: CheckSession | null, silenced: boolean): Promise<void> {
    const checkId = forRun.check.id;
    await this.withCheckLock(checkId, async () => {
      const round = await this.round(spec, forRun, result, session);
      if (round) await this.alert(spec.accountId, forRun, round, silenced, roundId(spec, checkId, round, result.id));
    });
  }

  /** One step of a check's alert state after this process's previous one (see stepAlertState). */
  step(accountId: string, checkId: string, plan: AlertPlan): Promise<void> {
    return this.withCheckLock(checkId, () => this.stepAlertState(accountId, checkId, plan));
  }

  /** One tick of a failing or degraded check; answers when the next is due (null: no more ticks). */
  async tick(accountId: string, forRun: CheckForRun): Promise<Date | null> {
    const { storage, clock } = this.deps;
    const check = forRun.check;
    const now = clock.now();
    // A deactivated check (or one in a deactivated group) has no ticks: one a run under way when it
    // was deactivated put back ends here. Reactivated while failing, it gets its tick back.
    if (!forRun.activated) return null;
    let keepTicking = false;
    await this.step(accountId, check.id, async (state) => {
      keepTicking = state !== null && state.status !== 'PASSING';
      if (!state || state.status === 'PASSING') return null;
      const effect = await maintenanceEffect(this.c.maintenanceWindows, accountId, forRun, now);
      const step = evaluateTick(state, { settings: check.alertSettings, runParallel: check.runParallel, muted: forRun.muted, silenced: effect.silenced, now });
      const [last] = step.raised.length > 0
        ? (await storage.checkResults.listByCheck(accountId, check.id, { limit: 1, offset: 0, resultType: 'FINAL', countTotal: false })).items
        : [];
      const incidentId = await this.followIncident(accountId, forRun, state, step, effect.silenced, last ?? null);
      const next = incidentId === (step.state.incidentId ?? null) ? step.state : { ...step.state, incidentId };
      if (next === state) return null;
      return { next, messages: last ? await alertMessages(this.deps, accountId, forRun, last, next, step.alerts, now) : [] };
    });
    return keepTicking ? new Date(now.getTime() + ALERT_TICK_MS) : null;
  }

  /**
   * The results the alert state machine looks at for this run: the run alone, or with runParallel
   * in several locations, the whole round once its last location reported (null before that).
   */
  private async round(spec: RunSpec, forRun: CheckForRun, result: CheckResult, session: CheckSession | null): Promise<CheckResult[] | null> {
    const check = forRun.check;
    const { storage } = this.deps;
    if (session && session.sequences.length > 1) {
      if (!isFinalSessionStatus(session.status)) return null;
      const page = await storage.checkResults.listByCheck(spec.accountId, check.id, {
        limit: 100, offset: 0, checkSessionId: session.checkSessionId, resultType: 'FINAL', countTotal: false,
      });
      // A cancelled sequence's run tells nothing of the check: the round is its other sequences'.
      const kept = new Set(session.sequences.filter((s) => s.status !== 'CANCELLED').map((s) => s.sequenceId));
      const round = latestPerLocation(page.items.filter((r) => r.sequenceId !== null && kept.has(r.sequenceId)));
      return round.length > 0 ? round : null;
    }
    if (spec.session || !check.runParallel || check.checkType === 'HEARTBEAT') return [result];
    const locations = runLocations(check, forRun.group, this.deps.defaultLocation);
    if (locations.length < 2) return [result];
    // The slot's results by their ids: a run taken over late or retried may start after the period.
    const ofSlot: CheckResult[] = [];
    for (const location of locations) {
      const final = location === spec.location ? result : await storedSlotResult(storage, spec.accountId, check.id, location, spec.dueAt);
      if (final) ofSlot.push(final);
    }
    // The location that completes the round evaluates it; earlier ones wait for it.
    if (ofSlot.length < locations.length || !ofSlot.some((r) => r.id === result.id)) return null;
    return ofSlot;
  }

  private async alert(accountId: string, forRun: CheckForRun, round: CheckResult[], silenced: boolean, runId: string): Promise<void> {
    const check = forRun.check;
    // What the alert tells: the round's failing run if there is one, else its last.
    const result = round.find((r) => r.hasFailures || r.hasErrors) ?? round[round.length - 1]!;
    await this.stepAlertState(accountId, check.id, async (stored) => {
      const now = this.deps.clock.now();
      const previous = stored ?? INITIAL_ALERT_STATE;
      if (previous.lastRunId === runId || previous.recentRunIds?.includes(runId)) return null;
      const step = evaluateRun(previous, round.length === 1 ? round[0]! : round, {
        settings: check.alertSettings, runParallel: check.runParallel, muted: forRun.muted, silenced, now,
      });
      let state: AlertState = { ...step.state, incidentId: await this.followIncident(accountId, forRun, previous, step, silenced, result) };
      const alerts: AlertType[] = [...step.alerts];
      const ssl = evaluateSsl(state, result.sslDaysRemaining, now);
      if (ssl.alert && !forRun.muted && !silenced) {
        state = ssl.state;
        alerts.push('ALERT_SSL');
      }
      state = { ...state, lastRunId: runId, recentRunIds: [...(previous.recentRunIds ?? []), runId].slice(-RECENT_RUNS) };
      // The tick's entry (a write) and the channels' read are independent: neither waits for the other.
      const [, messages] = await Promise.all([
        this.planTick(accountId, check.id, previous.status, state.status, now),
        alertMessages(this.deps, accountId, forRun, result, state, alerts, now, result.sslDaysRemaining ?? null, runId),
      ]);
      return { next: state, messages };
    });
  }

  /**
   * One step of a check's alert state, race-free: `plan` looks at the stored state and answers the
   * next one and the alerts it raises (null: nothing to do), which are stored and queued together
   * only while the state is still the one it looked at; else it looks again. Several processes
   * finishing runs of one check at once so take them in one after the other, each alert once.
   */
  private async stepAlertState(accountId: string, checkId: string, plan: AlertPlan): Promise<void> {
    const { storage } = this.deps;
    const states = storage.alertStates;
    for (let tries = 0; tries < STATE_TRIES; tries++) {
      const stored = await states.get(accountId, checkId);
      const planned = await plan(stored);
      if (!planned) return;
      const { next, messages } = planned;
      // Where the store can, what may go now is leased to this process's dispatcher in the same
      // write and handed to it: no claim (another write) stands between the step and the send.
      const dispatcher = this.c.dispatcher;
      const terms = messages.length > 0 && states.transitionAndLease ? dispatcher?.leaseTerms(messages.length) ?? null : null;
      // The channels of the alerts the write may lease (as many as the terms allow) are read, and
      // their secrets opened, while the write runs; any other is read when it is sent.
      const channels = terms ? dispatcher!.channelsFor(messages.slice(0, terms.limit)) : undefined;
      let leased: OutboxMessage[] | null;
      try {
        leased = terms
          ? await states.transitionAndLease!(accountId, checkId, stored, next, messages, terms)
          : (await states.transition(accountId, checkId, stored, next, messages)) ? [] : null;
      } catch (err) {
        if (terms) dispatcher!.release(terms);
        throw err;
      }
      if (leased) {
        this.queued(accountId, checkId, messages, leased, terms, channels);
        return;
      }
      if (terms) dispatcher!.release(terms);
    }
    throw new Error(`the alert state of check ${checkId} kept changing under this run (${STATE_TRIES} tries)`);
  }

  /**
   * Opens or resolves the status-page incident of the check's triggerIncident for this alert step
   * and answers the id of the incident the episode now has open. A missing service or a failing
   * store is logged and skipped: the run and its alerts go on without the incident.
   */
  private async followIncident(
    accountId: string,
    forRun: CheckForRun,
    previous: AlertState,
    step: AlertStepOutcome,
    silenced: boolean,
    result: CheckResult | null,
  ): Promise<string | null> {
    const { logger, storage } = this.deps;
    const check = forRun.check;
    const trigger = check.triggerIncident;
    const action = incidentTriggerAction(previous, step, { enabled: trigger != null, silenced });
    if (action.kind === 'NONE') return step.state.incidentId ?? null;
    if (action.kind === 'OPEN' && trigger) {
      try {
        const entry = await this.c.incidents.create(accountId, {
          name: trigger.name,
          serviceIds: [trigger.serviceId],
          incidentUpdate: {
            description: incidentOpeningText(trigger.description, check.name, result?.errorMessage ?? null),
            notifySubscribers: trigger.notifySubscribers,
            status: 'INVESTIGATING',
          },
        });
        return entry.id;
      } catch (err) {
        logger.warn('incident trigger: could not open a status-page incident', {
          accountId, checkId: check.id, serviceId: trigger.serviceId, error: err instanceof Error ? err.message : String(err),
        });
        return null;
      }
    }
    if (action.kind === 'RESOLVE') {
      try {
        // Resolved or deleted by hand in the meantime: someone already closed it, add nothing.
        const incident = await storage.statusPageIncidents.get(accountId, action.incidentId);
        if (incident && incident.status !== 'RESOLVED') {
          await this.c.incidents.addUpdate(accountId, incident.id, {
            description: incidentResolvedText(check.name), status: 'RESOLVED', notifySubscribers: trigger?.notifySubscribers ?? false,
          });
        }
      } catch (err) {
        logger.warn('incident trigger: could not resolve a status-page incident', {
          accountId, checkId: check.id, incidentId: action.incidentId, error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    return null;
  }

  /**
   * A failing or degraded check is looked at again every minute between its runs, so time-based
   * escalation and reminders fire on time even when its runs are far apart. The tick is an entry of
   * the shared schedule, so one process handles it.
   */
  private async planTick(accountId: string, checkId: string, before: string, after: string, now: Date): Promise<void> {
    if (after === 'PASSING' || before !== 'PASSING') return;
    await this.deps.storage.schedule.upsert(alertTickEntry(accountId, checkId, now));
  }

  /** Counts and logs alerts just queued, and hands them to this process's dispatcher (or wakes it for those it must claim). */
  private queued(
    accountId: string,
    checkId: string,
    messages: readonly NewOutboxMessage[],
    leased: readonly OutboxMessage[],
    terms: OutboxLease | null,
    channels: ChannelsOf | undefined,
  ): void {
    if (messages.length === 0) return;
    for (const m of messages) this.c.meter.alertsQueued.inc({ alert_type: m.alertType });
    this.deps.logger.info('alerts: queued', {
      accountId, checkId, runId: (messages[0]!.payload as { checkResultId?: string | null }).checkResultId ?? null,
      alertTypes: [...new Set(messages.map((m) => m.alertType))], messages: messages.length,
    });
    this.c.dispatcher?.queued(messages, leased, terms, channels);
  }

  /** Runs fn after the previous alert step of the same check in this process has finished. */
  private async withCheckLock<T>(checkId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(checkId) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const settled = next.catch(() => {});
    this.locks.set(checkId, settled);
    try {
      return await next;
    } finally {
      if (this.locks.get(checkId) === settled) this.locks.delete(checkId);
    }
  }
}

/**
 * The outbox messages of a step's alerts: one per alert type and subscribed channel that wants it.
 * With `runId` (a run's alert step) their ids come from the run, so a repeat queues each once.
 */
export async function alertMessages(
  deps: Pick<ServiceDeps, 'storage' | 'ids'>,
  accountId: string,
  forRun: CheckForRun,
  result: CheckResult | null,
  state: AlertState,
  alerts: readonly AlertType[],
  now: Date,
  sslDaysRemaining: number | null = result?.sslDaysRemaining ?? null,
  runId?: string,
): Promise<NewOutboxMessage[]> {
  const { storage, ids } = deps;
  const check = forRun.check;
  if (alerts.length === 0) return [];
  const subscribed = new Set(check.alertChannelSubscriptions.filter((s) => s.activated).map((s) => s.alertChannelId));
  if (subscribed.size === 0) return [];
  const channels = (await storage.alertChannels.listAll(accountId)).filter((c) => subscribed.has(c.id));
  const messages = alerts.flatMap((alertType) =>
    channels
      .filter((c) => channelWantsAlert(c, alertType, sslDaysRemaining))
      .map((c) => ({
        id: runId ? runAlertId(runId, alertType, c.id) : ids.uuid(),
        accountId,
        checkId: check.id,
        alertChannelId: c.id,
        alertType,
        payload: alertPayload({
          check, groupName: forRun.group?.name ?? null, result, state, alertType, sslDaysRemaining, environment: forRun.environment, secrets: forRun.secrets,
        }),
        created_at: now.toISOString(),
        nextAttemptAt: now.toISOString(),
      })),
  );
  return messages;
}
