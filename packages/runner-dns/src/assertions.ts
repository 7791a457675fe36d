import {
  asText, compareNumber, compareValue, cutText, quoteText, takesTarget,
  type AssertionOutcome, type Compared, type DnsAssertion, type DnsRecordType, type RegexSandbox,
} from '@vigil/core';
import type { DnsResponse } from './query.js';

/** Longest actual value kept in an outcome. */
export const MAX_RECORDED_ACTUAL = 1000;

/** What a DNS check's assertions read: one response. */
export interface DnsSubject {
  response: DnsResponse;
  /** The type asked for: TEXT_ANSWER and ANSWER_COUNT read the records of this type (not the CNAMEs on the way). */
  recordType: DnsRecordType;
}

export interface EvaluatedAssertion {
  outcome: AssertionOutcome;
  /** Why it failed, in words; null when it passed. */
  failure: string | null;
}

/** The records of the asked type, one a line, as zone files write them. */
export function answerLines(subject: DnsSubject): string[] {
  return subject.response.answers.filter((a) => a.type === subject.recordType).map((a) => a.data);
}

/** The assertion as a person reads it: `TEXT_ANSWER CONTAINS "192.0.2.10"`. */
export function describeAssertion(a: DnsAssertion): string {
  const parts: string[] = [a.source];
  if (a.regex) parts.push(`regex /${a.regex}/`);
  parts.push(a.comparison);
  if (takesTarget(a.comparison)) parts.push(a.source === 'TEXT_ANSWER' ? JSON.stringify(a.target) : a.target);
  return parts.join(' ');
}

function judgeText(a: DnsAssertion, text: string, regex: () => RegexSandbox): { compared: Compared; actual: string | null } {
  let value: string | null = text;
  if (a.regex) {
    const extracted = regex().extract(a.regex, text);
    if (!extracted.ok) return { compared: { passed: false, problem: extracted.problem }, actual: null };
    value = asText(extracted.value);
  }
  // Answers are text: equal as text, never as numbers (`010` is not `10`).
  const compared = compareValue(a.comparison, value, a.target);
  if (compared.passed || compared.problem) return { compared, actual: value };
  const shown = value === null ? `nothing matched regex /${a.regex}/` : value === '' ? 'there were no answers' : `the answers were ${quoteText(value)}`;
  return { compared: { passed: false, problem: shown }, actual: value };
}

/** Evaluates one assertion against a response; a failure says which assertion and what was seen. */
export function evaluateAssertion(a: DnsAssertion, subject: DnsSubject, regex: () => RegexSandbox): EvaluatedAssertion {
  const { response } = subject;
  const base = { source: a.source, comparison: a.comparison, property: '', target: a.target ?? '' };
  let compared: Compared;
  let actual: string | number | null;
  switch (a.source) {
    case 'RESPONSE_CODE': {
      actual = response.rcode;
      compared = compareValue(a.comparison, response.rcode, a.target.trim().toUpperCase());
      if (!compared.passed && !compared.problem) compared = { passed: false, problem: `the response code was ${response.rcode}` };
      break;
    }
    case 'TEXT_ANSWER': {
      const judged = judgeText(a, answerLines(subject).join('\n'), regex);
      compared = judged.compared;
      actual = judged.actual === null ? null : cutText(judged.actual, MAX_RECORDED_ACTUAL);
      break;
    }
    case 'ANSWER_COUNT': {
      actual = answerLines(subject).length;
      compared = compareNumber(a.comparison, actual, a.target, 'ANSWER_COUNT');
      if (!compared.passed && !compared.problem) compared = { passed: false, problem: `${actual} record${actual === 1 ? '' : 's'} answered` };
      break;
    }
    case 'RESPONSE_TIME': {
      actual = response.responseTime;
      compared = compareNumber(a.comparison, actual, a.target, 'RESPONSE_TIME');
      if (!compared.passed && !compared.problem) compared = { passed: false, problem: `the answer took ${actual} ms` };
      break;
    }
  }
  return { outcome: { ...base, actual, passed: compared.passed }, failure: compared.passed ? null : `Assertion ${describeAssertion(a)} failed: ${compared.problem}` };
}

/**
 * The response's problems beside the assertions: unless an assertion on the response code says
 * otherwise, a code other than NOERROR fails the run; unless one on the answers (their text or
 * count) says otherwise, so does a response with no record of the asked type.
 */
export function implicitProblems(assertions: readonly DnsAssertion[], subject: DnsSubject, query: string, server: string): string[] {
  const problems: string[] = [];
  const { response, recordType } = subject;
  if (!assertions.some((a) => a.source === 'RESPONSE_CODE') && response.rcode !== 'NOERROR') {
    problems.push(`${server} answered ${response.rcode} for ${query} ${recordType}`);
    return problems;
  }
  if (!assertions.some((a) => a.source === 'TEXT_ANSWER' || a.source === 'ANSWER_COUNT') && answerLines(subject).length === 0 && response.rcode === 'NOERROR') {
    problems.push(`${query} has no ${recordType} records (asked ${server})`);
  }
  return problems;
}
