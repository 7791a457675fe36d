import type { FakeClock } from '@vigil/core/testing';

/**
 * Lets the engine finish what the last timers started: it awaits the store between steps, so a
 * few turns of the event loop pass (no wall-clock time does).
 */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Moves the fake clock on by `ms` in steps of `stepMs`, letting the engine work after each: its
 * timers (polls, due runs, retries, alert delivery) fire as the clock passes them.
 */
export async function advance(clock: FakeClock, ms: number, stepMs = 5_000): Promise<void> {
  for (let moved = 0; moved < ms; moved += stepMs) {
    clock.advance(Math.min(stepMs, ms - moved));
    await settle();
  }
}

/** Moves the clock on until `condition` holds; fails after `limitMs` of fake time. */
export async function advanceUntil(
  clock: FakeClock,
  condition: () => boolean | Promise<boolean>,
  { stepMs = 5_000, limitMs = 3_600_000 } = {},
): Promise<void> {
  for (let moved = 0; !(await condition()); moved += stepMs) {
    if (moved >= limitMs) throw new Error(`condition not met within ${limitMs} ms of fake time`);
    clock.advance(stepMs);
    await settle();
  }
}
