/*
 * The run pipeline: one check run with its attempts, then what it changes (result, status, error
 * group, session, alert state and outbox), and the engine's alert ticks and certificate looks that
 * write the same alert state. Still one file; its stages (attempts, result sink, alert step,
 * certificate look) are the seams along which it is to be split.
 */
import { createHash } from 'node:crypto';
import type { AlertType } from '../model/alert-channel.js';
import type { CheckResult } from '../model/check-result.js';
import type { CheckStatus } from '../model/check-status.js';
import type { CheckSession } from '../model/check-session.js';
import type { Check } from '../model/check.js';
import { probeCertificate, type CertificateProbe } from '../ports/certificate-probe.js';
import { runResult, type RunJob, type RunResult, type RunSource, type Runner } from '../ports/runner.js';
import { channelWantsAlert, evaluateRun, evaluateSsl, evaluateTick, INITIAL_ALERT_STATE, type AlertState, type AlertStep } from '../rules/alerting.js';
import { incidentOpeningText, incidentResolvedText, incidentTriggerAction } from '../rules/incident-trigger.js';
import { effectiveRetryStrategy, nextRetry } from '../rules/retry.js';
import { ALERT_TICK_MS, alertTickEntry, certificateTarget, nextDueIn, runLocations } from '../rules/schedule-plan.js';
import { servesLocation } from '../rules/schedule.js';
import { completeSequence, isFinalSessionStatus, startSequence } from '../rules/transitions.js';
import { changeSession } from '../services/check-sessions.js';
import type { CheckForRun, CheckService } from '../services/checks.js';
import { ClientCertificateService } from '../services/client-certificates.js';
import type { ServiceDeps } from '../services/deps.js';
import type { ErrorGroupService } from '../services/error-groups.js';
import type { MaintenanceWindowService } from '../services/maintenance-windows.js';
import type { NewOutboxMessage, ServedLocations, StoredRecord } from '../ports/storage.js';
import { SnippetService } from '../services/snippets.js';
import { StatusPageIncidentService } from '../services/status-page-incidents.js';
import { heartbeatRunner } from './heartbeat-runner.js';
import { RunGate } from './run-gate.js';
import { engineInstruments, runOutcomeLabel, type EngineInstruments } from './instruments.js';
import { scrubSecrets } from './scrub.js';
import { withTimeLimit } from './time-limit.js';

const SSL_EVERY_MS = 24 * 3_600_000;
/**
 * How often a race-free write of a check's state reads again when another run changed it
 * meanwhile: each round one writer wins, so N runs finishing at once (a runParallel check in every
 * location, in several processes) need up to N.
 */
const STATE_TRIES = 200;
/**
 * How many runs a check's alert state remembers having taken in. A stored run is finished again
 * (by the process that takes its entry over) within about a lease of being taken in; 32 covers a
 * two-minute lease of a check run every 10 s, with room for its sessions.
 */
const RECENT_RUNS = 32;
/** A certificate that could not be read is looked at again after this, not tomorrow. */
export const FAILED_CERTIFICATE_RETRY_MS = 3_600_000;

/** The abort reason of a run whose session sequence the user cancelled: its result is kept. */
export const CANCELLED = 'cancelled';
/** The abort reason of a run cut short because its process stops: nothing is kept, another process runs it. */
export const STOPPING = 'engine stopping';

export interface PipelineServices {
  deps: ServiceDeps;
  checks: CheckService;
  maintenanceWindows: MaintenanceWindowService;
  errorGroups: ErrorGroupService;
  /** Opens and resolves the incidents of checks with triggerIncident. Default: one on `deps`. */
  statusPageIncidents?: StatusPageIncidentService;
  /** Told when alerts were queued, so this process's dispatcher sends them without waiting for its next poll. */
  onAlertsQueued?: () => void;
  /** The locations this process runs: a retry in another region goes only to one of them. Default: all. */
  serves?: ServedLocations;
}

/** One run to make: a scheduled slot or a session's sequence. */
export interface RunSpec {
  accountId: string;
  checkId: string;
  location: string;
  dueAt: Date;
  runSource: RunSource;
  session?: { checkSessionId: string; sequenceId: string; projectId?: string | null; environment?: string | null } | undefined;
  /** When the run must be over, retries included (the lease of a scheduled slot). */
  mustEndBy?: Date | undefined;
  /** Told when the run starts and stops waiting for its runner's turn (the engine does not count it as running meanwhile). */
  onRunnerWait?: ((waiting: boolean) => void) | undefined;
}

export type RunOutcome =
  | { kind: 'ran'; result: CheckResult; forRun: CheckForRun }
  | { kind: 'skipped'; reason: 'gone' | 'inactive' | 'paused' | 'cancelled' | 'duplicate' | 'stopped' | 'busy'; forRun?: CheckForRun };

/**
 * The id of a scheduled slot's result: the same in every process, so a slot that a second process
 * runs again (the first died before it moved the schedule on) is stored once.
 */
export function slotResultId(checkId: string, location: string, dueAt: Date, attempt: number): string {
  return hashedUuid(`${checkId}|${location}|${dueAt.toISOString()}|${attempt}`);
}

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

function hashedUuid(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface PipelineOptions {
  /** Time limit of one attempt when the runner's type has none of its own. Default 30 s. */
  runTimeoutMs: number;
}

const isFailed = (r: RunResult) => r.hasFailures || r.hasErrors;

/** One attempt of a run, where it ran. */
interface Attempt {
  result: RunResult;
  startedAt: Date;
  stoppedAt: Date;
  runId: string;
  location: string;
}

/** The location after `current` in `places` (round robin); `current` itself when there is no other. */
function nextPlace(places: readonly string[], current: string): string {
  if (places.length === 0 || (places.length === 1 && places[0] === current)) return current;
  return places[(places.indexOf(current) + 1) % places.length]!;
}

function errorResult(message: string, kind: RunResult['failureKind'] = 'OTHER', hasErrors = true): RunResult {
  return runResult({ hasFailures: !hasErrors, hasErrors, errorMessage: message, failureKind: kind });
}

/** Resolves after `ms` on the clock, or at once when the signal aborts. */
function wait(deps: ServiceDeps, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const cancel = deps.clock.setTimer(new Date(deps.clock.now().getTime() + ms), done);
    function done() {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      cancel();
      done();
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs one check once (with its retries) and records everything a run changes: the result, the
 * check status, the error group, the session's progress, the alert state and the outbox.
 */
/** The detail that marks the errored result the engine stores for a session run it could not complete. */
const ENDED_BY_ENGINE = 'endedByEngine';

/** A session's sequence, if the session and the sequence are there. */
function sequenceOf(session: CheckSession | null, sequenceId: string) {
  return session?.sequences.find((s) => s.sequenceId === sequenceId);
}

/** How a sequence ends with its run's final result. */
function sequenceOutcome(result: CheckResult, run: RunResult): 'PASSED' | 'FAILED' | 'DEGRADED' | 'TIMED_OUT' {
  if (result.hasFailures || result.hasErrors) return run.failureKind === 'TIMEOUT' ? 'TIMED_OUT' : 'FAILED';
  return result.isDegraded ? 'DEGRADED' : 'PASSED';
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

export class RunPipeline {
  private readonly incidents: StatusPageIncidentService;
  private readonly certificates: ClientCertificateService;
  private readonly snippets: SnippetService;
  private readonly meter: EngineInstruments;
  /** Runners with a concurrency of their own, and the runs of theirs that go at once. */
  private readonly gates = new WeakMap<Runner, RunGate>();

  constructor(
    private readonly services: PipelineServices,
    private readonly options: PipelineOptions,
  ) {
    this.incidents = services.statusPageIncidents ?? new StatusPageIncidentService(services.deps);
    this.certificates = new ClientCertificateService(services.deps);
    this.snippets = new SnippetService(services.deps);
    this.meter = engineInstruments(services.deps.metrics);
  }

  private get deps() {
    return this.services.deps;
  }

  private runnerFor(checkType: string): Runner | undefined {
    if (checkType === 'HEARTBEAT') return this.deps.runners.get('HEARTBEAT') ?? heartbeatRunner(this.deps);
    return this.deps.runners.get(checkType);
  }

  /** The check's selected locations that this process runs, in their order: where a retry may go. */
  private retryPlaces(forRun: CheckForRun): string[] {
    const serves = this.services.serves;
    const all = runLocations(forRun.check, forRun.group, this.deps.defaultLocation);
    return serves ? all.filter((l) => servesLocation(serves, l)) : all;
  }

  /**
   * The next slot of a check in one location after `now`, for a slot whose run failed before it
   * could say: null when the check is gone or no longer runs there; a minute from now when the
   * check cannot be read either (the store is in trouble: the slot comes back soon).
   */
  async nextSlot(accountId: string, checkId: string, location: string, now: Date): Promise<Date | null> {
    try {
      const forRun = await this.forRunOrNull(accountId, checkId);
      if (!forRun) return null;
      return nextDueIn(forRun.check, runLocations(forRun.check, forRun.group, this.deps.defaultLocation), location, now);
    } catch {
      return new Date(now.getTime() + 60_000);
    }
  }

  /**
   * Ends a session's sequence that could not run to its end: an errored result naming the cause
   * (where the session is still there) and the sequence FAILED, so nobody waits on it.
   */
  async failSequence(accountId: string, ref: { checkSessionId: string; sequenceId: string }, location: string, message: string): Promise<void> {
    const { storage, clock, ids } = this.deps;
    const session = await storage.checkSessions.get(accountId, ref.checkSessionId);
    const sequence = session?.sequences.find((s) => s.sequenceId === ref.sequenceId);
    if (!session || !sequence || isFinalSessionStatus(sequence.status)) return;
    // Its run was stored before what failed: the sequence ends as that run did.
    const stored = await this.storedSequenceResult(accountId, session.checkId, ref);
    if (stored) {
      await this.completeSequence(accountId, ref, stored.hasFailures || stored.hasErrors ? 'FAILED' : stored.isDegraded ? 'DEGRADED' : 'PASSED');
      return;
    }
    const now = clock.now().toISOString();
    await storage.checkResults.insertMany(accountId, [{
      id: ids.uuid(), checkId: session.checkId, checkType: session.checkType, name: session.name, runLocation: location,
      startedAt: now, stoppedAt: now, created_at: now, responseTime: 0,
      hasFailures: false, hasErrors: true, isDegraded: false, overMaxResponseTime: false, attempts: 1, resultType: 'FINAL',
      runSource: session.runSource, checkSessionId: session.checkSessionId, sequenceId: ref.sequenceId,
      errorMessage: message, phases: {}, statusCode: null, sslDaysRemaining: null, details: { [ENDED_BY_ENGINE]: true },
    }]);
    await this.completeSequence(accountId, ref, 'FAILED');
  }

  /** The final result stored for a session's sequence, if any. */
  private async storedSequenceResult(accountId: string, checkId: string, ref: { checkSessionId: string; sequenceId: string }): Promise<CheckResult | null> {
    const page = await this.deps.storage.checkResults.listByCheck(accountId, checkId, {
      limit: 100, offset: 0, checkSessionId: ref.checkSessionId, resultType: 'FINAL',
    });
    return page.items.find((r) => r.sequenceId === ref.sequenceId) ?? null;
  }

  async run(spec: RunSpec, signal: AbortSignal): Promise<RunOutcome> {
    const outcome = await this.execute(spec, signal);
    // A cancelled run was made and stored: it is counted among the runs, not here.
    if (outcome.kind === 'skipped' && outcome.reason !== 'cancelled') this.meter.runsSkipped.inc({ reason: outcome.reason });
    return outcome;
  }

  private async execute(spec: RunSpec, signal: AbortSignal): Promise<RunOutcome> {
    const { deps } = this;
    let forRun: CheckForRun;
    try {
      forRun = await this.services.checks.getForRun(spec.accountId, spec.checkId);
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') return { kind: 'skipped', reason: 'gone' };
      throw err;
    }
    const check = forRun.check;
    const scheduled = spec.runSource === 'SCHEDULER';
    if (scheduled && !forRun.activated) return { kind: 'skipped', reason: 'inactive', forRun };
    const effect = await this.services.maintenanceWindows.activeEffect(
      spec.accountId,
      { tags: check.tags, groupTags: forRun.group?.tags ?? [] },
      deps.clock.now(),
    );
    if (scheduled && effect.paused) return { kind: 'skipped', reason: 'paused', forRun };

    // A process that stored this sequence's run and died before it ended the sequence: the run is
    // ended from what it stored, not run (and stored) a second time.
    if (spec.session && (await this.finishStoredSessionRun(spec, forRun, effect.silenced))) return { kind: 'skipped', reason: 'duplicate', forRun };
    if (spec.session) {
      const started = await this.markSequenceStarted(spec.accountId, spec.session);
      // Cancelled meanwhile (the cancel reached another process): nothing runs.
      if (sequenceOf(started, spec.session.sequenceId)?.status === 'CANCELLED') return { kind: 'skipped', reason: 'cancelled', forRun };
    }

    const startedAt = deps.clock.now();
    const strategy = effectiveRetryStrategy(check, forRun.group);
    const runner = this.runnerFor(check.checkType);
    const timeoutMs = runner?.timeoutMs ?? this.options.runTimeoutMs;
    const attempts: Attempt[] = [];
    const places = this.retryPlaces(forRun);
    let location = spec.location;
    for (let attempt = 1; ; attempt++) {
      // Where the runner has a concurrency of its own, the attempt starts once it is admitted.
      let attemptStart = deps.clock.now();
      // A slot's or a session sequence's attempt has one id in every process, so a run made again
      // after its process died is stored once (the second insert conflicts).
      const runId = scheduled ? slotResultId(check.id, spec.location, spec.dueAt, attempt)
        : spec.session ? hashedUuid(`session|${spec.session.sequenceId}|${attempt}`) : deps.ids.uuid();
      const result = runner
        ? await this.attempt(runner, {
          runId, accountId: spec.accountId, check, group: forRun.group, location, attempt,
          dueAt: spec.dueAt.toISOString(), runSource: spec.runSource,
          checkSessionId: spec.session?.checkSessionId ?? null, sequenceId: spec.session?.sequenceId ?? null,
          environment: {
            ...forRun.environment,
            VIGIL_RUN_SOURCE: spec.runSource,
            // CI=true only for the runs of a test session (docs/decisions.md, scripts).
            ...(spec.session?.projectId ? { CI: 'true' } : {}),
          },
          secrets: forRun.secrets, timeoutMs,
          clientCertificates: this.certificates.lookupFor(spec.accountId),
          snippets: this.snippets.lookupFor(spec.accountId),
          ...(deps.targetPolicy ? { targetPolicy: deps.targetPolicy } : {}),
        }, signal, spec, (at) => (attemptStart = at))
        : errorResult(`No runner for check type ${check.checkType} is registered in this process`);
      if (result === null) {
        // The runner had no turn free while the slot's lease still covered an attempt. A slot
        // without a free runner tells nothing about the check: it is skipped, not failed.
        deps.logger.warn('run: skipped, no runner of its type was free in time', {
          accountId: spec.accountId, checkId: check.id, checkType: check.checkType, location: spec.location, dueAt: spec.dueAt.toISOString(), attempt,
        });
        if (attempts.length === 0) return { kind: 'skipped', reason: 'busy', forRun };
        break;
      }
      attempts.push({ result, startedAt: attemptStart, stoppedAt: deps.clock.now(), runId, location });
      if (!isFailed(result) || signal.aborted) break;
      const elapsedMs = deps.clock.now().getTime() - startedAt.getTime();
      const decision = nextRetry(strategy, { retriesSoFar: attempt - 1, elapsedMs, failureKind: result.failureKind ?? 'OTHER' });
      if (!decision.retry) break;
      // A retry that could not finish inside the lease would let another process run the slot too.
      const retryEnds = deps.clock.now().getTime() + decision.delayMs + timeoutMs;
      if (spec.mustEndBy && retryEnds > spec.mustEndBy.getTime()) break;
      await wait(deps, decision.delayMs, signal);
      if (signal.aborted) break;
      // sameRegion false (and doubleCheck): the retry goes to the next selected location. With
      // runParallel every location runs the slot already, so a retry stays where it failed.
      if (!decision.sameRegion && !check.runParallel) location = nextPlace(places, location);
    }

    // A run cut short because this process stops (or its lease ran out) tells nothing about the
    // check: nothing is stored and its entry stays due, for the next process to run. Only a
    // session's run that the user cancelled is kept.
    const cancelled = signal.aborted && spec.session !== undefined && signal.reason === CANCELLED;
    if (signal.aborted && !cancelled) return { kind: 'skipped', reason: 'stopped', forRun };
    const rows = attempts.map((a, i) => this.toResult(spec, check, a, i + 1, i === attempts.length - 1 ? 'FINAL' : 'ATTEMPT', forRun.secrets));
    try {
      await deps.storage.checkResults.insertMany(spec.accountId, rows);
    } catch (err) {
      if ((err as { code?: string }).code !== 'CONFLICT') throw err;
      // Another process (or this one, before the store went away) stored this slot or sequence
      // first (a batch is stored whole, so its final result is there). If it died before it took
      // the run in, that is done now, from the stored result.
      if (spec.session) {
        if (!(await this.finishStoredSessionRun(spec, forRun, effect.silenced))) throw err;
      } else {
        await this.finishStoredRun(spec, forRun, effect.silenced);
      }
      return { kind: 'skipped', reason: 'duplicate', forRun };
    }
    const final = rows[rows.length - 1]!;
    const stored = { ...final, accountId: spec.accountId } as CheckResult;
    this.recordRun(spec, check, final, startedAt, attempts.length, cancelled);
    if (cancelled) {
      // A cancelled run is kept as a result but changes no status and raises no alert.
      return { kind: 'skipped', reason: 'cancelled', forRun };
    }
    // A session's sequence ends first: one cancelled while its run went on elsewhere keeps the
    // result but changes no status and raises no alert.
    const session = spec.session
      ? await this.completeSequence(spec.accountId, spec.session, sequenceOutcome(stored, attempts[attempts.length - 1]!.result))
      : null;
    if (spec.session && sequenceOf(session, spec.session.sequenceId)?.status === 'CANCELLED') return { kind: 'skipped', reason: 'cancelled', forRun };
    await this.updateStatus(spec.accountId, check, stored);
    if (final.errorMessage && isFailed(attempts[attempts.length - 1]!.result)) {
      await this.services.errorGroups.recordOccurrence(spec.accountId, check.id, final.errorMessage, final.stoppedAt);
      if (spec.session?.projectId) {
        await this.services.errorGroups.recordTestSessionOccurrence(spec.accountId, {
          projectId: spec.session.projectId,
          environment: spec.session.environment ?? null,
          raw: final.errorMessage,
          at: final.stoppedAt,
          pwtMetadata: {
            projectName: spec.session.projectId,
            testFile: (check as { scriptPath?: string | null }).scriptPath || check.name,
            testTitle: check.name,
            suitePath: forRun.group ? [forRun.group.name] : [],
          },
        });
      }
    }
    await this.withCheckLock(check.id, async () => {
      const round = await this.round(spec, forRun, stored, session);
      if (round) await this.alert(spec.accountId, forRun, round, effect.silenced, roundId(spec, check.id, round, stored.id));
    });
    return { kind: 'ran', result: stored, forRun };
  }

  /** The status and alert step of a slot's stored run (each takes it in once), which its process may not have reached. */
  private async finishStoredRun(spec: RunSpec, forRun: CheckForRun, silenced: boolean): Promise<void> {
    if (spec.session) return;
    const final = await this.storedSlotResult(spec.accountId, forRun.check.id, spec.location, spec.dueAt);
    if (!final) return;
    // Its process may have died before it wrote the check's status too (written again, it stays).
    await this.updateStatus(spec.accountId, forRun.check, final);
    await this.withCheckLock(forRun.check.id, async () => {
      const round = await this.round(spec, forRun, final, null);
      if (round) await this.alert(spec.accountId, forRun, round, silenced, roundId(spec, forRun.check.id, round, final.id));
    });
  }

  /** The final result of a slot in one location, found by its ids (null while it has none). */
  private async storedSlotResult(accountId: string, checkId: string, location: string, dueAt: Date): Promise<CheckResult | null> {
    for (let attempt = 1; ; attempt++) {
      const stored = await this.deps.storage.checkResults.get(accountId, slotResultId(checkId, location, dueAt, attempt));
      if (!stored || stored.resultType === 'FINAL') return stored;
    }
  }

  /**
   * A session's sequence that ended, whose entry a process that died left behind: the alert step
   * of its stored result (taken in once), which that process may not have reached. Nothing runs.
   */
  async finishEndedSessionRun(spec: RunSpec): Promise<void> {
    const forRun = await this.forRunOrNull(spec.accountId, spec.checkId);
    if (!forRun) return;
    const check = forRun.check;
    const effect = await this.services.maintenanceWindows.activeEffect(spec.accountId, { tags: check.tags, groupTags: forRun.group?.tags ?? [] }, this.deps.clock.now());
    await this.finishStoredSessionRun(spec, forRun, effect.silenced);
  }

  /**
   * Ends a session's sequence from its stored final result, if there is one: the check's status,
   * the sequence and the alert step, each of which the process that stored it may not have reached
   * (each takes it in once). Answers whether there was one.
   */
  private async finishStoredSessionRun(spec: RunSpec, forRun: CheckForRun, silenced: boolean): Promise<boolean> {
    const ref = spec.session!;
    const check = forRun.check;
    const stored = await this.storedSequenceResult(spec.accountId, check.id, ref);
    if (!stored) return false;
    // The engine's own record of a run that could not be completed tells nothing of the check.
    if (stored.details?.[ENDED_BY_ENGINE]) return true;
    await this.updateStatus(spec.accountId, check, stored);
    // A stored result no longer says what kind of failure it was: a timeout ends FAILED here.
    const outcome = stored.hasFailures || stored.hasErrors ? 'FAILED' : stored.isDegraded ? 'DEGRADED' : 'PASSED';
    const session = await this.completeSequence(spec.accountId, ref, outcome);
    await this.withCheckLock(check.id, async () => {
      const round = await this.round(spec, forRun, stored, session);
      if (round) await this.alert(spec.accountId, forRun, round, silenced, roundId(spec, check.id, round, stored.id));
    });
    return true;
  }

  /** Counts a stored run and logs it; the error message was scrubbed of the check's secrets already. */
  private recordRun(spec: RunSpec, check: Check, final: Omit<CheckResult, 'accountId'>, startedAt: Date, attempts: number, cancelled: boolean): void {
    const outcome = runOutcomeLabel(final, cancelled);
    const where = { check_type: check.checkType, location: spec.location };
    const durationMs = Math.max(0, Date.parse(final.stoppedAt) - startedAt.getTime());
    this.meter.runs.inc({ ...where, outcome });
    this.meter.runDuration.observe({ ...where, outcome }, durationMs / 1000);
    if (attempts > 1) this.meter.runRetries.inc(where, attempts - 1);
    this.deps.logger.debug('run: finished', {
      accountId: spec.accountId, checkId: check.id, runId: final.id, checkType: check.checkType, location: spec.location,
      runSource: spec.runSource, checkSessionId: final.checkSessionId, sequenceId: final.sequenceId,
      outcome, attempts, durationMs, responseTime: final.responseTime, errorMessage: final.errorMessage,
    });
  }

  private gateOf(runner: Runner): RunGate | null {
    if (runner.concurrency === undefined || !(runner.concurrency >= 1)) return null;
    let gate = this.gates.get(runner);
    if (!gate) this.gates.set(runner, (gate = new RunGate(Math.floor(runner.concurrency))));
    return gate;
  }

  /**
   * One attempt: waits for the runner's turn where it has a concurrency of its own (not past
   * `mustEndBy` less the attempt's time limit, so the lease still covers it; null when that
   * passed first), then runs it within its time limit.
   */
  private async attempt(runner: Runner, job: RunJob, outer: AbortSignal, spec: RunSpec, admitted: (at: Date) => void): Promise<RunResult | null> {
    const gate = this.gateOf(runner);
    if (!gate) return this.timedAttempt(runner, job, outer);
    const clock = this.deps.clock;
    const deadline = spec.mustEndBy ? spec.mustEndBy.getTime() - job.timeoutMs : undefined;
    const waits = gate.active >= gate.limit;
    if (waits) spec.onRunnerWait?.(true);
    const entering = gate.enter(outer, (ms, done) => clock.setTimer(new Date(clock.now().getTime() + ms), done), deadline, clock.now().getTime());
    const release = waits ? await entering.finally(() => spec.onRunnerWait?.(false)) : await entering;
    // Null: no turn before the lease ran short (the caller skips the slot).
    if (!release) return outer.aborted ? errorResult('The run was cancelled', 'TIMEOUT', false) : null;
    admitted(clock.now());
    try {
      return await this.timedAttempt(runner, job, outer);
    } finally {
      release();
    }
  }

  private async timedAttempt(runner: Runner, job: RunJob, outer: AbortSignal): Promise<RunResult> {
    try {
      // A runner that ignores the signal still loses the race against its time limit.
      return await withTimeLimit(this.deps.clock, job.timeoutMs, (signal) => runner.run(job, signal), (cancelled) => errorResult(
        cancelled ? 'The run was cancelled' : `The run did not finish within its time limit of ${Math.round(job.timeoutMs / 1000)} s`,
        'TIMEOUT',
        false,
      ), outer);
    } catch (err) {
      // A runner's own error may quote what it was given, secrets included.
      this.deps.logger.warn('runner threw', {
        accountId: job.accountId, checkId: job.check.id, runId: job.runId, checkType: job.check.checkType, location: job.location, attempt: job.attempt,
        error: scrubSecrets(err instanceof Error ? err.message : String(err), job.secrets),
      });
      return errorResult(`The runner failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private toResult(
    spec: RunSpec,
    check: Check,
    a: Attempt,
    attempts: number,
    resultType: 'FINAL' | 'ATTEMPT',
    secrets: readonly string[],
  ): Omit<CheckResult, 'accountId'> {
    const r = a.result;
    return {
      id: a.runId,
      checkId: check.id,
      checkType: check.checkType,
      name: check.name,
      runLocation: a.location,
      startedAt: a.startedAt.toISOString(),
      stoppedAt: a.stoppedAt.toISOString(),
      created_at: a.stoppedAt.toISOString(),
      responseTime: Math.max(0, r.responseTime),
      hasFailures: r.hasFailures,
      hasErrors: r.hasErrors,
      isDegraded: r.isDegraded,
      overMaxResponseTime: r.overMaxResponseTime,
      attempts,
      resultType,
      runSource: spec.runSource,
      checkSessionId: spec.session?.checkSessionId ?? null,
      sequenceId: spec.session?.sequenceId ?? null,
      errorMessage: r.errorMessage === null ? null : scrubSecrets(r.errorMessage, secrets),
      phases: r.phases,
      statusCode: r.statusCode ?? null,
      sslDaysRemaining: r.sslDaysRemaining ?? null,
      details: r.details || r.assertions
        ? (JSON.parse(scrubSecrets(JSON.stringify({ ...(r.details ?? {}), ...(r.assertions ? { assertions: r.assertions } : {}) }), secrets, true)) as Record<string, unknown>)
        : null,
    };
  }

  /** The check's status after a run, race-free: runs of one check finishing at once each count. */
  private async updateStatus(accountId: string, check: Check, result: CheckResult): Promise<void> {
    const storage = this.deps.storage;
    const rt = result.responseTime;
    for (let tries = 0; tries < STATE_TRIES; tries++) {
      const previous = await storage.checkStatuses.get(accountId, check.id);
      // A run that started before the stored one's (it finished later) only widens the extremes.
      const older = previous?.updated_at != null && previous.updated_at > result.stoppedAt;
      const extremes = {
        longestRun: previous?.longestRun == null ? rt : Math.max(previous.longestRun, rt),
        shortestRun: previous?.shortestRun == null ? rt : Math.min(previous.shortestRun, rt),
      };
      const { accountId: _a, ...kept } = previous ?? ({} as CheckStatus);
      const next = older ? { ...kept, ...extremes } as StoredRecord<CheckStatus> : {
        name: check.name,
        checkId: check.id,
        hasFailures: result.hasFailures,
        hasErrors: result.hasErrors,
        isDegraded: result.isDegraded,
        ...extremes,
        lastRunLocation: result.runLocation,
        lastCheckRunId: result.id,
        sslDaysRemaining: result.sslDaysRemaining,
        created_at: previous?.created_at ?? result.stoppedAt,
        updated_at: result.stoppedAt,
      };
      if (await storage.checkStatuses.replace(accountId, previous, next)) return;
    }
    throw new Error(`the status of check ${check.id} kept changing under this run (${STATE_TRIES} tries)`);
  }

  private readonly locks = new Map<string, Promise<unknown>>();

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

  /**
   * The results the alert state machine looks at for this run: the run alone, or with runParallel
   * in several locations, the whole round once its last location reported (null before that).
   */
  private async round(spec: RunSpec, forRun: CheckForRun, result: CheckResult, session: CheckSession | null): Promise<CheckResult[] | null> {
    const check = forRun.check;
    if (session && session.sequences.length > 1) {
      if (!isFinalSessionStatus(session.status)) return null;
      const page = await this.deps.storage.checkResults.listByCheck(spec.accountId, check.id, {
        limit: 100, offset: 0, checkSessionId: session.checkSessionId, resultType: 'FINAL',
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
      const final = location === spec.location ? result : await this.storedSlotResult(spec.accountId, check.id, location, spec.dueAt);
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
      await this.planTick(accountId, check.id, previous.status, state.status, now);
      return { next: state, messages: await this.alertMessages(accountId, forRun, result, state, alerts, now, result.sslDaysRemaining ?? null, runId) };
    });
  }

  /**
   * One step of a check's alert state, race-free: `plan` looks at the stored state and answers the
   * next one and the alerts it raises (null: nothing to do), which are stored and queued together
   * only while the state is still the one it looked at; else it looks again. Several processes
   * finishing runs of one check at once so take them in one after the other, each alert once.
   */
  private async stepAlertState(
    accountId: string,
    checkId: string,
    plan: (stored: AlertState | null) => Promise<{ next: AlertState; messages: NewOutboxMessage[] } | null>,
  ): Promise<void> {
    const { storage } = this.deps;
    for (let tries = 0; tries < STATE_TRIES; tries++) {
      const stored = await storage.alertStates.get(accountId, checkId);
      const planned = await plan(stored);
      if (!planned) return;
      if (await storage.alertStates.transition(accountId, checkId, stored, planned.next, planned.messages)) {
        this.queued(accountId, checkId, planned.messages);
        return;
      }
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
    step: AlertStep,
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
        const entry = await this.incidents.create(accountId, {
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
          await this.incidents.addUpdate(accountId, incident.id, {
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

  /** The check with what a run needs, or null when it was deleted. */
  private async forRunOrNull(accountId: string, checkId: string): Promise<CheckForRun | null> {
    try {
      return await this.services.checks.getForRun(accountId, checkId);
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  /** One tick of a failing or degraded check; answers when the next is due (null: no more ticks). */
  async tick(accountId: string, checkId: string): Promise<Date | null> {
    const { storage, clock } = this.deps;
    const forRun = await this.forRunOrNull(accountId, checkId);
    if (!forRun) return null;
    const now = clock.now();
    let keepTicking = false;
    await this.withCheckLock(checkId, () => this.stepAlertState(accountId, checkId, async (state) => {
      keepTicking = state !== null && state.status !== 'PASSING';
      if (!state || state.status === 'PASSING') return null;
      const check = forRun.check;
      const effect = await this.services.maintenanceWindows.activeEffect(accountId, { tags: check.tags, groupTags: forRun.group?.tags ?? [] }, now);
      const step = evaluateTick(state, { settings: check.alertSettings, runParallel: check.runParallel, muted: forRun.muted, silenced: effect.silenced, now });
      const [last] = step.raised.length > 0
        ? (await storage.checkResults.listByCheck(accountId, checkId, { limit: 1, offset: 0, resultType: 'FINAL' })).items
        : [];
      const incidentId = await this.followIncident(accountId, forRun, state, step, effect.silenced, last ?? null);
      const next = incidentId === (step.state.incidentId ?? null) ? step.state : { ...step.state, incidentId };
      if (next === state) return null;
      return { next, messages: last ? await this.alertMessages(accountId, forRun, last, next, step.alerts, now) : [] };
    }));
    return keepTicking ? new Date(now.getTime() + ALERT_TICK_MS) : null;
  }

  /**
   * The daily certificate look of a check (its `@ssl` schedule entry): reads when the certificate
   * of its domain expires and alerts the channels with sslExpiry whose threshold it is under, at
   * most once a day. Answers when to look again (null: the check no longer watches a certificate).
   */
  async certificate(accountId: string, checkId: string): Promise<Date | null> {
    const { clock, storage } = this.deps;
    const probe = this.deps.certificateProbe;
    const forRun = await this.forRunOrNull(accountId, checkId);
    if (!forRun) return null;
    const target = certificateTarget(forRun.check);
    if (!target) return null;
    const started = clock.now();
    if (!probe) return new Date(started.getTime() + SSL_EVERY_MS);
    const read = await this.readExpiry(probe, { accountId, checkId, ...target }, started);
    if ('lookAgainAt' in read) return read.lookAgainAt;
    const { expiresAt } = read;
    const now = clock.now();
    const days = Math.floor((expiresAt.getTime() - now.getTime()) / 86_400_000);
    const check = forRun.check;
    const effect = await this.services.maintenanceWindows.activeEffect(accountId, { tags: check.tags, groupTags: forRun.group?.tags ?? [] }, now);
    if (forRun.muted || effect.silenced) return new Date(started.getTime() + SSL_EVERY_MS);
    await this.withCheckLock(checkId, () => this.stepAlertState(accountId, checkId, async (stored) => {
      const ssl = evaluateSsl(stored ?? INITIAL_ALERT_STATE, days, now);
      if (!ssl.alert) return null;
      return { next: ssl.state, messages: await this.alertMessages(accountId, forRun, null, ssl.state, ['ALERT_SSL'], now, days) };
    }));
    return new Date(started.getTime() + SSL_EVERY_MS);
  }

  /**
   * When a check's certificate expires, read under the host's target policy; or, when it could
   * not be read, when to look again. The logs name the check, its domain and why, nothing else.
   */
  private async readExpiry(
    probe: CertificateProbe,
    target: { accountId: string; checkId: string; host: string; port: number },
    started: Date,
  ): Promise<{ expiresAt: Date } | { lookAgainAt: Date }> {
    const { accountId, checkId, host, port } = target;
    const { logger } = this.deps;
    try {
      const read = await probeCertificate(probe, this.deps.targetPolicy, host, port, AbortSignal.timeout(this.options.runTimeoutMs));
      if (read.expiresAt) return { expiresAt: read.expiresAt };
      // Nothing was connected. The domain's addresses will not leave the refused range within
      // the hour, so the next look is the daily one.
      logger.warn('certificates: the target policy refused a certificate look', { accountId, checkId, host, address: read.refusal.address, reason: read.refusal.reason });
      return { lookAgainAt: new Date(started.getTime() + SSL_EVERY_MS) };
    } catch (err) {
      // Unreachable now: look again in an hour rather than tomorrow.
      logger.warn('certificates: could not read a certificate', { accountId, checkId, host, error: err instanceof Error ? err.message : String(err) });
      return { lookAgainAt: new Date(started.getTime() + FAILED_CERTIFICATE_RETRY_MS) };
    }
  }

  /** The outbox messages of a step's alerts: one per alert type and subscribed channel that wants it. */
  private async alertMessages(
    accountId: string,
    forRun: CheckForRun,
    result: CheckResult | null,
    state: AlertState,
    alerts: readonly AlertType[],
    now: Date,
    sslDaysRemaining: number | null = result?.sslDaysRemaining ?? null,
    runId?: string,
  ): Promise<NewOutboxMessage[]> {
    const { storage, ids } = this.deps;
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
          payload: {
            alertType,
            checkId: check.id,
            checkName: check.name,
            checkType: check.checkType,
            checkResultId: result?.id ?? null,
            errorMessage: result?.errorMessage ?? null,
            groupName: forRun.group?.name ?? null,
            runLocation: result?.runLocation ?? null,
            responseTime: result?.responseTime ?? null,
            startedAt: result?.startedAt ?? null,
            failingSince: state.failingSince,
            tags: check.tags,
            isReminder: alertType === 'ALERT_FAILURE_REMAIN',
            reminderSequence: alertType === 'ALERT_FAILURE_REMAIN' ? state.remindersSent : 0,
            sslCheckDomain: certificateTarget(check)?.host ?? null,
            sslDaysRemaining,
            // The check's variables for webhook templates; secret ones never leave the run.
            variables: Object.fromEntries(Object.entries(forRun.environment).filter(([, value]) => !forRun.secrets.includes(value))),
          },
          created_at: now.toISOString(),
          nextAttemptAt: now.toISOString(),
        })),
    );
    return messages;
  }

  /** Counts and logs alerts just queued, and wakes this process's dispatcher. */
  private queued(accountId: string, checkId: string, messages: readonly NewOutboxMessage[]): void {
    if (messages.length === 0) return;
    for (const m of messages) this.meter.alertsQueued.inc({ alert_type: m.alertType });
    this.deps.logger.info('alerts: queued', {
      accountId, checkId, runId: (messages[0]!.payload as { checkResultId?: string | null }).checkResultId ?? null,
      alertTypes: [...new Set(messages.map((m) => m.alertType))], messages: messages.length,
    });
    this.services.onAlertsQueued?.();
  }

  private markSequenceStarted(accountId: string, ref: { checkSessionId: string; sequenceId: string }): Promise<CheckSession | null> {
    return changeSession(this.deps.storage, accountId, ref.checkSessionId, (session) => startSequence(session, ref.sequenceId));
  }

  private completeSequence(
    accountId: string,
    ref: { checkSessionId: string; sequenceId: string },
    outcome: 'PASSED' | 'FAILED' | 'DEGRADED' | 'TIMED_OUT',
  ): Promise<CheckSession | null> {
    const now = this.deps.clock.now();
    return changeSession(this.deps.storage, accountId, ref.checkSessionId, (session) => completeSequence(session, ref.sequenceId, outcome, now));
  }


}
