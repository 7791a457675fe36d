import { describe, expect, it } from 'vitest';
import { compareNumber, compareValue } from '../src/runner-kit/assertion-values.js';

describe('compareValue', () => {
  it.each([
    ['EQUALS', 200, '200', true],
    ['EQUALS', 200, '200.0', true],
    ['EQUALS', 'ok', 'ok', true],
    ['EQUALS', null, '', false],
    ['NOT_EQUALS', 'ok', 'OK', true],
    ['CONTAINS', { status: 'ok' }, '"status"', true],
    ['NOT_CONTAINS', undefined, 'x', true],
    ['IS_EMPTY', [], '', true],
    ['NOT_EMPTY', {}, '', false],
    ['LESS_THAN', '9', '10', true],
    ['GREATER_THAN', 11, '10', true],
    ['HAS_KEY', { id: 1 }, 'id', true],
    ['NOT_HAS_KEY', ['id'], 'id', true],
    ['HAS_VALUE', ['a', 2], '2', true],
    ['NOT_HAS_VALUE', { a: 'x' }, 'x', false],
    ['IS_NULL', undefined, '', true],
    ['NOT_NULL', 0, '', true],
  ] as const)('%s %j against %j → %s', (comparison, value, target, passed) => {
    expect(compareValue(comparison, value, target).passed).toBe(passed);
  });

  it('reads header names without case when asked', () => {
    expect(compareValue('HAS_KEY', { 'content-type': 'x' }, 'Content-Type').passed).toBe(false);
    expect(compareValue('HAS_KEY', { 'content-type': 'x' }, 'Content-Type', { caseInsensitiveKeys: true }).passed).toBe(true);
  });

  it('says why an ordering cannot be judged', () => {
    expect(compareValue('LESS_THAN', '5', 'ten')).toEqual({ passed: false, problem: 'the target "ten" is not a number' });
    expect(compareValue('LESS_THAN', 'abc', '10')).toEqual({ passed: false, problem: 'the value "abc" is not a number' });
    expect(compareValue('GREATER_THAN', null, '10')).toEqual({ passed: false, problem: 'there was no value to compare' });
    expect(compareValue('SOUNDS_LIKE', 'a', 'a')).toEqual({ passed: false, problem: 'SOUNDS_LIKE is not a comparison' });
  });
});

describe('compareNumber', () => {
  it.each([
    ['EQUALS', 5, '5', true],
    ['NOT_EQUALS', 5, '5', false],
    ['LESS_THAN', 4.5, '5', true],
    ['GREATER_THAN', 5, '5', false],
  ] as const)('%s %d against %j → %s', (comparison, actual, target, passed) => {
    expect(compareNumber(comparison, actual, target, 'ANSWER_COUNT')).toEqual({ passed });
  });

  it('refuses text comparisons and targets that are not numbers, naming the measure', () => {
    expect(compareNumber('CONTAINS', 5, '5', 'PACKET_LOSS').problem).toBe('CONTAINS does not apply to PACKET_LOSS (use EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN)');
    expect(compareNumber('LESS_THAN', 5, '', 'LATENCY').problem).toBe('the target "" is not a number');
  });
});
