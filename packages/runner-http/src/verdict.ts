import { isDegradedRun, isOverMaxResponseTime, type ApiAssertion, type AssertionOutcome, type FailureKind, type RegexSandbox } from '@vigil/core';
import { evaluateAssertions, type ResponseSubject } from './assertions.js';

export interface Verdict {
  outcomes: AssertionOutcome[];
  /** What failed, in words, in order: the status, the assertions, then the response time. */
  problems: string[];
  failureKind: FailureKind | null;
  degraded: boolean;
  overMax: boolean;
}

/** An error status: the server says the request failed (RFC 9110 §15.5, §15.6). */
export const isErrorStatus = (status: number) => status >= 400;

/**
 * Whether a response passes. Without a STATUS_CODE assertion, an error status (400 and above)
 * fails the run, and with shouldFail it is the other way round: only an error status passes (the
 * spec: shouldFail "inverts what counts as failure (for validating error statuses)"). A
 * STATUS_CODE assertion says itself which statuses pass, so then the status rule stands aside.
 * Every assertion must pass. Slower than maxResponseTime fails; a response that passes and is
 * slower than degradedResponseTime is degraded (core's isDegradedRun: a failing one is not).
 */
export function judgeResponse(input: {
  assertions: readonly ApiAssertion[];
  subject: ResponseSubject;
  shouldFail: boolean;
  degradedMs: number | null;
  maxMs: number | null;
  regex: () => RegexSandbox;
}): Verdict {
  const { subject, shouldFail, degradedMs, maxMs } = input;
  const problems: string[] = [];
  const status = subject.statusCode;
  let assertionFailed = false;
  if (!input.assertions.some((a) => a.source === 'STATUS_CODE')) {
    if (!shouldFail && isErrorStatus(status)) {
      problems.push(`The response status ${status} is an error status; add a STATUS_CODE assertion if this status is expected`);
      assertionFailed = true;
    } else if (shouldFail && !isErrorStatus(status)) {
      problems.push(`The response status ${status} is not an error status, and the check has shouldFail set`);
      assertionFailed = true;
    }
  }
  const evaluated = evaluateAssertions(input.assertions, subject, input.regex);
  for (const e of evaluated) {
    if (e.failure) {
      problems.push(e.failure);
      assertionFailed = true;
    }
  }
  const overMax = isOverMaxResponseTime(subject.responseTime, maxMs);
  if (overMax) problems.push(`The response took ${subject.responseTime} ms, over the check's maxResponseTime of ${maxMs} ms`);
  return {
    outcomes: evaluated.map((e) => e.outcome),
    problems,
    failureKind: assertionFailed ? 'ASSERTION' : overMax ? 'TIMEOUT' : null,
    degraded: isDegradedRun(
      { hasFailures: problems.length > 0, hasErrors: false, responseTime: subject.responseTime },
      { degradedResponseTime: degradedMs, maxResponseTime: maxMs },
    ),
    overMax,
  };
}
