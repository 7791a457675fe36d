import type { RunResult } from '../ports/runner.js';

const SHOULD_FAIL_MESSAGE = 'The run passed, but the check has shouldFail set: it was expected to fail';

/**
 * A check's `shouldFail` applied to what its run found: a run that passed fails (failureKind
 * ASSERTION, the expectation that failed), and a run that failed passes, its message kept in
 * `details.expectedFailure` so that a person still sees what happened.
 *
 * Left as it is, since it tells nothing about the target: a run whose `signal` aborted (cancelled,
 * or past the engine's time limit), and an error of Vigil or the runner (`hasErrors`). A runner
 * also keeps other such outcomes away from it, such as a target its target policy refused.
 */
export function applyShouldFail(result: RunResult, shouldFail: boolean, signal?: AbortSignal): RunResult {
  if (!shouldFail || signal?.aborted || result.hasErrors) return result;
  if (!result.hasFailures) {
    return { ...result, hasFailures: true, errorMessage: SHOULD_FAIL_MESSAGE, failureKind: 'ASSERTION' };
  }
  return {
    ...result,
    hasFailures: false,
    errorMessage: null,
    failureKind: null,
    details: { ...result.details, expectedFailure: { errorMessage: result.errorMessage, failureKind: result.failureKind } },
  };
}
