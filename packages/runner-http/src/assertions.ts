import {
  asNumber, asText, compareValue, cutText, NUMERIC_COMPARISONS, quoteText, readJsonPath, takesTarget,
  type ApiAssertion, type AssertionOutcome, type Compared, type RegexSandbox,
} from '@vigil/core';

/** Longest actual value kept in an outcome; a body may be a megabyte and results are stored. */
export const MAX_RECORDED_ACTUAL = 1000;

/** What assertions look at: one HTTP response. */
export interface ResponseSubject {
  statusCode: number;
  /** Lower-case names, as undici gives them. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
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

/** The assertion as a person reads it: `JSON_BODY property "$.status" EQUALS "ok"`. */
export function describeAssertion(a: ApiAssertion): string {
  const parts: string[] = [a.source];
  if (a.property) parts.push(`${a.source === 'HEADERS' ? 'header' : 'property'} ${JSON.stringify(a.property)}`);
  if (a.regex) parts.push(`regex /${a.regex}/`);
  parts.push(a.comparison);
  if (takesTarget(a.comparison)) parts.push(a.source === 'STATUS_CODE' || a.source === 'RESPONSE_TIME' ? a.target : JSON.stringify(a.target));
  return parts.join(' ');
}

/** One header's value, several values joined as HTTP joins them; undefined when absent. */
export function headerValue(headers: ResponseSubject['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

type Selected = { ok: true; value: unknown } | { ok: false; problem: string };

/** The value an assertion compares: its source, then the property in it, then what the regex extracts. */
function select(a: ApiAssertion, s: ResponseSubject, json: () => Selected, regex: () => RegexSandbox): Selected {
  let value: unknown;
  switch (a.source) {
    case 'STATUS_CODE':
      return { ok: true, value: s.statusCode };
    case 'RESPONSE_TIME':
      return { ok: true, value: s.responseTime };
    case 'TEXT_BODY':
      value = s.body;
      break;
    case 'JSON_BODY': {
      const parsed = json();
      if (!parsed.ok) return parsed;
      value = a.property ? readJsonPath(parsed.value, a.property) : parsed.value;
      break;
    }
    case 'HEADERS':
      value = a.property ? headerValue(s.headers, a.property) : s.headers;
      break;
  }
  if (a.regex) {
    const text = asText(value);
    if (text === null) return { ok: true, value: undefined };
    const extracted = regex().extract(a.regex, text);
    if (!extracted.ok) return { ok: false, problem: extracted.problem };
    value = extracted.value ?? undefined;
  }
  return { ok: true, value };
}

/** HAS_KEY on the headers as a whole reads header names without case. */
function compare(a: ApiAssertion, value: unknown): Compared {
  return compareValue(a.comparison, value, a.target, { caseInsensitiveKeys: a.source === 'HEADERS' && !a.property });
}

function describeActual(a: ApiAssertion, value: unknown): string {
  if (a.source === 'STATUS_CODE') return `the status code was ${String(value)}`;
  if (a.source === 'RESPONSE_TIME') return `the response took ${String(value)} ms`;
  if (value === undefined || value === null) {
    if (a.regex && value === undefined) return `nothing matched regex /${a.regex}/`;
    if (a.source === 'HEADERS' && a.property) return `the response has no ${a.property} header`;
    if (a.property && value === undefined) return `property ${JSON.stringify(a.property)} is not in the body`;
    return value === null ? 'the value was null' : 'there was no value';
  }
  const text = asText(value) ?? '';
  const what = a.property || a.regex ? 'the value was' : a.source === 'HEADERS' ? 'the headers were' : 'the body was';
  return text === '' ? `${what} empty` : `${what} ${quoteText(text)}`;
}

/** The value recorded as `actual`: numbers as they are, anything else as text cut to a readable length. */
function recorded(value: unknown): string | number | null {
  if (typeof value === 'number') return value;
  const text = asText(value);
  return text === null ? null : cutText(text, MAX_RECORDED_ACTUAL);
}

/**
 * Evaluates a response's assertions in order. The body is parsed as JSON once, when the first
 * JSON_BODY assertion asks for it.
 */
export function evaluateAssertions(assertions: readonly ApiAssertion[], subject: ResponseSubject, regex: () => RegexSandbox): EvaluatedAssertion[] {
  let parsed: Selected | null = null;
  const json = (): Selected => {
    if (parsed) return parsed;
    try {
      parsed = { ok: true, value: JSON.parse(subject.body) as unknown };
    } catch {
      parsed = { ok: false, problem: subject.body === '' ? 'the body is empty, not JSON' : 'the body is not JSON' };
    }
    return parsed;
  };
  return assertions.map((a) => {
    const base = { source: a.source, comparison: a.comparison, property: a.property ?? '', target: a.target ?? '' };
    if ((a.source === 'STATUS_CODE' || a.source === 'RESPONSE_TIME') && !NUMERIC_COMPARISONS.has(a.comparison) && a.comparison !== 'CONTAINS' && a.comparison !== 'NOT_CONTAINS') {
      return {
        outcome: { ...base, actual: a.source === 'STATUS_CODE' ? subject.statusCode : subject.responseTime, passed: false },
        failure: `Assertion ${describeAssertion(a)} failed: ${a.comparison} does not apply to ${a.source}`,
      };
    }
    const selected = select(a, subject, json, regex);
    if (!selected.ok) {
      return { outcome: { ...base, actual: null, passed: false }, failure: `Assertion ${describeAssertion(a)} failed: ${selected.problem}` };
    }
    const { passed, problem } = compare(a, selected.value);
    return {
      outcome: { ...base, actual: recorded(selected.value), passed },
      failure: passed ? null : `Assertion ${describeAssertion(a)} failed: ${problem ?? describeActual(a, selected.value)}`,
    };
  });
}
