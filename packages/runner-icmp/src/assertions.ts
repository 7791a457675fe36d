import { compareNumber, isDegradedRun, isOverMaxResponseTime, type AssertionOutcome, type Compared, type FailureKind, type IcmpAssertion, type IcmpCheck } from '@vigil/core';
import type { LatencyStats } from './ping.js';

/** What an ICMP check's assertions and thresholds read: the replies' round trips and the loss. */
export interface IcmpSubject {
  /** Echo requests asked for. */
  count: number;
  received: number;
  /** Percent of the echo requests unanswered. */
  packetLoss: number;
  /** Null when no reply came. */
  latency: LatencyStats | null;
}

export interface EvaluatedAssertion {
  outcome: AssertionOutcome;
  /** Why it failed, in words; null when it passed. */
  failure: string | null;
}

type Statistic = keyof LatencyStats;

const STATISTICS: Record<Statistic, string> = {
  avg: 'the average round trip was',
  min: 'the shortest round trip was',
  max: 'the longest round trip was',
  stdDev: "the round trips' standard deviation was",
};

/** The statistic a LATENCY assertion reads: its property, `avg` when it names none. */
export const latencyStatistic = (a: IcmpAssertion): Statistic => (a.property === '' || a.property === undefined ? 'avg' : a.property as Statistic);

/** The assertion as a person reads it: `LATENCY avg LESS_THAN 100`, `PACKET_LOSS EQUALS 0`. */
export function describeAssertion(a: IcmpAssertion): string {
  return a.source === 'LATENCY' ? `LATENCY ${latencyStatistic(a)} ${a.comparison} ${a.target}` : `PACKET_LOSS ${a.comparison} ${a.target}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Evaluates one assertion against a ping run; a failure says which assertion and what was seen. */
export function evaluateAssertion(a: IcmpAssertion, subject: IcmpSubject): EvaluatedAssertion {
  const base = { source: a.source, comparison: a.comparison, property: a.property ?? '', target: a.target };
  let actual: number | null;
  let compared: Compared;
  if (a.source === 'LATENCY') {
    const statistic = latencyStatistic(a);
    actual = subject.latency ? subject.latency[statistic] : null;
    if (actual === null) {
      compared = { passed: false, problem: 'no reply came, so there was no round trip to compare' };
    } else {
      compared = compareNumber(a.comparison, actual, a.target, 'LATENCY');
      if (!compared.passed && !compared.problem) compared = { passed: false, problem: `${STATISTICS[statistic]} ${actual} ms` };
    }
  } else {
    actual = subject.packetLoss;
    compared = compareNumber(a.comparison, actual, a.target, 'PACKET_LOSS');
    if (!compared.passed && !compared.problem) {
      compared = { passed: false, problem: `${actual}% of ${plural(subject.count, 'echo request')} went unanswered` };
    }
  }
  return { outcome: { ...base, actual, passed: compared.passed }, failure: compared.passed ? null : `Assertion ${describeAssertion(a)} failed: ${compared.problem}` };
}

export type IcmpLimits = Pick<IcmpCheck, 'degradedResponseTime' | 'maxResponseTime' | 'degradedPacketLossThreshold' | 'maxPacketLossThreshold'>;

export interface IcmpVerdict {
  hasFailures: boolean;
  errorMessage: string | null;
  failureKind: FailureKind | null;
  overMaxResponseTime: boolean;
  /** The average round trip; `waitedMs` when no reply came. */
  responseTime: number;
  assertions: AssertionOutcome[];
  /** A passing run with loss at or over degradedPacketLossThreshold, or an average over degradedResponseTime. */
  isDegraded: boolean;
}

export interface VerdictInput {
  subject: IcmpSubject;
  assertions: readonly IcmpAssertion[];
  limits: IcmpLimits;
  /** The host as the check names it, and the address pinged: `edge.example.com (192.0.2.7)`. */
  target: string;
  /** ping's error lines, the first of which explains a run without replies. */
  errors: readonly string[];
  /** Milliseconds ping ran: the response time of a run without replies. */
  waitedMs: number;
}

/**
 * A ping run's verdict before shouldFail: the assertions, then the run's own rules. No reply at
 * all is a NETWORK_ERROR (whatever the assertions said); loss at or over maxPacketLossThreshold
 * fails the run (NETWORK_ERROR), and so does an average round trip over maxResponseTime (TIMEOUT).
 * A failed assertion makes the kind ASSERTION, unless no reply came.
 */
export function icmpVerdict(input: VerdictInput): IcmpVerdict {
  const { subject, limits, target } = input;
  const outcomes: AssertionOutcome[] = [];
  const problems: string[] = [];
  for (const a of input.assertions) {
    const evaluated = evaluateAssertion(a, subject);
    outcomes.push(evaluated.outcome);
    if (evaluated.failure) problems.push(evaluated.failure);
  }
  const assertionFailed = problems.length > 0;
  const loss = subject.packetLoss;
  const maxLoss = limits.maxPacketLossThreshold;

  if (subject.received === 0 || subject.latency === null) {
    const why = input.errors[0] ? `: ${input.errors[0]}` : '';
    problems.unshift(`no reply to any of ${plural(subject.count, 'echo request')} to ${target}${why}`);
    return {
      hasFailures: true, errorMessage: problems.join('; '), failureKind: 'NETWORK_ERROR', overMaxResponseTime: false,
      responseTime: input.waitedMs, assertions: outcomes, isDegraded: false,
    };
  }

  const lossFailed = loss > 0 && loss >= maxLoss;
  if (lossFailed) {
    problems.push(`${loss}% of ${plural(subject.count, 'echo request')} to ${target} went unanswered, at or over the check's maxPacketLossThreshold of ${maxLoss}%`);
  }
  const responseTime = subject.latency.avg;
  const overMax = isOverMaxResponseTime(responseTime, limits.maxResponseTime);
  if (overMax) problems.push(`The average round trip to ${target} was ${responseTime} ms, over the check's maxResponseTime of ${limits.maxResponseTime} ms`);
  const hasFailures = problems.length > 0;
  const degradedLoss = limits.degradedPacketLossThreshold;
  const isDegraded = !hasFailures && (
    (loss > 0 && loss >= degradedLoss) || isDegradedRun({ hasFailures, hasErrors: false, responseTime }, limits)
  );
  return {
    hasFailures,
    errorMessage: hasFailures ? problems.join('; ') : null,
    failureKind: assertionFailed ? 'ASSERTION' : lossFailed ? 'NETWORK_ERROR' : overMax ? 'TIMEOUT' : null,
    overMaxResponseTime: overMax,
    responseTime,
    assertions: outcomes,
    isDegraded,
  };
}
