import type { Cancel, Clock } from '../ports/clock.js';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when a test moves it. Timers fire in order of their time (and of
 * creation for equal times) as `advance` or `set` passes them.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: PendingTimer[] = [];
  private seq = 0;

  constructor(start: Date | string | number = '2026-01-01T00:00:00.000Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  setTimer(at: Date, fn: () => void): Cancel {
    const timer: PendingTimer = { at: at.getTime(), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): Date {
    return this.set(this.current + ms);
  }

  /** Moves time to `to` (never backwards), firing every timer due up to it. */
  set(to: Date | string | number): Date {
    const target = new Date(to).getTime();
    if (target < this.current) throw new Error('FakeClock cannot move backwards');
    for (;;) {
      const next = this.nextTimer();
      if (!next || next.at > target) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = target;
    return this.now();
  }

  /** How many timers are waiting. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  private nextTimer(): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
