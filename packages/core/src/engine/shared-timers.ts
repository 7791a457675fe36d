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
    let slot = this.byTime.get(at);
    if (!slot) {
      const calls = new Set<() => void>();
      const cancel = this.clock.setTimer(new Date(at), () => {
        this.byTime.delete(at);
        for (const call of calls) call();
      });
      this.byTime.set(at, (slot = { calls, cancel }));
    }
    const entry = () => fn();
    const { calls } = slot;
    calls.add(entry);
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
