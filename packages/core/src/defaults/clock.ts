import type { Clock } from '../ports/clock.js';

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
