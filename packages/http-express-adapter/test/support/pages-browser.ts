/// <reference lib="dom" />
// What the pages' Chromium tests share: Chromium for the file's tests, a pages harness served on
// 127.0.0.1 for each test (closed after it), pages that record what went wrong, and screenshots.
import { existsSync, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ApiHarness } from './harness.js';
import { pagesHarness } from './pages.js';

export const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM && process.env.VIGIL_REQUIRE_BROWSER) throw new Error(`VIGIL_REQUIRE_BROWSER is set but there is no Chromium at ${CHROMIUM}`);

/** Screenshots of the pages tested, for a person to look at after a run (not compared pixel by pixel). */
const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../test-artifacts/pages');

/** A page with what it recorded: console errors, uncaught errors, every request, and its CSP violations. */
export interface RecordingPage {
  page: Page;
  errors: string[];
  requests: string[];
  violations: () => Promise<string[]>;
}

export interface PagesInChromium {
  /** A pages harness (options as `pagesHarness`), served for this test. */
  open(options?: Parameters<typeof pagesHarness>[0]): Promise<{ h: ApiHarness; base: string }>;
  /** A page in a context of its own: no theme choice or other storage carries over from another test. */
  newPage(viewport?: { width: number; height: number }): Promise<RecordingPage>;
}

/** Registers the hooks of a describe block whose tests open pages in Chromium. */
export function pagesInChromium(): PagesInChromium {
  let browser: Browser | undefined;
  let served: { h: ApiHarness; server: Server } | undefined;
  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    served?.server.close();
    await served?.h.close();
    served = undefined;
  });
  return {
    async open(options = {}) {
      const h = await pagesHarness(options);
      const server = h.app.listen(0, '127.0.0.1');
      served = { h, server };
      await once(server, 'listening');
      return { h, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    },
    async newPage(viewport = { width: 1280, height: 900 }) {
      const page = await (await browser!.createBrowserContext()).newPage();
      await page.setViewport(viewport);
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('request', (r) => requests.push(r.url()));
      await page.evaluateOnNewDocument(() => {
        const w = window as unknown as { __csp: string[] };
        w.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      const violations = () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
      return { page, errors, requests, violations };
    },
  };
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
