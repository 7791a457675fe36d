import type { Clock } from '../ports/clock.js';

/**
 * Runs `work` under a time limit on the engine's clock. `work` gets a signal that aborts when the
 * limit passes or `outer` aborts; whichever comes first, the answer is `expired(cancelled)`
 * (`cancelled`: `outer` aborted), even if `work` ignores its signal and never settles. `expired`
 * may throw, and then so does this.
 */
export async function withTimeLimit<T>(
  clock: Clock,
  limitMs: number,
  work: (signal: AbortSignal) => Promise<T>,
  expired: (cancelled: boolean) => T,
  outer?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  const cancelTimer = clock.setTimer(new Date(clock.now().getTime() + limitMs), () => controller.abort(new Error('time limit')));
  try {
    const ended = new Promise<T>((resolve, reject) => {
      controller.signal.addEventListener('abort', () => {
        try {
          resolve(expired(outer?.aborted === true));
        } catch (err) {
          reject(err);
        }
      }, { once: true });
    });
    return await Promise.race([work(controller.signal), ended]);
  } finally {
    cancelTimer();
    outer?.removeEventListener('abort', onAbort);
  }
}
