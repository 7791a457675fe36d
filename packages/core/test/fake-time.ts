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
