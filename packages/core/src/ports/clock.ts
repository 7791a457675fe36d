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
