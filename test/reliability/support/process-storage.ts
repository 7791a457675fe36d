import type { VigilStorage } from '@vigil/core';

/** A call that reached the store and what it answered (for calls the model watches). */
export interface StoreCall {
  /** Which process made it. */
  process: string;
  repo: string;
  method: string;
  args: unknown[];
  result: unknown;
  /** Fake time when the store answered. */
  at: number;
  /** When the call was made and answered, on the order of events shared with `StoreTraffic.next()`. */
  issued: number;
  answered: number;
}

const never = <T>() => new Promise<T>(() => {});

/**
 * Every store call of every process goes through here: it counts the calls under way (the driver
 * waits until none is), tells the model of the calls it watches, and kills processes.
 */
export class StoreTraffic {
  pending = 0;
  /** Moves on every call started or answered: the driver settles once it stops moving. */
  activity = 0;
  readonly calls: StoreCall[] = [];
  private seq = 0;

  constructor(
    private readonly now: () => number,
    private readonly watched: (repo: string, method: string) => boolean,
  ) {}

  /** The next number in the order of events (store calls made and answered, and what the model records). */
  next(): number {
    return ++this.seq;
  }

  /** One process's storage: the shared store, until the process dies. */
  view(base: VigilStorage, process: ProcessLife): VigilStorage {
    const repos = new Map<string, unknown>();
    const wrapRepo = (name: string, repo: object) =>
      new Proxy(repo, {
        get: (target, key, receiver) => {
          const value = Reflect.get(target, key, receiver) as unknown;
          if (typeof value !== 'function' || typeof key !== 'string') return value;
          return (...args: unknown[]) => this.call(process, name, key, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), args);
        },
      });
    return new Proxy(base, {
      get: (target, key, receiver) => {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof key !== 'string' || value === null || typeof value !== 'object' || key === 'capabilities') return value;
        if (!repos.has(key)) repos.set(key, wrapRepo(key, value));
        return repos.get(key);
      },
    });
  }

  private call(process: ProcessLife, repo: string, method: string, run: () => Promise<unknown>, args: unknown[]): Promise<unknown> {
    // A dead process hears nothing back, and nothing it asks reaches the store.
    if (process.dead) return never();
    const crash = process.countCall();
    if (crash === 'before') return never();
    this.pending++;
    this.activity++;
    const issued = this.next();
    const done = () => {
      this.pending--;
      this.activity++;
    };
    return Promise.resolve()
      .then(run)
      .then(
        (result) => {
          done();
          if (this.watched(repo, method)) this.calls.push({ process: process.name, repo, method, args, result, at: this.now(), issued, answered: this.next() });
          if (repo === 'schedule' && method === 'claimDue' && Array.isArray(result) && result.length > 0) process.claimed();
          // Died while the store answered (or this call was the last it made): the answer is lost.
          return process.dead ? never() : result;
        },
        (err: unknown) => {
          done();
          return process.dead ? never() : Promise.reject(err);
        },
      );
  }
}

/** Whether a process lives, and the crash planned for it: after so many more store calls. */
export class ProcessLife {
  dead = false;
  private callsLeft: number | null = null;
  private lastReaches = false;
  /** A crash that waits for the process to claim something first (so it dies holding leases). */
  private waiting: { calls: number; lastReaches: boolean } | null = null;
  private readonly onDeath: (() => void)[] = [];

  constructor(readonly name: string) {}

  /**
   * The process dies at its `calls`-th store call from now: that call reaches the store (its
   * answer lost) when `lastReaches`, else it never leaves the process.
   */
  crashAfter(calls: number, lastReaches: boolean, onceItClaims = false): void {
    if (onceItClaims) {
      this.waiting = { calls, lastReaches };
      return;
    }
    this.callsLeft = Math.max(1, calls);
    this.lastReaches = lastReaches;
  }

  /** The process claimed schedule entries: a crash waiting for that starts counting. */
  claimed(): void {
    if (!this.waiting) return;
    const { calls, lastReaches } = this.waiting;
    this.waiting = null;
    this.crashAfter(calls, lastReaches);
  }

  disarm(): void {
    this.callsLeft = null;
    this.waiting = null;
  }

  whenDead(fn: () => void): void {
    this.onDeath.push(fn);
  }

  kill(): void {
    if (this.dead) return;
    this.dead = true;
    for (const fn of this.onDeath) fn();
  }

  /** Counts a call; answers 'before' when the process dies before it leaves, 'after' when it dies with it. */
  countCall(): 'before' | 'after' | null {
    if (this.callsLeft === null) return null;
    this.callsLeft--;
    if (this.callsLeft > 0) return null;
    this.callsLeft = null;
    this.kill();
    // 'after': the call still goes out with its process, the store does it, nobody hears back.
    return this.lastReaches ? 'after' : 'before';
  }
}
