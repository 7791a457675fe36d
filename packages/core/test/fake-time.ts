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

/**
 * Stops a Vigil whose runs may still be under way on the fake clock: the clock moves on, a second
 * at a time, until they have ended (a test's last runs, or a check's own schedule starting one late).
 */
export async function stopOnClock(vigil: { stop(deadlineMs?: number): Promise<void> }, clock: FakeClock, seconds = 600): Promise<void> {
  let stopped = false;
  const stopping = vigil.stop(0).finally(() => {
    stopped = true;
  });
  for (let i = 0; i < seconds && !stopped; i++) {
    clock.advance(1_000);
    await settle();
  }
  await stopping;
}
