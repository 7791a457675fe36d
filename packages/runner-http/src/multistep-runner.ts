import {
  applyShouldFail, isDegradedRun, isOverMaxResponseTime, positiveOption, RUNNERS, runChecked, runResult, scrubDeep, scrubSecrets,
  type MultiStepCheck, type PluginRegistry, type Runner, type RunJob, type RunResult,
} from '@vigil/core';
import { performance } from 'node:perf_hooks';
import { cut, StepRecorder } from './multistep-record.js';
import { declaredSteps, MULTI_STEP_FILENAME, multiStepWorker, validateMultiStepCheck } from './multistep-script.js';
import { MAX_ERROR_MESSAGE, multiStepFailure } from './multistep-verdict.js';
import { runScriptProcess, type ScriptWorker } from './script-process.js';
import type { RefusedConnection } from './script-targets.js';

export const MULTI_STEP_CHECK_TYPE = 'MULTI_STEP' as const;

export interface MultiStepRunnerOptions {
  /** Bytes of one response body a script's request reads at most; a larger body fails the request. Default 1 MiB, as the HTTP runner's. */
  maxResponseBytes?: number;
  /** Time limit of a run when the job sets none (the engine's limit for one attempt). Default 60 s. */
  defaultTimeoutMs?: number;
  /** Heap limit of the process a script runs in. Default 128 MB. */
  scriptMemoryLimitMb?: number;
  /** Sent as User-Agent unless a request sets one. Default `Vigil-Multi-Step-Check/0.1`. */
  userAgent?: string;
}

export interface MultiStepRunner extends Runner {
  readonly checkType: typeof MULTI_STEP_CHECK_TYPE;
  readonly timeoutMs: number;
  readonly options: Readonly<Required<MultiStepRunnerOptions>>;
  validate(check: unknown): void;
}

const DEFAULTS = {
  maxResponseBytes: 1024 * 1024,
  defaultTimeoutMs: 60_000,
  scriptMemoryLimitMb: 128,
  userAgent: 'Vigil-Multi-Step-Check/0.1',
};

/** Kept free at the end of a run's time limit: the script's process is killed and its folder removed in it. */
const FINISH_MS = 250;

/**
 * Runs multi-step checks: the check's script, in a fenced process of its own (as API checks'
 * setup code runs), with a `request` context, `expect`, `step` and `markDegraded`; its steps,
 * requests and assertions are the result, its steps' durations the response time.
 */
export function multiStepRunner(options: MultiStepRunnerOptions = {}): MultiStepRunner {
  const positive = (name: keyof MultiStepRunnerOptions, value: number | undefined, fallback: number) => positiveOption('multiStepRunner', name, value, fallback);
  const settings = {
    maxResponseBytes: Math.floor(positive('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes)),
    defaultTimeoutMs: positive('defaultTimeoutMs', options.defaultTimeoutMs, DEFAULTS.defaultTimeoutMs),
    scriptMemoryLimitMb: Math.floor(positive('scriptMemoryLimitMb', options.scriptMemoryLimitMb, DEFAULTS.scriptMemoryLimitMb)),
    userAgent: options.userAgent ?? DEFAULTS.userAgent,
  };
  let worker: ScriptWorker | null = null;

  async function runScript(job: RunJob, check: MultiStepCheck, signal: AbortSignal): Promise<RunResult> {
    const started = performance.now();
    const runMs = job.timeoutMs > 0 ? job.timeoutMs : settings.defaultTimeoutMs;
    const limitMs = Math.max(1, Math.floor(runMs - FINISH_MS));
    const recorder = new StepRecorder();
    const policy = job.targetPolicy?.refuseInternalAddresses ? job.targetPolicy : null;
    const refused: RefusedConnection[] = [];
    const outcome = await runScriptProcess(
      { code: check.script, filename: MULTI_STEP_FILENAME, env: { ...(job.environment ?? {}) }, maxResponseBytes: settings.maxResponseBytes, userAgent: settings.userAgent },
      {
        worker: worker ??= multiStepWorker(), memoryLimitMb: settings.scriptMemoryLimitMb, limitMs, signal,
        log: recorder.log, onMessage: recorder.onMessage, targets: policy ? { policy, refused: (r) => refused.push(r) } : null,
      },
    );
    // Every secret is known now: the job's, the credentials the script sent and the cookies it was
    // given. What the run recorded is scrubbed of them before any of it is cut to its limit.
    const secrets = [...job.secrets, ...recorder.credentials];
    const scrub = (text: string) => scrubSecrets(text, secrets, true);
    // The message names the run's limit; the process is stopped a little before it, to be gone in time.
    const found = multiStepFailure(outcome, recorder, refused, { limitMs: runMs, memoryLimitMb: settings.scriptMemoryLimitMb, scrub });
    const failure = found && { ...found, message: cut(scrub(found.message), MAX_ERROR_MESSAGE) };
    if (failure?.stopped) recorder.addNotRun(declaredSteps(check.script));

    const wallMs = outcome.kind === 'done' && typeof outcome.report.wallMs === 'number' ? outcome.report.wallMs : performance.now() - started;
    const stepsMs = recorder.durations.reduce((a, b) => a + b, 0);
    const responseTime = Math.round((recorder.durations.length > 0 ? stepsMs : Math.max(0, wallMs)) * 100) / 100;
    let result = runResult({
      hasFailures: failure !== null && !failure.ours,
      hasErrors: failure?.ours ?? false,
      responseTime,
      phases: recorder.phases(responseTime),
      errorMessage: failure?.message ?? null,
      failureKind: failure?.kind ?? null,
      details: { ...recorder.details(scrub), ...(failure?.details ?? {}) },
    });
    // shouldFail expects the target to fail the script's assertions: it inverts a passed run and one
    // failed by an assertion, and leaves every other failure failing (no answer, a timeout, an error
    // of the script, its memory, a refused target), as API checks do.
    if (failure === null || failure.kind === 'ASSERTION') result = applyShouldFail(result, check.shouldFail, signal);
    if (isOverMaxResponseTime(responseTime, check.maxResponseTime)) {
      const failing = result.hasFailures || result.hasErrors;
      result = {
        ...result,
        overMaxResponseTime: true,
        hasFailures: result.hasFailures || !result.hasErrors,
        errorMessage: failing ? result.errorMessage : `The steps took ${responseTime} ms, over the check's maxResponseTime of ${check.maxResponseTime} ms`,
        failureKind: failing ? result.failureKind : 'TIMEOUT',
      };
    }
    const passing = !result.hasFailures && !result.hasErrors;
    const slow = isDegradedRun(result, check);
    if (passing && (recorder.degradedReason !== null || slow)) {
      const reason = recorder.degradedReason !== null ? cut(scrub(recorder.degradedReason), 1_000) : `The steps took ${responseTime} ms, over the check's degradedResponseTime of ${check.degradedResponseTime} ms`;
      result = { ...result, isDegraded: true, details: { ...result.details, degradedReason: reason } };
    } else if (!passing) {
      result = { ...result, isDegraded: false };
    }
    // Whatever else the result holds (the same scrubber: its forms are made once).
    return scrubDeep(result, secrets);
  }

  return {
    checkType: MULTI_STEP_CHECK_TYPE,
    timeoutMs: settings.defaultTimeoutMs,
    options: settings,
    validate: validateMultiStepCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('multi-step runner', MULTI_STEP_CHECK_TYPE, job, (check) => runScript(job, check, signal));
    },
  };
}

/** Creates a multi-step runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerMultiStepRunner(container: PluginRegistry, options: MultiStepRunnerOptions = {}): MultiStepRunner {
  const runner = multiStepRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
