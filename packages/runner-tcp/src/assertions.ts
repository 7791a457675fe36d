import {
  asNumber, asText, compareNumber, compareValue, cutText, quoteText, readJsonPath,
  type AssertionOutcome, type Compared, type RegexSandbox, type TcpAssertion,
} from '@vigil/core';

/** Longest actual value kept in an outcome; a response may be 64 KiB and results are stored. */
export const MAX_RECORDED_ACTUAL = 1000;

export interface AssertionSubject {
  /** The response, decoded as UTF-8. */
  responseData: string;
  /** Milliseconds. */
  responseTime: number;
}

export interface EvaluatedAssertion {
  outcome: AssertionOutcome;
  /** Why it failed, in words; null when it passed. */
  failure: string | null;
}

/** A finite number written as text (surrounding whitespace allowed), or null. */
export { asNumber };

/** The assertion as a person would read it: `RESPONSE_DATA property "status" CONTAINS "ok"`. */
export function describeAssertion(a: TcpAssertion): string {
  const parts: string[] = [a.source];
  if (a.property) parts.push(`property ${JSON.stringify(a.property)}`);
  if (a.regex) parts.push(`regex /${a.regex}/`);
  parts.push(a.comparison);
  if (a.comparison !== 'IS_EMPTY' && a.comparison !== 'NOT_EMPTY') {
    parts.push(a.source === 'RESPONSE_TIME' ? a.target : JSON.stringify(a.target));
  }
  return parts.join(' ');
}

/** Reads `status`, `$.data.items[0].id` or `$["a b"]` from a parsed JSON value. */
export const readProperty = readJsonPath;

type Selected = { ok: true; value: unknown } | { ok: false; problem: string };

/** The value an assertion compares: the data, then its property, then what the regex extracts. */
function select(a: TcpAssertion, data: string, regex: () => RegexSandbox): Selected {
  let value: unknown = data;
  if (a.property) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return { ok: false, problem: `the response is not JSON, so property ${JSON.stringify(a.property)} cannot be read` };
    }
    value = readProperty(parsed, a.property) ?? null;
  }
  if (a.regex) {
    const text = asText(value);
    if (text === null) return { ok: true, value: null };
    const extracted = regex().extract(a.regex, text);
    if (!extracted.ok) return { ok: false, problem: extracted.problem };
    value = extracted.value;
  }
  return { ok: true, value };
}

function compareText(a: TcpAssertion, value: unknown): Compared {
  // TCP data is text: a value equals its target as text, never as a number (`1.0` is not `1`).
  const equality = a.comparison === 'EQUALS' || a.comparison === 'NOT_EQUALS';
  return compareValue(a.comparison, equality ? asText(value) : value, a.target);
}

function describeActual(value: unknown, a: TcpAssertion): string {
  if (value === null || value === undefined) {
    if (a.regex) return `nothing matched regex /${a.regex}/`;
    if (a.property) return `property ${JSON.stringify(a.property)} is not in the response`;
    return 'there was no value';
  }
  const text = asText(value) ?? '';
  if (text === '') return a.property || a.regex ? 'the value was empty' : 'the response was empty';
  return `${a.property || a.regex ? 'the value was' : 'the response was'} ${quoteText(text)}`;
}

/** Evaluates one assertion against a response; a failure says which assertion and what was seen. */
export function evaluateAssertion(a: TcpAssertion, subject: AssertionSubject, regex: () => RegexSandbox): EvaluatedAssertion {
  const property = a.property ?? '';
  const target = a.target ?? '';
  if (a.source === 'RESPONSE_TIME') {
    const { passed, problem } = compareNumber(a.comparison, subject.responseTime, a.target, 'RESPONSE_TIME');
    const outcome = { source: a.source, comparison: a.comparison, property, target, actual: subject.responseTime, passed };
    const failure = passed ? null : `Assertion ${describeAssertion(a)} failed: ${problem ?? `the response took ${subject.responseTime} ms`}`;
    return { outcome, failure };
  }

  const selected = property || a.regex ? select(a, subject.responseData, regex) : { ok: true as const, value: subject.responseData };
  if (!selected.ok) {
    const outcome = { source: a.source, comparison: a.comparison, property, target, actual: null, passed: false };
    return { outcome, failure: `Assertion ${describeAssertion(a)} failed: ${selected.problem}` };
  }
  const { passed, problem } = compareText(a, selected.value);
  const text = asText(selected.value);
  const outcome = { source: a.source, comparison: a.comparison, property, target, actual: text === null ? null : cutText(text, MAX_RECORDED_ACTUAL), passed };
  return { outcome, failure: passed ? null : `Assertion ${describeAssertion(a)} failed: ${problem ?? describeActual(selected.value, a)}` };
}
