import { describe, expect, it } from 'vitest';
import { evaluateAssertions, type ResponseSubject } from '../src/assertions.js';
import { isJsonPath, readJsonPath, RegexSandbox } from '@vigil/core';
import { judgeResponse } from '../src/verdict.js';
import { assertion } from './support.js';

const sandbox = new RegexSandbox(100);
const regex = () => sandbox;
const body = { status: 'ok', count: 3, items: [{ id: 1, tags: ['a', 'b'] }, { id: 2, tags: [] }], owner: null, meta: {}, 'a b': true };
const subject: ResponseSubject = {
  statusCode: 200,
  headers: { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'], 'x-empty': '' },
  body: JSON.stringify(body),
  responseTime: 120,
};
const passes = (a: ReturnType<typeof assertion>, s: ResponseSubject = subject) => evaluateAssertions([a], s, regex)[0]!.outcome.passed;

describe('API assertions', () => {
  it.each([
    ['EQUALS', '200', true], ['EQUALS', '200.0', true], ['EQUALS', '201', false], ['NOT_EQUALS', '201', true],
    ['LESS_THAN', '300', true], ['GREATER_THAN', '199', true], ['GREATER_THAN', '200', false], ['CONTAINS', '20', true], ['NOT_CONTAINS', '5', true],
  ] as const)('STATUS_CODE %s %s: %s', (comparison, target, ok) => {
    expect(passes(assertion('STATUS_CODE', comparison, target))).toBe(ok);
  });

  it.each([
    ['$.status', 'EQUALS', 'ok', true], ['status', 'EQUALS', 'ok', true], ['$.count', 'EQUALS', '3', true], ['$.count', 'LESS_THAN', '4', true],
    ['$.items[0].id', 'EQUALS', '1', true], ['$.items[1].id', 'GREATER_THAN', '1', true], ['$["a b"]', 'EQUALS', 'true', true],
    ['$.items[0]', 'HAS_KEY', 'tags', true], ['$.items[0]', 'NOT_HAS_KEY', 'name', true], ['$.items', 'HAS_KEY', '0', false],
    ['$.items[0].tags', 'HAS_VALUE', 'b', true], ['$.items[0].tags', 'NOT_HAS_VALUE', 'c', true], ['$.items[0]', 'HAS_VALUE', '1', true],
    ['$.owner', 'IS_NULL', '', true], ['$.nothing', 'IS_NULL', '', true], ['$.status', 'NOT_NULL', '', true], ['$.owner', 'NOT_NULL', '', false],
    ['$.meta', 'IS_EMPTY', '', true], ['$.items[1].tags', 'IS_EMPTY', '', true], ['$.items', 'NOT_EMPTY', '', true], ['$.nothing', 'IS_EMPTY', '', true],
    ['$.items', 'CONTAINS', '"tags":["a"', true], ['$.status', 'NOT_EQUALS', 'down', true], ['$.nothing', 'NOT_EQUALS', 'x', true], ['$.nothing', 'EQUALS', 'x', false],
    ['', 'HAS_KEY', 'items', true],
  ] as const)('JSON_BODY %s %s %s: %s', (property, comparison, target, ok) => {
    expect(passes(assertion('JSON_BODY', comparison, target, { property }))).toBe(ok);
  });

  it.each([
    ['content-type', 'EQUALS', 'application/json', true], ['Content-Type', 'CONTAINS', 'json', true], ['set-cookie', 'EQUALS', 'a=1, b=2', true],
    ['x-empty', 'IS_EMPTY', '', true], ['x-missing', 'IS_EMPTY', '', true], ['x-missing', 'NOT_EMPTY', '', false], ['', 'HAS_KEY', 'Content-Type', true],
    ['', 'NOT_HAS_KEY', 'x-missing', true], ['', 'HAS_VALUE', 'application/json', true],
  ] as const)('HEADERS %s %s %s: %s', (property, comparison, target, ok) => {
    expect(passes(assertion('HEADERS', comparison, target, { property }))).toBe(ok);
  });

  it('TEXT_BODY compares the body as text, or what a regex extracts from it', () => {
    expect(passes(assertion('TEXT_BODY', 'CONTAINS', '"status":"ok"'))).toBe(true);
    expect(passes(assertion('TEXT_BODY', 'EQUALS', 'ok', { regex: '"status":"(\\w+)"' }))).toBe(true);
    expect(passes(assertion('TEXT_BODY', 'IS_EMPTY', '', { regex: 'nope(\\d+)' }))).toBe(true);
    expect(passes(assertion('TEXT_BODY', 'NOT_EMPTY', ''), { ...subject, body: '' })).toBe(false);
    const [stuck] = evaluateAssertions([assertion('TEXT_BODY', 'CONTAINS', 'x', { regex: '(a+)+$' })], { ...subject, body: `${'a'.repeat(40)}!` }, regex);
    expect(stuck!.failure).toContain('ran longer than 100 ms');
  });

  it('RESPONSE_TIME compares numbers; a text comparison does not apply', () => {
    expect(passes(assertion('RESPONSE_TIME', 'LESS_THAN', '200'))).toBe(true);
    expect(passes(assertion('RESPONSE_TIME', 'GREATER_THAN', '200'))).toBe(false);
    const [empty] = evaluateAssertions([assertion('RESPONSE_TIME', 'IS_EMPTY')], subject, regex);
    expect(empty!.failure).toBe('Assertion RESPONSE_TIME IS_EMPTY failed: IS_EMPTY does not apply to RESPONSE_TIME');
  });

  it('LESS_THAN on a value or target that is not a number fails and says which', () => {
    const [value, target] = evaluateAssertions([
      assertion('JSON_BODY', 'LESS_THAN', '5', { property: 'status' }),
      assertion('JSON_BODY', 'LESS_THAN', 'five', { property: 'count' }),
    ], subject, regex);
    expect(value!.failure).toBe('Assertion JSON_BODY property "status" LESS_THAN "5" failed: the value "ok" is not a number');
    expect(target!.failure).toBe('Assertion JSON_BODY property "count" LESS_THAN "five" failed: the target "five" is not a number');
  });

  it('records the actual value, cut at 1,000 characters', () => {
    const long = { ...subject, body: JSON.stringify({ text: 'x'.repeat(5000) }) };
    const [outcome] = evaluateAssertions([assertion('JSON_BODY', 'EQUALS', 'y', { property: 'text' })], long, regex);
    expect((outcome!.outcome.actual as string).length).toBe(1001);
    expect(outcome!.outcome).toMatchObject({ source: 'JSON_BODY', comparison: 'EQUALS', property: 'text', target: 'y', passed: false });
  });
});

describe('JSON paths', () => {
  it('read dotted names, indexes and quoted names, with or without $', () => {
    expect(readJsonPath(body, '$.items[0].tags[1]')).toBe('b');
    expect(readJsonPath(body, "$['a b']")).toBe(true);
    expect(readJsonPath(body, 'items.1.id')).toBe(2);
    expect(readJsonPath(body, '$.items[5]')).toBeUndefined();
    expect(readJsonPath(body, '$')).toEqual(body);
    expect([isJsonPath('$.a[0].b'), isJsonPath('a.b'), isJsonPath('$.a[')]).toEqual([true, true, false]);
  });
});

describe('the verdict on a response', () => {
  const judge = (over: Partial<Parameters<typeof judgeResponse>[0]>) =>
    judgeResponse({ assertions: [], subject, shouldFail: false, degradedMs: null, maxMs: null, regex, ...over });

  it('degraded over degradedResponseTime, failing over maxResponseTime (and then not degraded)', () => {
    expect(judge({ degradedMs: 100, maxMs: 1000 })).toMatchObject({ degraded: true, overMax: false, problems: [], failureKind: null });
    expect(judge({ degradedMs: 100, maxMs: 110 })).toMatchObject({
      degraded: false, overMax: true, failureKind: 'TIMEOUT', problems: ["The response took 120 ms, over the check's maxResponseTime of 110 ms"],
    });
    expect(judge({ degradedMs: 120, maxMs: 120 })).toMatchObject({ degraded: false, overMax: false });
  });

  it('a failing response over degradedResponseTime is a failure, not also degraded', () => {
    expect(judge({ degradedMs: 100, maxMs: 1000, assertions: [assertion('STATUS_CODE', 'EQUALS', '500')] })).toMatchObject({
      degraded: false, overMax: false, failureKind: 'ASSERTION',
    });
  });

  it('an assertion failure is an ASSERTION even when the answer was also too slow', () => {
    const v = judge({ maxMs: 50, assertions: [assertion('STATUS_CODE', 'EQUALS', '500')] });
    expect(v.failureKind).toBe('ASSERTION');
    expect(v.problems).toHaveLength(2);
  });
});
