import { describe, expect, it } from 'vitest';
import { matchesTags, selectSessionTargets } from '../src/rules/session-targets.js';

describe('session targets', () => {
  it('matchTags: outer OR, inner AND, ! negates; no filter matches all', () => {
    expect(matchesTags(['a', 'b'], [['a', 'b']])).toBe(true);
    expect(matchesTags(['a'], [['a', 'b']])).toBe(false);
    expect(matchesTags(['a'], [['x'], ['a']])).toBe(true);
    expect(matchesTags(['a', 'b'], [['a', '!b']])).toBe(false);
    expect(matchesTags(['a'], [['a', '!b']])).toBe(true);
    expect(matchesTags([], [['!b']])).toBe(true);
    expect(matchesTags([], undefined)).toBe(true);
    expect(matchesTags(['z'], [])).toBe(true);
  });

  const checks = [
    { id: 'c1', tags: ['api'], activated: true, groupId: null },
    { id: 'c2', tags: ['web'], activated: true, groupId: 1 },
    { id: 'c3', tags: ['api'], activated: false, groupId: null },
    { id: 'c4', tags: ['api'], activated: true, groupId: 2 },
  ];
  const groups = new Map([
    [1, { tags: ['prod'], activated: true }],
    [2, { tags: ['prod'], activated: false }],
  ]);

  it('without a target: every eligible check (activated, with an activated group)', () => {
    expect(selectSessionTargets(checks, groups).map((c) => c.id)).toEqual(['c1', 'c2']);
  });

  it('checkId selects eligible checks by id', () => {
    expect(selectSessionTargets(checks, groups, { checkId: ['c2', 'c3', 'C1'] }).map((c) => c.id)).toEqual(['c1', 'c2']);
  });

  it('group tags count as the check\'s, and both filters must hold together', () => {
    expect(selectSessionTargets(checks, groups, { matchTags: [['prod']] }).map((c) => c.id)).toEqual(['c2']);
    expect(selectSessionTargets(checks, groups, { matchTags: [['api'], ['web']] }).map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(selectSessionTargets(checks, groups, { checkId: ['c1'], matchTags: [['web']] })).toEqual([]);
  });
});
