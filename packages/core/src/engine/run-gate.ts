/**
 * At most `limit` holders at once; the rest wait in arrival order. A wait ends early when its
 * signal aborts (the run was cancelled) or its deadline passes (the slot's lease would run out).
 */
export class RunGate {
  private held = 0;
  private readonly waiting: { admit: () => void }[] = [];

  constructor(readonly limit: number) {}

  get active(): number {
    return this.held;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves to a release function once admitted, or to null when the signal aborts or `deadline` passes first. */
  enter(signal: AbortSignal, wait: (ms: number, done: () => void) => () => void, deadline?: number, now = Date.now()): Promise<(() => void) | null> {
    if (signal.aborted) return Promise.resolve(null);
    if (this.held < this.limit) {
      this.held++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const entry = {
        admit: () => {
          cleanup();
          this.held++;
          resolve(this.releaser());
        },
      };
      let settled = false;
      let cancelTimer = () => {};
      const cleanup = () => {
        settled = true;
        cancelTimer();
        signal.removeEventListener('abort', giveUp);
      };
      const giveUp = () => {
        if (settled) return;
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        cleanup();
        resolve(null);
      };
      this.waiting.push(entry);
      signal.addEventListener('abort', giveUp, { once: true });
      // A clock may call a timer that is already due at once, inside setTimer.
      if (deadline !== undefined) {
        const cancel = wait(Math.max(0, deadline - now), giveUp);
        if (settled) cancel();
        else cancelTimer = cancel;
      }
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      this.waiting.shift()?.admit();
    };
  }
}
