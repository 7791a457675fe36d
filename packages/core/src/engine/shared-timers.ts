/*
 * Timers that share their time: the watch of every job claimed in one batch ends at the same
 * moment (the batch's lease), so one clock timer serves them all instead of one timer a run.
 */
import type { Cancel, Clock } from '../ports/clock.js';

export class SharedTimers {
  /** Callbacks by the time they are due, each time with its one clock timer. */
  private readonly byTime = new Map<number, { calls: Set<() => void>; cancel: Cancel }>();

  constructor(private readonly clock: Clock) {}

  /** Calls `fn` once at `at` (ms since the epoch); answers what cancels it. */
  at(at: number, fn: () => void): Cancel {
    const entry = () => fn();
    let slot = this.byTime.get(at);
    if (slot) slot.calls.add(entry);
    else {
      // Registered before the clock is asked: a clock may call a past timer at once, inside setTimer.
      const calls = new Set<() => void>([entry]);
      const mine = { calls, cancel: () => {} };
      this.byTime.set(at, (slot = mine));
      mine.cancel = this.clock.setTimer(new Date(at), () => {
        if (this.byTime.get(at) === mine) this.byTime.delete(at);
        for (const call of calls) call();
      });
    }
    const { calls } = slot;
    return () => {
      if (!calls.delete(entry) || calls.size > 0 || this.byTime.get(at)?.calls !== calls) return;
      this.byTime.delete(at);
      slot.cancel();
    };
  }

  /** How many times have a timer set (for tests). */
  get size(): number {
    return this.byTime.size;
  }
}
