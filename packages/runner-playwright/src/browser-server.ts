import { existsSync } from 'node:fs';
import { chromiumType } from './playwright-install.js';

/** Switches of the shared Chromium: no first-run work, no calls home on a closed network, no QUIC (UDP that a SOCKS proxy does not carry). */
const CHROMIUM_ARGS = ['--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'];

/**
 * One Playwright browser server (`chromium.launchServer`) shared by every run of a runner: each
 * test of a suite opens its fresh context in it over `connectOptions.wsEndpoint` rather than
 * starting a Chromium of its own. Started on first use, started again when it died, ended by `close()`.
 */
export class SharedBrowser {
  private current: Promise<{ endpoint: string; pid: number | null; alive: () => boolean; close: () => Promise<void> }> | null = null;
  private closed = false;
  /** How many times a browser was started (a test reads it to see that runs share one). */
  launches = 0;

  constructor(private readonly executablePath: string) {}

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
    const server = await chromiumType().launchServer({ executablePath: this.executablePath, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
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
