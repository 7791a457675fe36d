import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { PageRecorder } from './page-recorder.js';
import { ScriptProcess, type ScriptProcessOptions } from './script-process.js';

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
}

interface Slot {
  browser: Browser;
  runs: number;
  busy: boolean;
  dead: boolean;
  /** The next run's context and process, made while the browser is idle. */
  next: Promise<Lease> | null;
}

export interface PoolOptions {
  size: number;
  maxRunsPerBrowser: number;
  viewport: { width: number; height: number } | null;
  launch: () => Promise<Browser>;
  process: ScriptProcessOptions;
}

/**
 * A few browsers, each serving one run at a time, reused across runs. Every run gets a new
 * incognito context (no cookie, storage or cache of another run) and a new script process, both
 * prepared while the browser waits, so a run starts at once. A browser that crashed or served
 * `maxRunsPerBrowser` runs is replaced.
 */
export class BrowserPool {
  private readonly slots: Slot[] = [];
  private launching = 0;
  private readonly waiters: (() => void)[] = [];
  /** Runs being cleaned up after their result went back. */
  private readonly releasing = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: PoolOptions) {}

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
      if (idle) {
        idle.busy = true;
        try {
          const lease = await (idle.next ?? this.prepare(idle));
          idle.next = null;
          if (!lease.process.alive) throw new Error('the prepared script process is gone');
          return { lease, release: () => this.releaseLater(idle, lease) };
        } catch (err) {
          // The browser went away, or its prepared run did; a fresh one is made on the next turn.
          idle.next = null;
          idle.busy = false;
          if (!idle.browser.connected) this.retire(idle);
          if (++failures >= 3) throw err;
          continue;
        }
      }
      if (this.slots.length + this.launching < this.options.size) {
        this.launching++;
        try {
          const browser = await this.options.launch();
          const slot: Slot = { browser, runs: 0, busy: false, dead: false, next: null };
          browser.on('disconnected', () => this.retire(slot));
          this.slots.push(slot);
        } finally {
          this.launching--;
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  private async prepare(slot: Slot): Promise<Lease> {
    const { browser } = slot;
    const defaultPages = new Set(await browser.defaultBrowserContext().pages());
    const context = await browser.createBrowserContext();
    try {
      const [page, process] = await Promise.all([
        context.newPage(),
        ScriptProcess.start(browser.wsEndpoint(), this.options.viewport, this.options.process),
      ]);
      const recorder = new PageRecorder(context);
      await recorder.start(page);
      return { browser, context, page, process, recorder, defaultPages };
    } catch (err) {
      await context.close().catch(() => {});
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
    await lease.process.dispose();
    await this.clean(lease);
    slot.runs++;
    if (slot.dead || this.closed || slot.runs >= this.options.maxRunsPerBrowser) {
      this.retire(slot);
      await slot.browser.close().catch(() => {});
    } else {
      // Ready the next run while the browser waits for it; a failure here shows on acquire.
      slot.next = this.prepare(slot);
      slot.next.catch(() => {});
      slot.busy = false;
    }
    this.waiters.shift()?.();
  }

  /** Closes what the run opened: its context, any context the script made, pages it opened elsewhere. */
  private async clean(lease: Lease): Promise<void> {
    const { browser } = lease;
    if (!browser.connected) return;
    await lease.context.close().catch(() => {});
    for (const context of browser.browserContexts()) {
      if (context !== browser.defaultBrowserContext()) await context.close().catch(() => {});
    }
    const pages = await browser.defaultBrowserContext().pages().catch(() => [] as Page[]);
    for (const page of pages) {
      if (!lease.defaultPages.has(page)) await page.close().catch(() => {});
    }
  }

  private retire(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    slot.next?.then((lease) => lease.process.dispose(), () => {});
    this.waiters.shift()?.();
  }

  /** Closes every browser and prepared process. The pool starts browsers again when next asked. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.releasing]);
    const slots = this.slots.splice(0);
    await Promise.all(slots.map(async (slot) => {
      slot.dead = true;
      const next = await slot.next?.catch(() => null);
      await next?.process.dispose();
      if (!slot.busy) await slot.browser.close().catch(() => {});
    }));
  }
}
