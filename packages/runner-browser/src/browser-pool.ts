import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core';
import type { Chromium } from './chromium.js';
import { PageRecorder } from './page-recorder.js';
import { ScriptProcess, type ScriptProcessOptions } from './script-process.js';
import type { TargetProxy } from '@vigil/core';

/** A pooled browser and, when the pool is fenced by a target policy, the proxy all its traffic goes through. */
export interface PooledChromium extends Chromium {
  readonly proxy: TargetProxy | null;
}

/** What a run gets: a fresh incognito context with one page, and a script process connected to its browser. */
export interface Lease {
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly process: ScriptProcess;
  /** Already watching the page, so a run starts recording at once. */
  readonly recorder: PageRecorder;
  /** Pages of the browser's default context that were open before the run (the rest are the run's). */
  readonly defaultPages: ReadonlySet<Page>;
  /** The browser's target-policy proxy; null in a pool that is not fenced. */
  readonly proxy: TargetProxy | null;
}

interface Slot {
  chromium: PooledChromium;
  browser: Browser;
  runs: number;
  busy: boolean;
  dead: boolean;
  /** The next runs' contexts and processes, made ahead (also while a run is going on). */
  ready: Promise<Lease>[];
  /** Contexts of prepared runs, which cleaning up after a run leaves alone. */
  prepared: Set<string>;
  /** Making a context and cleaning up take turns, so that cleaning never meets a context not yet in `prepared`. */
  contexts: Promise<unknown>;
  session: Promise<CDPSession | null> | null;
}

export interface PoolOptions {
  size: number;
  maxRunsPerBrowser: number;
  /** Runs prepared ahead per browser. */
  prepareAhead: number;
  viewport: { width: number; height: number } | null;
  /** Starts a browser; `fenced`: with a target-policy proxy that all its traffic goes through. */
  launch: (fenced: boolean) => Promise<PooledChromium>;
  process: ScriptProcessOptions;
  /** Every browser is fenced from the start (see `fence()`). */
  fenced?: boolean;
}

/** Waits for `promise`, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A few browsers, each serving one run at a time, reused across runs. Every run gets a new
 * incognito context (no cookie, storage or cache of another run) and a new script process, both
 * prepared while the browser waits, so a run starts at once. A browser that crashed or served
 * `maxRunsPerBrowser` runs is replaced.
 *
 * Once fenced (by a target policy), every browser it launches has its own proxy, and a browser
 * launched before without one serves no more runs: it is replaced.
 */
export class BrowserPool {
  private readonly slots: Slot[] = [];
  private launching = 0;
  private readonly waiters: (() => void)[] = [];
  private readonly launches = new Set<Promise<void>>();
  /** Runs being cleaned up after their result went back. */
  private readonly releasing = new Set<Promise<void>>();
  private closed = false;
  private fencedFromNow: boolean;

  constructor(private readonly options: PoolOptions) {
    this.fencedFromNow = options.fenced === true;
  }

  /** Whether browsers get a target-policy proxy. */
  get fenced(): boolean {
    return this.fencedFromNow;
  }

  /** From now on every run gets a browser behind a target-policy proxy; it cannot be undone. */
  fence(): void {
    this.fencedFromNow = true;
  }

  /** The pooled browsers that are up, for reporting their versions. */
  get browsers(): Browser[] {
    return this.slots.filter((s) => !s.dead).map((s) => s.browser);
  }

  async acquire(signal: AbortSignal): Promise<{ lease: Lease; release: () => void }> {
    this.closed = false;
    let failures = 0;
    for (;;) {
      signal.throwIfAborted();
      const idle = this.slots.find((s) => !s.busy && !s.dead);
      if (idle && this.fencedFromNow && !idle.chromium.proxy) {
        // Launched before the pool was fenced: its traffic would not go through a proxy.
        this.retire(idle);
        void idle.browser.close().catch(() => {});
        continue;
      }
      if (idle) {
        idle.busy = true;
        const preparing = idle.ready.shift() ?? this.prepare(idle);
        try {
          const lease = await untilAborted(preparing, signal);
          idle.prepared.delete(lease.context.id!);
          this.fill(idle);
          if (!lease.process.alive) {
            await lease.process.dispose();
            await lease.context.close().catch(() => {});
            throw new Error('the prepared script process is gone');
          }
          return { lease, release: () => this.releaseLater(idle, lease) };
        } catch (err) {
          idle.busy = false;
          if (signal.aborted) {
            // The run's time is up; the preparation goes on for the next run.
            idle.ready.unshift(preparing);
            this.waiters.shift()?.();
            throw err;
          }
          // The browser went away, or its prepared run did; a fresh one is made on the next turn.
          if (!idle.browser.connected) this.retire(idle);
          this.waiters.shift()?.();
          if (++failures >= 3) throw err;
          continue;
        }
      }
      if (this.slots.length + this.launching < this.options.size) {
        this.launching++;
        // A launch that outlasts this run's time still adds its browser to the pool.
        const launched = this.options.launch(this.fencedFromNow).then((chromium) => {
          const { browser } = chromium;
          const slot: Slot = { chromium, browser, runs: 0, busy: false, dead: false, ready: [], prepared: new Set(), contexts: Promise.resolve(), session: null };
          browser.on('disconnected', () => this.retire(slot));
          if (this.closed) void browser.close().catch(() => {}).finally(chromium.kill);
          else this.slots.push(slot);
        }).finally(() => {
          this.launching--;
          this.waiters.shift()?.();
        });
        this.launches.add(launched);
        launched.catch(() => {}).finally(() => this.launches.delete(launched));
        await untilAborted(launched, signal);
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          const at = this.waiters.indexOf(wake);
          if (at >= 0) this.waiters.splice(at, 1);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** Prepares runs ahead until the browser has `prepareAhead` of them, counting the runs it may still serve. */
  private fill(slot: Slot): void {
    const room = this.options.maxRunsPerBrowser - slot.runs - (slot.busy ? 1 : 0);
    while (!slot.dead && slot.ready.length < Math.min(this.options.prepareAhead, room)) {
      const lease = this.prepare(slot);
      lease.catch(() => {});
      slot.ready.push(lease);
    }
  }

  /** Runs `fn` when the slot's context work before it is done. */
  private inTurn<T>(slot: Slot, fn: () => Promise<T>): Promise<T> {
    const turn = slot.contexts.then(fn);
    slot.contexts = turn.catch(() => {});
    return turn;
  }

  private async prepare(slot: Slot): Promise<Lease> {
    const { browser } = slot;
    if (slot.dead || !browser.connected) throw new Error('The browser is gone');
    // The process loads its modules meanwhile; it connects once it can be told the run's context.
    const spawning = ScriptProcess.spawn(this.options.process);
    spawning.catch(() => {});
    let context: BrowserContext | null = null;
    try {
      const defaultPages = new Set(await browser.defaultBrowserContext().pages());
      context = await this.inTurn(slot, async () => {
        const made = await browser.createBrowserContext();
        slot.prepared.add(made.id!);
        return made;
      });
      const contextId = context.id!;
      const connecting = spawning.then(async (p) => {
        await p.connect(slot.chromium.gate, this.options.viewport, contextId);
        return p;
      });
      const [page, process] = await Promise.all([context.newPage(), connecting]);
      const recorder = new PageRecorder(context);
      await recorder.start(page);
      return { browser, context, page, process, recorder, defaultPages, proxy: slot.chromium.proxy };
    } catch (err) {
      await spawning.then((p) => p.dispose(), () => {});
      if (context) {
        slot.prepared.delete(context.id!);
        await context.close().catch(() => {});
      }
      throw err;
    }
  }

  /** Cleans up after a run without holding back its result; the browser serves again once clean. */
  private releaseLater(slot: Slot, lease: Lease): void {
    const done = this.release(slot, lease).catch(() => this.retire(slot)).finally(() => this.releasing.delete(done));
    this.releasing.add(done);
  }

  private async release(slot: Slot, lease: Lease): Promise<void> {
    lease.recorder.stop();
    // Killed at once; its folder goes while the browser is cleaned.
    const disposing = lease.process.dispose();
    const tainted = await this.inTurn(slot, () => this.clean(slot, lease));
    slot.runs++;
    const unfenced = this.fencedFromNow && !slot.chromium.proxy;
    if (tainted || unfenced || slot.dead || !this.slots.includes(slot) || slot.runs >= this.options.maxRunsPerBrowser) {
      this.retire(slot);
      await slot.browser.close().catch(() => {});
      slot.chromium.kill();
    } else {
      slot.busy = false;
      this.fill(slot);
    }
    this.waiters.shift()?.();
    await disposing;
  }

  /**
   * Closes what the run opened: its context and every other one the browser has (a script may
   * make contexts over its own connection that this side never saw). Answers true when the run
   * used the browser's default context, whose cookies and storage would outlive it: that browser
   * is then replaced rather than reused.
   */
  private async clean(slot: Slot, lease: Lease): Promise<boolean> {
    const { browser } = lease;
    if (!browser.connected) return true;
    const runContext = lease.context.id!;
    const closing = lease.context.close().catch(() => {});
    const session = await this.browserSession(slot);
    if (!session) return true;
    try {
      // Asked while the run's context closes; its pages may still be listed, under its id or not.
      const [{ browserContextIds }, { targetInfos }] = await Promise.all([
        session.send('Target.getBrowserContexts'),
        session.send('Target.getTargets'),
        closing,
      ]);
      for (const id of browserContextIds) {
        if (slot.prepared.has(id) || id === runContext) continue;
        await session.send('Target.disposeBrowserContext', { browserContextId: id }).catch(() => {});
      }
      // What is left is the default context: the blank page it started with, unless the run used it.
      const others = new Set([...browserContextIds, runContext]);
      const pages = targetInfos.filter((t) => t.type === 'page' && !others.has(t.browserContextId ?? ''));
      return pages.length > lease.defaultPages.size || pages.some((t) => t.url !== 'about:blank');
    } catch {
      slot.session = null;
      return true;
    }
  }

  /** The slot's own session with the browser target, kept for cleaning after every run. */
  private browserSession(slot: Slot): Promise<CDPSession | null> {
    slot.session ??= slot.browser.target().createCDPSession().catch(() => null);
    const session = slot.session;
    void session.then((s) => {
      if (!s && slot.session === session) slot.session = null;
    });
    return session;
  }

  private retire(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    // A browser whose connection dropped may still be running.
    slot.chromium.kill();
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    for (const ready of slot.ready.splice(0)) void ready.then((lease) => lease.process.dispose(), () => {});
    this.waiters.shift()?.();
  }

  /** Closes every browser and prepared process. The pool starts browsers again when next asked. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.releasing, ...this.launches]);
    const slots = this.slots.splice(0);
    await Promise.all(slots.map(async (slot) => {
      slot.dead = true;
      for (const ready of slot.ready.splice(0)) await ready.then((lease) => lease.process.dispose(), () => {});
      if (!slot.busy) {
        await slot.browser.close().catch(() => {});
        slot.chromium.kill();
      }
    }));
    await this.options.process.codeCache.dispose();
  }
}
