import type { Cancel, Clock } from '@vigil/core';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  view: ClockView;
}

/**
 * One process's view of the shared fake time. Killing it drops its timers and ignores the ones it
 * sets later: a process that died never wakes up again, whatever it was waiting for.
 */
export class ClockView implements Clock {
  dead = false;

  constructor(private readonly shared: SharedClock) {}

  now(): Date {
    return this.shared.now();
  }

  setTimer(at: Date, fn: () => void): Cancel {
    if (this.dead) return () => {};
    return this.shared.add(at.getTime(), fn, this);
  }

  kill(): void {
    this.dead = true;
    this.shared.drop(this);
  }
}

/**
 * Fake time shared by several processes (each with its own ClockView). The driver moves it: it
 * asks for the next timer, moves time there and fires what is due; nothing fires on its own.
 */
export class SharedClock {
  private current: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start: string | number) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  get ms(): number {
    return this.current;
  }

  view(): ClockView {
    return new ClockView(this);
  }

  add(at: number, fn: () => void, view: ClockView): Cancel {
    const timer: Timer = { at, seq: this.seq++, fn, view };
    this.timers.push(timer);
    return () => {
      const i = this.timers.indexOf(timer);
      if (i >= 0) this.timers.splice(i, 1);
    };
  }

  drop(view: ClockView): void {
    this.timers = this.timers.filter((t) => t.view !== view);
  }

  /** When the earliest timer is due (Infinity when none is set). */
  nextAt(): number {
    let best = Infinity;
    for (const t of this.timers) if (t.at < best) best = t.at;
    return best;
  }

  /** Moves time to `to` without firing anything (never backwards). */
  moveTo(to: number): void {
    if (to < this.current) throw new Error('the shared clock cannot move backwards');
    this.current = to;
  }

  /**
   * Fires the earliest timer due by now (of equal times, the first set); answers whether one fired.
   * One at a time: the driver lets the work it starts settle before the next, as an event loop does.
   */
  fireNext(): boolean {
    let best: Timer | undefined;
    for (const t of this.timers) {
      if (t.at <= this.current && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    if (!best) return false;
    this.timers.splice(this.timers.indexOf(best), 1);
    best.fn();
    return true;
  }
}
