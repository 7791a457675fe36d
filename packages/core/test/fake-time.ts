import type { Clock } from '../src/index.js';
import type { FakeClock } from '../src/testing/index.js';

/** Lets pending promise chains run (the engine awaits the store between steps). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Moves the fake clock on in small steps, letting the engine work between them. */
export async function runFor(clock: FakeClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

/**
 * A view of a shared fake clock for one Vigil: `kill()` drops its timers, so that Vigil dies as a
 * killed process does (nothing of it runs any more, nothing is given back) while time goes on.
 */
export function mortalClock(clock: FakeClock): { clock: Clock; kill: () => void } {
  let dead = false;
  return {
    clock: { now: () => clock.now(), setTimer: (at, fn) => clock.setTimer(at, () => void (dead || fn())) },
    kill: () => {
      dead = true;
    },
  };
}
