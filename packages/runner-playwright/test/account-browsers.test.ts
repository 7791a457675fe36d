import { describe, expect, it } from 'vitest';
import { AccountBrowsers } from '../src/browser-server.js';
import { browserProcesses, CHROMIUM, HAS_CHROMIUM } from './support.js';

const settle = () => new Promise((r) => setTimeout(r, 300));

describe.skipIf(!HAS_CHROMIUM)('AccountBrowsers', () => {
  it('keeps at most max browsers, closing the least recently used idle one, lends none when all are in use, and closes an idle one', async () => {
    const browsers = new AccountBrowsers(CHROMIUM, 1, 500);
    try {
      const a = browsers.lend('a')!;
      await a.browser.endpoint();
      const pidA = (await browsers.pid('a'))!;
      expect(browserProcesses()).toContain(pidA);
      // Account b's run while a's runs: the one browser allowed is in use, b gets none to share.
      expect(browsers.lend('b')).toBeNull();
      a.release();
      // Once a's browser is idle, b's takes its place.
      const b = browsers.lend('b')!;
      await b.browser.endpoint();
      const pidB = (await browsers.pid('b'))!;
      expect(pidB).not.toBe(pidA);
      expect(await browsers.pid('a')).toBeNull();
      await settle();
      expect(browserProcesses()).not.toContain(pidA);
      // Idle past idleMs, it is closed.
      b.release();
      await new Promise((r) => setTimeout(r, 700));
      expect(await browsers.pid('b')).toBeNull();
      await settle();
      expect(browserProcesses()).not.toContain(pidB);
      expect(browsers.launches).toBe(2);
    } finally {
      await browsers.close();
    }
  }, 30_000);
});
