/// <reference lib="dom" />
// The interactive API reference in real Chromium: an Express host on 127.0.0.1 with the router at
// /api on a real Vigil (SQLite). Swagger UI renders the router's document under the page's strict
// CSP with nothing fetched from another host, and its Authorize dialog and "Try it out" call the
// API at the mount path with the key entered.
import { existsSync, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type ApiHarness } from './support/harness.js';

const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM && process.env.VIGIL_REQUIRE_BROWSER) throw new Error(`VIGIL_REQUIRE_BROWSER is set but there is no Chromium at ${CHROMIUM}`);

/** A screenshot of the reference, for a person to look at after a run (not compared). */
const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../test-artifacts/api-docs');

const OP = '#operations-Checks-listChecks';

let browser: Browser;
let h: ApiHarness;
let server: Server;
let base: string;

interface Seen {
  page: Page;
  /** Console errors and uncaught exceptions (Chromium reports a blocked resource there too). */
  errors: string[];
  /** Every request the page made. */
  requests: { method: string; url: string; headers: Record<string, string> }[];
}

/** A page in a context of its own that records errors, requests and CSP violation events. */
async function newPage(): Promise<Seen> {
  const page = await (await browser.createBrowserContext()).newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors: string[] = [];
  const requests: Seen['requests'] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => requests.push({ method: r.method(), url: r.url(), headers: r.headers() }));
  await page.evaluateOnNewDocument(() => {
    const w = window as unknown as { __cspViolations: string[] };
    w.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      w.__cspViolations.push(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber}) ${e.sample}`);
    });
  });
  return { page, errors, requests };
}

const cspViolations = (page: Page) => page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);

/** Presses "Execute" on the operation and answers the status code Swagger UI renders for the live response. */
async function execute(page: Page): Promise<string> {
  // A response shown from before is cleared first (Swagger UI's own "Clear" button).
  if (await page.$(`${OP} .btn-clear`)) {
    await page.click(`${OP} .btn-clear`);
    await page.waitForSelector(`${OP} .live-responses-table`, { hidden: true });
  }
  await page.click(`${OP} .btn.execute`);
  const status = await page.waitForSelector(`${OP} .live-responses-table .response .response-col_status`);
  return (await status!.evaluate((e) => e.textContent ?? '')).trim();
}

describe.skipIf(!HAS_CHROMIUM)('API reference in Chromium', () => {
  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
    });
    h = await apiHarness();
    server = h.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
    await h?.close();
  });

  it('renders the operations under its CSP from the host alone, and "Try it out" lists checks at /api with the key from Authorize', async () => {
    const created = await h.a.post('/api/v1/checks/tcp', { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { page, errors, requests } = await newPage();

    // /api/docs redirects to /api/docs/, which needs no key.
    const res = await page.goto(`${base}/api/docs`);
    expect(res!.status()).toBe(200);
    expect(page.url()).toBe(`${base}/api/docs/`);
    await page.waitForSelector(`${OP} .opblock-summary`);
    expect(await page.$eval(`${OP} .opblock-summary-method`, (e) => e.textContent)).toBe('GET');
    expect(await page.$eval(`${OP} .opblock-summary-path`, (e) => e.textContent?.replace(/\u200b/g, ''))).toBe('/v1/checks');
    expect(await page.$$eval('.opblock', (els) => els.length)).toBeGreaterThan(80);
    // The document's server is the mount path, the one "Try it out" calls.
    expect(await page.$eval('.servers select', (e) => (e as HTMLSelectElement).value)).toBe('/api');

    // Without credentials the API answers 401, shown as such.
    await page.click(`${OP} .opblock-summary-control`);
    await page.click(`${OP} .try-out__btn`);
    expect(await execute(page)).toBe('401');

    // Authorize: the key as the bearer token, the account id as x-service-account.
    await page.click('.btn.authorize');
    await page.waitForSelector('.modal-ux #auth-bearer-value');
    await page.type('#auth-bearer-value', h.a.key);
    await page.type('#api_key_value', h.a.accountId);
    for (let i = 0; i < 2; i++) {
      const forms = await page.$$('.modal-ux .auth-container form');
      await (await forms[i]!.$('button.authorize'))!.click();
    }
    expect(await page.$$eval('.modal-ux .auth-container button', (els) => els.filter((e) => e.textContent === 'Logout').length)).toBe(2);
    await page.click('.modal-ux .close-modal');
    await page.waitForSelector('.modal-ux', { hidden: true });

    expect(await execute(page)).toBe('200');
    // The request URL Swagger UI shows (with the query's defaults it filled in) is the host's /api.
    const shown = new URL((await page.$eval(`${OP} .request-url pre`, (e) => e.textContent))!);
    expect(`${shown.origin}${shown.pathname}`).toBe(`${base}/api/v1/checks`);
    expect(await page.$eval(`${OP} .live-responses-table .response .response-col_description`, (e) => e.textContent)).toContain('orders-db');
    const calls = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/v1/'));
    expect(calls.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['GET /api/v1/checks', 'GET /api/v1/checks']);
    expect(calls[0]!.headers.authorization).toBeUndefined();
    expect(calls[1]!.headers.authorization).toBe(`Bearer ${h.a.key}`);
    expect(calls[1]!.headers['x-service-account']).toBe(h.a.accountId);

    mkdirSync(ARTIFACTS, { recursive: true });
    await (await page.$(OP))!.screenshot({ path: join(ARTIFACTS, 'list-checks.png') });

    expect(await cspViolations(page)).toEqual([]);
    // The 401 of the first call is logged by Chromium as a failed resource; nothing else may be.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    const elsewhere = requests.map((r) => r.url).filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'));
    expect(elsewhere).toEqual([]);
    // The page's own files and the document, all from the host.
    expect(requests.map((r) => new URL(r.url).pathname).filter((p) => !p.startsWith('/api/v1/') && !p.startsWith('image/'))).toEqual(expect.arrayContaining([
      '/api/docs', '/api/docs/', '/api/docs/swagger-ui.css', '/api/docs/swagger-ui-bundle.js', '/api/docs/init.js', '/api/openapi.json',
    ]));
    await page.close();
  }, 90_000);
});
