import { performance } from 'node:perf_hooks';

export interface Swept {
  /** Called on every tick with the monotonic time; ends its exchange when one of its limits passed. */
  sweep(now: number): void;
}

/**
 * One interval timer for the time limits, quiet periods and abort signals of all exchanges in
 * flight, instead of two timers and an abort listener per exchange, which measured about a tenth
 * of a loopback check's CPU in bench/tcp-runner.bench.mjs (undici's coarse timers answer the same
 * problem). A limit or an abort takes effect up to one tick late; measured times do not depend on
 * the tick, since they come from the socket's own events.
 */
export class Sweeper {
  private readonly swept = new Set<Swept>();
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly tickMs: number) {}

  add(item: Swept): void {
    this.swept.add(item);
    this.timer ??= setInterval(() => this.tick(), this.tickMs);
  }

  delete(item: Swept): void {
    this.swept.delete(item);
    if (this.swept.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private tick(): void {
    const now = performance.now();
    for (const item of this.swept) item.sweep(now);
  }
}
