/*
 * Stage 2 of the run pipeline, the result sink: stores a run's attempts as results (secrets
 * scrubbed; a run stored already conflicts, so it is stored once), then writes what they change:
 * a test session's error groups, the session's progress, the check status (compare-and-set), the
 * check's error group.
 */
import type { CheckResult } from '../model/check-result.js';
import type { CheckSession } from '../model/check-session.js';
import type { CheckStatus } from '../model/check-status.js';
import type { Check } from '../model/check.js';
import type { RunResult } from '../ports/runner.js';
import type { StoredRecord, VigilStorage } from '../ports/storage.js';
import { hasCode } from '../errors.js';
import { failedSuiteTests } from '../rules/suite-tests.js';
import { completeSequence, isFinalSessionStatus, startSequence } from '../rules/transitions.js';
import { changeSession } from '../services/check-sessions.js';
import type { CheckForRun } from '../services/checks.js';
import type { ServiceDeps } from '../services/deps.js';
import type { ErrorGroupService } from '../services/error-groups.js';
import { runOutcomeLabel, type EngineInstruments } from './instruments.js';
import type { Attempt } from './run-attempts.js';
import { legacySlotResultId, slotResultId, STATE_TRIES, type RunSpec } from './run-spec.js';
import { scrubSecrets } from '../runner-kit/scrub.js';

/** The detail that marks the errored result the engine stores for a session run it could not complete. */
export const ENDED_BY_ENGINE = 'endedByEngine';

type SequenceRef = { checkSessionId: string; sequenceId: string };
type SequenceOutcome = 'PASSED' | 'FAILED' | 'DEGRADED' | 'TIMED_OUT';

/** What became of a run's attempts in the sink. */
export type Written =
  /**
   * Stored, and the session written; `status` writes the check's status and error group (neither
   * is read by the alert step, which runs meanwhile, so an alert waits for neither).
   */
  | { kind: 'stored'; result: CheckResult; session: CheckSession | null; status: Promise<void> }
  /** Stored, but its sequence was cancelled: it changes no status and raises no alert. */
  | { kind: 'cancelled' }
  /** Another process (or this one earlier) stored this slot or sequence first: `conflict` is the store's error. */
  | { kind: 'duplicate'; conflict: unknown };

/** A session's sequence, if the session and the sequence are there. */
export function sequenceOf(session: CheckSession | null, sequenceId: string) {
  return session?.sequences.find((s) => s.sequenceId === sequenceId);
}

/**
 * How a sequence ends with its run's final result. A stored result no longer says what kind of
 * failure it was (no `failureKind`): a timeout then ends FAILED.
 */
function sequenceOutcome(result: CheckResult, failureKind?: RunResult['failureKind']): SequenceOutcome {
  if (result.hasFailures || result.hasErrors) return failureKind === 'TIMEOUT' ? 'TIMED_OUT' : 'FAILED';
  return result.isDegraded ? 'DEGRADED' : 'PASSED';
}

/**
 * The final result of a slot in one location, found by its ids (null while it has none); a slot
 * stored before slot ids carried their due time is found by its older ids.
 */
export async function storedSlotResult(storage: VigilStorage, accountId: string, checkId: string, location: string, dueAt: Date): Promise<CheckResult | null> {
  for (const idOf of [slotResultId, legacySlotResultId]) {
    for (let attempt = 1; ; attempt++) {
      const stored = await storage.checkResults.get(accountId, idOf(checkId, location, dueAt, attempt), checkId);
      if (!stored) {
        if (attempt > 1) return null;
        break;
      }
      if (stored.resultType === 'FINAL') return stored;
    }
  }
  return null;
}

export class ResultSink {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly errorGroups: ErrorGroupService,
    private readonly meter: EngineInstruments,
  ) {}

  /**
   * Stores a run's attempts (the last one FINAL) and counts it; then, unless it was `cancelled`,
   * records a failed test session run's errors in its project's groups, ends its session's
   * sequence and starts writing the check's status and error group.
   */
  async write(spec: RunSpec, forRun: CheckForRun, made: { startedAt: Date; attempts: Attempt[] }, cancelled: boolean): Promise<Written> {
    const check = forRun.check;
    const { attempts } = made;
    const rows = attempts.map((a, i) => toResult(spec, check, a, i + 1, i === attempts.length - 1 ? 'FINAL' : 'ATTEMPT', forRun.secrets));
    try {
      await this.deps.storage.checkResults.insertMany(spec.accountId, rows);
    } catch (err) {
      if (!hasCode(err, 'CONFLICT')) throw err;
      // A batch is stored whole, so the other one's final result is there.
      return { kind: 'duplicate', conflict: err };
    }
    const final = rows[rows.length - 1]!;
    const stored = { ...final, accountId: spec.accountId } as CheckResult;
    this.recordRun(spec, check, final, made.startedAt, attempts.length, cancelled);
    // A cancelled run is kept as a result but changes no status and raises no alert.
    if (cancelled) return { kind: 'cancelled' };
    // A test session's failed run fills its project's error groups before its sequence ends: whoever
    // waits for the session to end finds them there.
    const failed = final.errorMessage && (stored.hasFailures || stored.hasErrors) ? final.errorMessage : null;
    if (failed) await this.recordTestSessionErrors(spec, forRun, failed, final.stoppedAt, final.details);
    // A session's sequence ends first: one cancelled while its run went on elsewhere keeps the
    // result but changes no status and raises no alert.
    const session = spec.session
      ? await this.completeSequence(spec.accountId, spec.session, sequenceOutcome(stored, attempts[attempts.length - 1]!.result.failureKind))
      : null;
    if (spec.session && sequenceOf(session, spec.session.sequenceId)?.status === 'CANCELLED') return { kind: 'cancelled' };
    const status = (async () => {
      await this.updateStatus(spec.accountId, check, stored);
      if (failed) await this.errorGroups.recordOccurrence(spec.accountId, check.id, failed, final.stoppedAt);
    })();
    // The caller awaits it; until then its failure is not unhandled.
    status.catch(() => {});
    return { kind: 'stored', result: stored, session, status };
  }

  /**
   * Writes again what a stored final result changes, for a run whose process may have died before
   * it did: the check's status (written again, it stays) and its session's sequence. Answers the
   * session, for the alert step.
   */
  async writeAgain(spec: RunSpec, check: Check, stored: CheckResult): Promise<CheckSession | null> {
    await this.updateStatus(spec.accountId, check, stored);
    return spec.session ? this.completeSequence(spec.accountId, spec.session, sequenceOutcome(stored)) : null;
  }

  /**
   * Ends a session's sequence that could not run to its end: an errored result naming the cause
   * (where the session is still there) and the sequence FAILED, so nobody waits on it.
   */
  async failSequence(accountId: string, ref: SequenceRef, location: string, message: string): Promise<void> {
    const { storage, clock, ids } = this.deps;
    const session = await storage.checkSessions.get(accountId, ref.checkSessionId);
    const sequence = sequenceOf(session, ref.sequenceId);
    if (!session || !sequence || isFinalSessionStatus(sequence.status)) return;
    // Its run was stored before what failed: the sequence ends as that run did.
    const stored = await this.storedSequenceResult(accountId, session.checkId, ref);
    if (stored) {
      await this.completeSequence(accountId, ref, sequenceOutcome(stored));
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
  async storedSequenceResult(accountId: string, checkId: string, ref: SequenceRef): Promise<CheckResult | null> {
    const page = await this.deps.storage.checkResults.listByCheck(accountId, checkId, {
      limit: 100, offset: 0, checkSessionId: ref.checkSessionId, resultType: 'FINAL', countTotal: false,
    });
    return page.items.find((r) => r.sequenceId === ref.sequenceId) ?? null;
  }

  markSequenceStarted(accountId: string, ref: SequenceRef): Promise<CheckSession | null> {
    return changeSession(this.deps.storage, accountId, ref.checkSessionId, (session) => startSequence(session, ref.sequenceId));
  }

  private completeSequence(accountId: string, ref: SequenceRef, outcome: SequenceOutcome): Promise<CheckSession | null> {
    const now = this.deps.clock.now();
    return changeSession(this.deps.storage, accountId, ref.checkSessionId, (session) => completeSequence(session, ref.sequenceId, outcome, now));
  }

  /** A test session's failed run in its project's test-session error groups (none for any other run). */
  private async recordTestSessionErrors(spec: RunSpec, forRun: CheckForRun, errorMessage: string, at: string, details: unknown): Promise<void> {
    const check = forRun.check;
    if (!spec.session?.projectId) return;
    // A Playwright suite's failed tests are each an occurrence of their own, with the test's metadata.
    const failed = check.checkType === 'PLAYWRIGHT' ? failedSuiteTests(details) : [];
    for (const test of failed) {
      await this.errorGroups.recordTestSessionOccurrence(spec.accountId, {
        projectId: spec.session.projectId, environment: spec.session.environment ?? null, raw: test.error, at, pwtMetadata: test.pwtMetadata,
      });
    }
    if (failed.length > 0) return;
    await this.errorGroups.recordTestSessionOccurrence(spec.accountId, {
      projectId: spec.session.projectId,
      environment: spec.session.environment ?? null,
      raw: errorMessage,
      at,
      pwtMetadata: {
        projectName: spec.session.projectId,
        testFile: (check as { scriptPath?: string | null }).scriptPath || check.name,
        testTitle: check.name,
        suitePath: forRun.group ? [forRun.group.name] : [],
      },
    });
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

  /** The check's status after a run, race-free: runs of one check finishing at once each count. */
  private async updateStatus(accountId: string, check: Check, result: CheckResult): Promise<void> {
    const storage = this.deps.storage;
    const rt = result.responseTime;
    for (let tries = 0; tries < STATE_TRIES; tries++) {
      const previous = await storage.checkStatuses.get(accountId, check.id);
      // A run that started before the stored one's (it finished later) only widens the extremes.
      const older = previous?.updated_at != null && previous.updated_at > result.stoppedAt;
      const longestRun = previous?.longestRun == null ? rt : Math.max(previous.longestRun, rt);
      const shortestRun = previous?.shortestRun == null ? rt : Math.min(previous.shortestRun, rt);
      // Written out member by member (no rest copy of the stored status, no spread of the extremes):
      // this runs once per run, and what a run allocates sets how often young collections pause it.
      const next = older ? olderStatus(previous!, longestRun, shortestRun) : {
        name: check.name,
        checkId: check.id,
        hasFailures: result.hasFailures,
        hasErrors: result.hasErrors,
        isDegraded: result.isDegraded,
        longestRun,
        shortestRun,
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
}

/** The stored result of one attempt, secret values scrubbed from its message and details. */
function toResult(
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

/** The stored status with only its extremes widened (a run that started before the stored one's), without its accountId. */
function olderStatus(previous: StoredRecord<CheckStatus>, longestRun: number, shortestRun: number): StoredRecord<CheckStatus> {
  const { accountId: _a, ...kept } = previous as StoredRecord<CheckStatus> & { accountId?: string };
  return { ...kept, longestRun, shortestRun } as StoredRecord<CheckStatus>;
}
