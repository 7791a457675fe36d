/*
 * Stage 1 of the run pipeline, the attempts: the runner of the check's type runs the job (after
 * its run gate admits it, where the runner has a concurrency of its own) within its time limit,
 * and a failure is retried by the check's retry strategy, never past the run's lease.
 */
import type { ClientCertificateService } from '../services/client-certificates.js';
import type { CheckForRun } from '../services/checks.js';
import type { ServiceDeps } from '../services/deps.js';
import type { SnippetService } from '../services/snippets.js';
import type { ServedLocations } from '../ports/storage.js';
import type { RunJob, RunResult, Runner } from '../ports/runner.js';
import { runResult } from '../runner-kit/run-result.js';
import { policyForAccount } from '../runner-kit/target-policy.js';
import { effectiveRetryStrategy, nextRetry } from '../rules/retry.js';
import { runLocations } from '../rules/schedule-plan.js';
import { servesLocation } from '../rules/schedule.js';
import { heartbeatRunner } from './heartbeat-runner.js';
import { RunGate } from './run-gate.js';
import { sequenceResultId, slotResultId, type RunSpec } from './run-spec.js';
import { scrubSecrets } from '../runner-kit/scrub.js';
import { withTimeLimit } from './time-limit.js';

/** What the attempts stage is given. */
export interface AttemptCollaborators {
  deps: ServiceDeps;
  /** The account's client certificates, put on each job. */
  clientCertificates: Pick<ClientCertificateService, 'lookupFor'>;
  /** The account's snippets, put on each job. */
  snippets: Pick<SnippetService, 'lookupFor'>;
  /** The locations this process runs: a retry in another region goes only to one of them. Default: all. */
  serves?: ServedLocations | undefined;
  /** Time limit of one attempt when the runner's type has none of its own. */
  runTimeoutMs: number;
}

/** One attempt of a run, where it ran. */
export interface Attempt {
  result: RunResult;
  startedAt: Date;
  stoppedAt: Date;
  runId: string;
  location: string;
}

/** The attempts of one run: none when no runner of its type was free in time (`busy`). */
export type Attempts = { kind: 'busy' } | { kind: 'made'; startedAt: Date; attempts: Attempt[] };

export const isFailed = (r: RunResult) => r.hasFailures || r.hasErrors;

export class RunAttempts {
  /** Runners with a concurrency of their own, and the runs of theirs that go at once. */
  private readonly gates = new WeakMap<Runner, RunGate>();

  constructor(private readonly c: AttemptCollaborators) {}

  private get deps() {
    return this.c.deps;
  }

  /** Makes the run's attempts: the first, then retries while the strategy, the lease and the signal allow. */
  async make(spec: RunSpec, forRun: CheckForRun, signal: AbortSignal): Promise<Attempts> {
    const { deps } = this;
    const check = forRun.check;
    const startedAt = deps.clock.now();
    const strategy = effectiveRetryStrategy(check, forRun.group);
    const runner = this.runnerFor(check.checkType);
    const longest = runner?.timeoutMs ?? this.c.runTimeoutMs;
    const own = runner?.timeoutFor?.(check);
    const timeoutMs = typeof own === 'number' && Number.isFinite(own) && own > 0 ? Math.min(own, longest) : longest;
    const attempts: Attempt[] = [];
    const places = this.retryPlaces(forRun);
    let location = spec.location;
    // The run may reach what the policy of its check's account allows.
    const targetPolicy = await policyForAccount(deps.targetPolicy, spec.accountId);
    for (let attempt = 1; ; attempt++) {
      // Where the runner has a concurrency of its own, the attempt starts once it is admitted.
      let attemptStart = deps.clock.now();
      // A slot's or a session sequence's attempt has one id in every process, so a run made again
      // after its process died is stored once (the second insert conflicts).
      const runId = spec.runSource === 'SCHEDULER' ? slotResultId(check.id, spec.location, spec.dueAt, attempt)
        : spec.session ? sequenceResultId(spec.session.sequenceId, attempt) : deps.ids.uuid();
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
          clientCertificates: this.c.clientCertificates.lookupFor(spec.accountId),
          snippets: this.c.snippets.lookupFor(spec.accountId),
          ...(targetPolicy ? { targetPolicy } : {}),
        }, signal, spec, (at) => (attemptStart = at))
        : errorResult(`No runner for check type ${check.checkType} is registered in this process`);
      if (result === null) {
        // The runner had no turn free while the slot's lease still covered an attempt. A slot
        // without a free runner tells nothing about the check: it is skipped, not failed.
        deps.logger.warn('run: skipped, no runner of its type was free in time', {
          accountId: spec.accountId, checkId: check.id, checkType: check.checkType, location: spec.location, dueAt: spec.dueAt.toISOString(), attempt,
        });
        if (attempts.length === 0) return { kind: 'busy' };
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
    return { kind: 'made', startedAt, attempts };
  }

  private runnerFor(checkType: string): Runner | undefined {
    if (checkType === 'HEARTBEAT') return this.deps.runners.get('HEARTBEAT') ?? heartbeatRunner(this.deps);
    return this.deps.runners.get(checkType);
  }

  /** The check's selected locations that this process runs, in their order: where a retry may go. */
  private retryPlaces(forRun: CheckForRun): string[] {
    const serves = this.c.serves;
    const all = runLocations(forRun.check, forRun.group, this.deps.defaultLocation);
    return serves ? all.filter((l) => servesLocation(serves, l)) : all;
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
