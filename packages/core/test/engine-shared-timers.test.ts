import { describe, expect, it } from 'vitest';
import { SharedTimers } from '../src/engine/shared-timers.js';
import { FakeClock } from '../src/testing/fake-clock.js';

describe('SharedTimers', () => {
  it('sets one clock timer for every call due at the same time, and calls each once', () => {
    const clock = new FakeClock(0);
    const timers = new SharedTimers(clock);
    const called: string[] = [];
    timers.at(1_000, () => called.push('a'));
    timers.at(1_000, () => called.push('b'));
    timers.at(2_000, () => called.push('c'));
    expect(clock.pendingTimers).toBe(2);
    clock.advance(1_000);
    expect(called).toEqual(['a', 'b']);
    clock.advance(1_000);
    expect(called).toEqual(['a', 'b', 'c']);
    expect(timers.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('cancels one call and keeps the others of its time; the last cancel removes the clock timer', () => {
    const clock = new FakeClock(0);
    const timers = new SharedTimers(clock);
    const called: string[] = [];
    const cancelA = timers.at(500, () => called.push('a'));
    const cancelB = timers.at(500, () => called.push('b'));
    cancelA();
    cancelA();
    expect(clock.pendingTimers).toBe(1);
    cancelB();
    expect(clock.pendingTimers).toBe(0);
    expect(timers.size).toBe(0);
    timers.at(500, () => called.push('c'));
    clock.advance(500);
    expect(called).toEqual(['c']);
  });

  it('a cancel after its time has passed changes nothing, and a call set for a past time runs at once', () => {
    const clock = new FakeClock(0);
    const timers = new SharedTimers(clock);
    const called: string[] = [];
    const cancel = timers.at(100, () => called.push('a'));
    clock.advance(200);
    cancel();
    timers.at(100, () => called.push('late'));
    clock.advance(0);
    expect(called).toEqual(['a', 'late']);
    expect(timers.size).toBe(0);
  });
});

describe('SharedTimers with a clock that calls a past timer at once', () => {
  it('calls it once, and a later call for that time gets a timer of its own', () => {
    const fired: string[] = [];
    const clock = { now: () => new Date(1_000), setTimer: (_at: Date, fn: () => void) => (fn(), () => {}) };
    const timers = new SharedTimers(clock);
    timers.at(500, () => fired.push('a'));
    timers.at(500, () => fired.push('b'));
    expect(fired).toEqual(['a', 'b']);
    expect(timers.size).toBe(0);
  });
});
