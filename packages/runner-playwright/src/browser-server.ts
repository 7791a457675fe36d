import { existsSync } from 'node:fs';
import { chromiumType } from './playwright-install.js';

/** Switches of the shared Chromium: no first-run work, no calls home on a closed network, no QUIC (UDP that a SOCKS proxy does not carry). */
const CHROMIUM_ARGS = ['--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'];

/**
 * One Playwright browser server (`chromium.launchServer`) shared by the runs of one account (or
 * kept by one run): each test of a suite opens its fresh context in it over
 * `connectOptions.wsEndpoint` rather than starting a Chromium of its own. Started on first use,
 * started again when it died, ended by `close()`. With `proxyServer` the browser itself is launched
 * with that proxy (`--proxy-server`): a context without a proxy of its own goes through it.
 */
export class SharedBrowser {
  private current: Promise<{ endpoint: string; pid: number | null; alive: () => boolean; close: () => Promise<void> }> | null = null;
  private closed = false;
  /** How many times a browser was started (a test reads it to see that runs share one). */
  launches = 0;

  constructor(
    private readonly executablePath: string,
    private readonly proxyServer: string | null = null,
  ) {}

  /** The running browser's WebSocket endpoint, starting it if there is none (or it died). */
  async endpoint(): Promise<string> {
    if (this.closed) throw new Error('the Playwright runner is closed');
    if (this.current) {
      const running = await this.current.catch(() => null);
      if (running?.alive()) return running.endpoint;
      this.current = null;
    }
    this.current ??= this.launch();
    const started = this.current;
    try {
      return (await started).endpoint;
    } catch (err) {
      if (this.current === started) this.current = null;
      throw err;
    }
  }

  /** The browser process's pid, when one runs. */
  async pid(): Promise<number | null> {
    const running = await this.current?.catch(() => null);
    return running?.alive() ? running.pid : null;
  }

  private async launch() {
    this.launches++;
    if (!existsSync(this.executablePath)) {
      throw new Error(`there is no Chromium at ${this.executablePath} (on Debian: apt-get install chromium; executablePath or PUPPETEER_EXECUTABLE_PATH names another)`);
    }
    const server = await chromiumType().launchServer({
      executablePath: this.executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 30_000,
      ...(this.proxyServer ? { proxy: { server: this.proxyServer } } : {}),
    });
    const child = server.process();
    let exited = child.exitCode !== null || child.signalCode !== null;
    child.once('exit', () => {
      exited = true;
    });
    // Synchronous: an exit handler runs no promise to its end.
    const kill = () => {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    };
    // The host's exit takes the browser with it.
    process.on('exit', kill);
    child.once('exit', () => process.off('exit', kill));
    if (this.closed) {
      await server.kill();
      throw new Error('the Playwright runner is closed');
    }
    return {
      endpoint: server.wsEndpoint(),
      pid: child.pid ?? null,
      alive: () => !exited,
      close: async () => {
        await Promise.race([server.close(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (!exited) await server.kill().catch(() => {});
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = await this.current?.catch(() => null);
    this.current = null;
    await running?.close();
  }
}

interface AccountEntry {
  browser: SharedBrowser;
  users: number;
  lastUsed: number;
  idle: NodeJS.Timeout | null;
}

/** A browser lent to a run: `release()` once the run is over. */
export interface LentBrowser {
  browser: SharedBrowser;
  release(): void;
}

/**
 * The shared browsers of a runner, one per account: runs of one account share a Chromium (they can
 * reach each other's pages through it, as code of one account), runs of different accounts never
 * do. At most `max` run at once: a new account's browser closes the least recently used idle one,
 * and when every one is in use the run gets none (it starts its own). One left idle `idleMs` is closed.
 */
export class AccountBrowsers {
  private readonly entries = new Map<string, AccountEntry>();
  private readonly closing = new Set<Promise<void>>();
  private retiredLaunches = 0;
  private closed = false;

  constructor(
    private readonly executablePath: string,
    private readonly max: number,
    private readonly idleMs: number,
  ) {}

  /** How many browsers were started in all. */
  get launches(): number {
    let live = 0;
    for (const entry of this.entries.values()) live += entry.browser.launches;
    return this.retiredLaunches + live;
  }

  /** The browser of `accountId`'s runs, or null when the runner is closed or `max` others are in use. */
  lend(accountId: string): LentBrowser | null {
    if (this.closed) return null;
    let entry = this.entries.get(accountId);
    if (!entry) {
      if (this.entries.size >= this.max) {
        const idle = [...this.entries.entries()].filter(([, e]) => e.users === 0).sort(([, a], [, b]) => a.lastUsed - b.lastUsed)[0];
        if (!idle) return null;
        this.retire(idle[0]);
      }
      entry = { browser: new SharedBrowser(this.executablePath), users: 0, lastUsed: Date.now(), idle: null };
      this.entries.set(accountId, entry);
    }
    const lent = entry;
    if (lent.idle) clearTimeout(lent.idle);
    lent.idle = null;
    lent.users++;
    let released = false;
    return {
      browser: lent.browser,
      release: () => {
        if (released) return;
        released = true;
        lent.users--;
        lent.lastUsed = Date.now();
        if (lent.users > 0 || this.entries.get(accountId) !== lent) return;
        lent.idle = setTimeout(() => {
          if (this.entries.get(accountId) === lent && lent.users === 0) this.retire(accountId);
        }, this.idleMs);
        lent.idle.unref();
      },
    };
  }

  /** The pid of `accountId`'s browser, while it runs. */
  async pid(accountId: string): Promise<number | null> {
    return (await this.entries.get(accountId)?.browser.pid()) ?? null;
  }

  private retire(accountId: string): void {
    const entry = this.entries.get(accountId);
    if (!entry) return;
    this.entries.delete(accountId);
    if (entry.idle) clearTimeout(entry.idle);
    this.retiredLaunches += entry.browser.launches;
    const done = entry.browser.close().catch(() => {});
    this.closing.add(done);
    void done.finally(() => this.closing.delete(done));
  }

  /** Ends every browser. */
  async close(): Promise<void> {
    this.closed = true;
    for (const accountId of [...this.entries.keys()]) this.retire(accountId);
    await Promise.all([...this.closing]);
  }
}
