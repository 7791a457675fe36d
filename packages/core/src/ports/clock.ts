import { createToken } from './token.js';

/** Cancels a timer set with Clock.setTimer. Calling it twice is harmless. */
export type Cancel = () => void;

/** Time, as a port, so that rules and the engine run under a fake clock in tests. */
export interface Clock {
  now(): Date;
  /** Calls `fn` once at `at` (at once if `at` is past). */
  setTimer(at: Date, fn: () => void): Cancel;
}

export const CLOCK = createToken<Clock>('vigil.clock');

/** The real clock. One `setTimeout` per timer; the scheduler keeps only one at a time. */
export const systemClock: Clock = {
  now: () => new Date(),
  setTimer(at, fn) {
    // setTimeout caps at about 24.8 days; longer waits are re-armed in steps.
    const MAX = 2_147_000_000;
    let handle: NodeJS.Timeout | undefined;
    let cancelled = false;
    const arm = () => {
      const wait = at.getTime() - Date.now();
      handle = setTimeout(() => {
        if (cancelled) return;
        if (at.getTime() - Date.now() > 0) arm();
        else fn();
      }, Math.max(0, Math.min(wait, MAX)));
      handle.unref?.();
    };
    arm();
    return () => {
      cancelled = true;
      if (handle) clearTimeout(handle);
    };
  },
};
