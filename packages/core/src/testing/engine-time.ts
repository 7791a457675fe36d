import type { FakeClock } from './fake-clock.js';

/**
 * Moving a {@link FakeClock} under a running Vigil. Moving the clock fires the engine's timers at
 * once, but what they start (a claim, a run, its result, an alert) goes through the store, one
 * awaited call after another: the engine needs a few turns of the event loop before the next step
 * of the clock. These helpers give it those turns; no wall-clock time passes.
 *
 * They suit a Vigil on in-memory pieces (`memoryStorage()`, `FakeRunner`, `FakeTransport`), where
 * every step finishes within a few turns. Work waiting on real I/O (a socket, a database on
 * another process) needs real time between steps as well, which these helpers do not give.
 */

/** Options of {@link advanceUntil}. */
export interface AdvanceUntilOptions {
  /** How far the clock moves between two looks at the condition. Default 5,000 ms. */
  stepMs?: number;
  /** How much fake time may pass before it gives up and throws. Default 3,600,000 ms (an hour). */
  limitMs?: number;
}

function positive(name: string, value: number): void {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number of milliseconds, got ${value}`);
}

/**
 * Lets the engine finish what the last timers started, without moving the clock: awaits `turns`
 * turns of the event loop (each runs every promise callback queued so far).
 *
 * Use it after `vigil.start()`, after the clock moved by hand (`clock.advance`, `clock.set`), or
 * after {@link advanceUntil} when the step that met the condition may have started more (the
 * alert that follows a run's result), before asserting on what the engine did.
 */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Moves the fake clock on by `ms` in steps of `stepMs` (the last step may be shorter), letting
 * the engine work after each with {@link settle}: its timers (polls, due runs, retries, alert
 * delivery) fire as the clock passes them, and what each starts ends before the next step.
 *
 * Use it to let a known span of time go by ("half an hour of runs"). When waiting for something
 * to happen (a number of runs, an alert), use {@link advanceUntil}: runs fall at a phase inside
 * their interval, so a fixed span may end just before or just after the one you expect.
 */
export async function advance(clock: FakeClock, ms: number, stepMs = 5_000): Promise<void> {
  positive('stepMs', stepMs);
  for (let moved = 0; moved < ms; moved += stepMs) {
    clock.advance(Math.min(stepMs, ms - moved));
    await settle();
  }
}

/**
 * Moves the fake clock on in steps of `stepMs`, letting the engine work after each with
 * {@link settle}, until `condition` holds. The condition is looked at first, before the clock
 * moves, and after each step; it may be async (a query of the store). Throws once `limitMs` of
 * fake time has passed without it holding, so a test that waits for something that never comes
 * fails at once rather than at its timeout.
 *
 * Use it to wait for an outcome ("the third failed run", "the first alert sent") rather than for
 * a fixed time.
 */
export async function advanceUntil(
  clock: FakeClock,
  condition: () => boolean | Promise<boolean>,
  { stepMs = 5_000, limitMs = 3_600_000 }: AdvanceUntilOptions = {},
): Promise<void> {
  positive('stepMs', stepMs);
  for (let moved = 0; !(await condition()); moved += stepMs) {
    if (moved >= limitMs) throw new Error(`condition not met within ${limitMs} ms of fake time`);
    clock.advance(stepMs);
    await settle();
  }
}
