import type { Check } from '../model/check.js';
import type { CheckOf, CheckTypeDefinition } from '../model/check-type.js';
import type { RunJob, RunResult } from '../ports/runner.js';
import { scrubDeep } from './scrub.js';

/** A result with nothing to report (passing, no time spent), for a runner to fill in. */
export function runResult(overrides: Partial<RunResult> = {}): RunResult {
  return {
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    responseTime: 0,
    phases: {},
    errorMessage: null,
    failureKind: null,
    ...overrides,
  };
}

/** A runner factory's numeric option: the fallback when not given, else a positive number or a TypeError naming it. */
export function positiveOption(factory: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${factory}: ${name} must be a positive number, got ${value}`);
  return value;
}

/**
 * The frame of a runner's `run`: a job of another check type, or anything `fn` throws, becomes an
 * error result naming the runner (it never rejects), and the job's secrets are scrubbed from
 * whatever comes back. A runner of a plugin's check type passes its definition instead of the
 * type's name, and `fn` gets the check typed by it.
 */
export function runChecked<T extends string>(
  runnerName: string,
  checkType: T,
  job: RunJob,
  fn: (check: Extract<Check, { checkType: T }>) => Promise<RunResult>,
): Promise<RunResult>;
export function runChecked<D extends CheckTypeDefinition>(
  runnerName: string,
  definition: D,
  job: RunJob,
  fn: (check: CheckOf<D>) => Promise<RunResult>,
): Promise<RunResult>;
// Not an async function: it runs on every check, and one `then` on the run's own promise costs
// less than an async function's frame and its await.
export function runChecked(
  runnerName: string,
  kind: string | CheckTypeDefinition,
  job: RunJob,
  fn: (check: never) => Promise<RunResult>,
): Promise<RunResult> {
  const checkType = typeof kind === 'string' ? kind : kind.checkType;
  let pending: RunResult | Promise<RunResult>;
  let secrets: readonly string[] = [];
  try {
    secrets = job.secrets ?? [];
    const check = job.check;
    pending = check.checkType === checkType
      ? fn(check as never)
      : runResult({ hasErrors: true, errorMessage: `The ${runnerName} cannot run a ${check.checkType} check`, failureKind: 'OTHER' });
  } catch (err) {
    pending = failedRun(runnerName, err);
  }
  return Promise.resolve(pending).then(
    secrets.length === 0 ? undefined : (result) => scrubDeep(result, secrets),
    (err: unknown) => scrubDeep(failedRun(runnerName, err), secrets),
  );
}

function failedRun(runnerName: string, err: unknown): RunResult {
  return runResult({ hasErrors: true, errorMessage: `The ${runnerName} failed: ${err instanceof Error ? err.message : String(err)}`, failureKind: 'OTHER' });
}
