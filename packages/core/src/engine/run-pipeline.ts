/*
 * The run pipeline: one check run through its stages, attempts (run-attempts.ts) → result sink
 * (result-sink.ts) → alert step (alert-step.ts, which queues the alerts in the outbox); and the
 * engine's other jobs that step the same alert state, the alert tick and, beside the pipeline, the
 * certificate look (certificate-look.ts).
 */
import { hasCode } from '../errors.js';
import type { ServedLocations } from '../ports/storage.js';
import { nextDueIn, runLocations } from '../rules/schedule-plan.js';
import type { CheckForRun, CheckService } from '../services/checks.js';
import type { ClientCertificateService } from '../services/client-certificates.js';
import type { ServiceDeps } from '../services/deps.js';
import type { ErrorGroupService } from '../services/error-groups.js';
import type { MaintenanceWindowService } from '../services/maintenance-windows.js';
import type { SnippetService } from '../services/snippets.js';
import type { StatusPageIncidentService } from '../services/status-page-incidents.js';
import { AlertStep, type AlertHandOver } from './alert-step.js';
import { CertificateLook } from './certificate-look.js';
import { engineInstruments, type EngineInstruments } from './instruments.js';
import { ENDED_BY_ENGINE, ResultSink, sequenceOf, storedSlotResult } from './result-sink.js';
import { RunAttempts } from './run-attempts.js';
import { CANCELLED, maintenanceEffect, type RunOutcome, type RunSpec } from './run-spec.js';

export interface PipelineServices {
  deps: ServiceDeps;
  checks: CheckService;
  maintenanceWindows: MaintenanceWindowService;
  errorGroups: ErrorGroupService;
  /** Opens and resolves the incidents of checks with triggerIncident. */
  statusPageIncidents: Pick<StatusPageIncidentService, 'create' | 'addUpdate'>;
  /** The accounts' client certificates, which each run's job offers its runner. */
  clientCertificates: Pick<ClientCertificateService, 'lookupFor'>;
  /** The accounts' snippets, which each run's job offers its runner. */
  snippets: Pick<SnippetService, 'lookupFor'>;
  /** This process's dispatcher, which sends the alerts a run queues without waiting for its next poll. */
  alertDispatcher?: AlertHandOver;
  /** The locations this process runs: a retry in another region goes only to one of them. Default: all. */
  serves?: ServedLocations;
}

export interface PipelineOptions {
  /** Time limit of one attempt when the runner's type has none of its own. Default 30 s. */
  runTimeoutMs: number;
}

/**
 * Runs one check once (with its retries) and records everything a run changes: the result, the
 * check status, the error group, the session's progress, the alert state and the outbox.
 */
export class RunPipeline {
  private readonly meter: EngineInstruments;
  private readonly attempts: RunAttempts;
  private readonly sink: ResultSink;
  private readonly alerts: AlertStep;
  private readonly certificates: CertificateLook;

  constructor(
    private readonly services: PipelineServices,
    options: PipelineOptions,
  ) {
    const { deps } = services;
    this.meter = engineInstruments(deps.metrics);
    this.attempts = new RunAttempts({
      deps, clientCertificates: services.clientCertificates, snippets: services.snippets, serves: services.serves, runTimeoutMs: options.runTimeoutMs,
    });
    this.sink = new ResultSink(deps, services.errorGroups, this.meter);
    this.alerts = new AlertStep({
      deps, maintenanceWindows: services.maintenanceWindows, incidents: services.statusPageIncidents, meter: this.meter, dispatcher: services.alertDispatcher,
    });
    this.certificates = new CertificateLook(deps, services.maintenanceWindows, this.alerts, options.runTimeoutMs);
  }

  private get deps() {
    return this.services.deps;
  }

  async run(spec: RunSpec, signal: AbortSignal): Promise<RunOutcome> {
    const outcome = await this.execute(spec, signal);
    // A cancelled run was made and stored: it is counted among the runs, not here.
    if (outcome.kind === 'skipped' && outcome.reason !== 'cancelled') this.meter.runsSkipped.inc({ reason: outcome.reason });
    return outcome;
  }

  /** One run: attempts → result sink → alert step, unless the check or its session says not to run. */
  private async execute(spec: RunSpec, signal: AbortSignal): Promise<RunOutcome> {
    const forRun = await this.forRunOrNull(spec.accountId, spec.checkId);
    if (!forRun) return { kind: 'skipped', reason: 'gone' };
    const scheduled = spec.runSource === 'SCHEDULER';
    if (scheduled && !forRun.activated) return { kind: 'skipped', reason: 'inactive', forRun };
    const { paused, silenced } = await maintenanceEffect(this.services.maintenanceWindows, spec.accountId, forRun, this.deps.clock.now());
    if (scheduled && paused) return { kind: 'skipped', reason: 'paused', forRun };
    if (spec.session) {
      // A process that stored this sequence's run and died before it ended the sequence: the run
      // is ended from what it stored, not run (and stored) a second time.
      if (await this.finishStored(spec, forRun, silenced)) return { kind: 'skipped', reason: 'duplicate', forRun };
      const started = await this.sink.markSequenceStarted(spec.accountId, spec.session);
      // Cancelled meanwhile (the cancel reached another process): nothing runs.
      if (sequenceOf(started, spec.session.sequenceId)?.status === 'CANCELLED') return { kind: 'skipped', reason: 'cancelled', forRun };
    }

    const made = await this.attempts.make(spec, forRun, signal);
    if (made.kind === 'busy') return { kind: 'skipped', reason: 'busy', forRun };
    // A run cut short because this process stops (or its lease ran out) tells nothing about the
    // check: nothing is stored and its entry stays due, for the next process to run. Only a
    // session's run that the user cancelled is kept.
    const cancelled = signal.aborted && spec.session !== undefined && signal.reason === CANCELLED;
    if (signal.aborted && !cancelled) return { kind: 'skipped', reason: 'stopped', forRun };

    const written = await this.sink.write(spec, forRun, made, cancelled);
    if (written.kind === 'duplicate') {
      // Another process (or this one, before the store went away) stored this slot or sequence
      // first. If it died before it took the run in, that is done now, from the stored result.
      if (!(await this.finishStored(spec, forRun, silenced)) && spec.session) throw written.conflict;
      return { kind: 'skipped', reason: 'duplicate', forRun };
    }
    if (written.kind === 'cancelled') return { kind: 'skipped', reason: 'cancelled', forRun };

    // The alert step goes on beside the status write; the run is done once both are (a failure of
    // either fails the run, after the other finished).
    const [status, alerted] = await Promise.allSettled([written.status, this.alerts.takeIn(spec, forRun, written.result, written.session, silenced)]);
    if (status.status === 'rejected') throw status.reason;
    if (alerted.status === 'rejected') throw alerted.reason;
    return { kind: 'ran', result: written.result, forRun };
  }

  /**
   * Finishes a run from its stored final result, if there is one: the check's status, the
   * session's sequence and the alert step, each of which the process that stored it may not have
   * reached (each takes it in once). Answers whether there was one.
   */
  private async finishStored(spec: RunSpec, forRun: CheckForRun, silenced: boolean): Promise<boolean> {
    const check = forRun.check;
    const stored = spec.session
      ? await this.sink.storedSequenceResult(spec.accountId, check.id, spec.session)
      : await storedSlotResult(this.deps.storage, spec.accountId, check.id, spec.location, spec.dueAt);
    if (!stored) return false;
    // The engine's own record of a session run that could not be completed tells nothing of the check.
    if (stored.details?.[ENDED_BY_ENGINE]) return true;
    const session = await this.sink.writeAgain(spec, check, stored);
    await this.alerts.takeIn(spec, forRun, stored, session, silenced);
    return true;
  }

  /**
   * A session's sequence that ended, whose entry a process that died left behind: the alert step
   * of its stored result (taken in once), which that process may not have reached. Nothing runs.
   */
  async finishEndedSessionRun(spec: RunSpec): Promise<void> {
    const forRun = await this.forRunOrNull(spec.accountId, spec.checkId);
    if (!forRun) return;
    const effect = await maintenanceEffect(this.services.maintenanceWindows, spec.accountId, forRun, this.deps.clock.now());
    await this.finishStored(spec, forRun, effect.silenced);
  }

  /**
   * Ends a session's sequence that could not run to its end: an errored result naming the cause
   * (where the session is still there) and the sequence FAILED, so nobody waits on it.
   */
  failSequence(accountId: string, ref: { checkSessionId: string; sequenceId: string }, location: string, message: string): Promise<void> {
    return this.sink.failSequence(accountId, ref, location, message);
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

  /** One alert tick of a failing or degraded check; answers when the next is due (null: no more ticks). */
  async tick(accountId: string, checkId: string): Promise<Date | null> {
    const forRun = await this.forRunOrNull(accountId, checkId);
    return forRun ? this.alerts.tick(accountId, forRun) : null;
  }

  /**
   * The daily certificate look of a check (its `certificate` schedule entry); answers when to look
   * again (null: the check is gone or no longer watches a certificate).
   */
  async certificate(accountId: string, checkId: string): Promise<Date | null> {
    const forRun = await this.forRunOrNull(accountId, checkId);
    return forRun ? this.certificates.look(accountId, forRun) : null;
  }

  /** The check with what a run needs, or null when it was deleted. */
  private async forRunOrNull(accountId: string, checkId: string): Promise<CheckForRun | null> {
    try {
      return await this.services.checks.getForRun(accountId, checkId);
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) return null;
      throw err;
    }
  }
}
