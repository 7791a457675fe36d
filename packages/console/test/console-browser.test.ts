/// <reference lib="dom" />
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Server as NetServer } from 'node:net';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, consoleHarness, dropPostgresSchema, type ConsoleHarness } from './support/harness.js';

const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM && process.env.VIGIL_REQUIRE_BROWSER) throw new Error(`VIGIL_REQUIRE_BROWSER is set but there is no Chromium at ${CHROMIUM}`);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
let h: ConsoleHarness;
const closers: (() => Promise<unknown>)[] = [];

/** A local TCP service to monitor; `stop()` closes it, so connections are refused. */
async function tcpService(): Promise<{ port: number; stop(): Promise<void> }> {
  const server: NetServer = createServer((socket) => socket.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  let open = true;
  const stop = async () => {
    if (open) await new Promise((r) => server.close(r));
    open = false;
  };
  closers.push(stop);
  return { port: (server.address() as AddressInfo).port, stop };
}

/** A local webhook receiver that keeps each body. */
async function webhookReceiver(): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      bodies.push(text);
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`, bodies };
}

/** The page's axe-core WCAG 2 A/AA violations that are serious or critical. */
async function seriousViolations(page: Page): Promise<string[]> {
  const client = await page.createCDPSession();
  await client.send('Page.setBypassCSP', { enabled: true });
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    return axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
  });
  await client.detach();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Lets the fake clock run (1 s a step) until `done` holds: the engine's and the dispatcher's timers fire as it moves. */
async function advanceUntil(done: () => boolean | Promise<boolean>, what: string, limit = 400): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await done()) return;
    h.clock.advance(1_000);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const field = (page: Page, name: string) => page.$(`[id="f-${name}"]`);

async function fill(page: Page, values: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(values)) {
    const el = await field(page, name);
    if (!el) throw new Error(`no field ${name} on ${page.url()}`);
    await el.evaluate((e) => ((e as HTMLInputElement).value = ''));
    await el.type(value);
  }
}

async function submit(page: Page, selector = 'main form button.primary[type=submit]'): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

describe.skipIf(!HAS_CHROMIUM)('the console in Chromium', () => {
  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await dropPostgresSchema();
  });
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
    await h?.close();
  });

  it.each(BACKENDS)('on %s: sign in, make a webhook channel and a TCP check, run it, see it pass then fail with its alert delivered, mute it, delete it', async (backend) => {
    h = await consoleHarness(backend, { refreshSeconds: 1 });
    await h.vigil.start();
    const server = h.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(() => new Promise((r) => server.close(r)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`;
    const service = await tcpService();
    const receiver = await webhookReceiver();

    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    const violations: Record<string, string[]> = {};
    const audit = async (name: string) => {
      violations[name] = await seriousViolations(page);
    };

    // Signed out, the console asks for the account id and key.
    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await audit('sign-in');
    await page.type('#account', h.a.accountId);
    await page.type('#key', h.a.key);
    await submit(page);
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(await page.$eval('main', (m) => m.textContent)).toContain('No checks yet');
    await audit('home, empty');

    // A webhook channel to the local receiver; new checks are subscribed to it.
    await page.goto(`${base}/r/alert-channel-webhook/new`);
    await audit('new webhook channel');
    await fill(page, { 'config.name': 'ops', 'config.url': receiver.url });
    await submit(page);
    expect(new URL(page.url()).pathname).toBe('/console/alert-channels');
    await audit('alert channels');

    // A TCP check of the local service, made in the form.
    await page.goto(`${base}/checks/new`);
    await Promise.all([page.waitForNavigation(), page.click('a[href$="/r/check-tcp/new"]')]);
    await audit('new TCP check');
    await fill(page, { name: 'local service', 'request.hostname': '127.0.0.1', 'request.port': String(service.port) });
    await submit(page);
    const checkUrl = page.url();
    expect(new URL(checkUrl).pathname).toMatch(/^\/console\/checks\/[0-9a-f-]{36}$/);
    const checkId = new URL(checkUrl).pathname.split('/').pop()!;
    expect(await page.$eval('h1', (e) => e.textContent)).toContain('local service');

    // Run now: the progress shows until the session is final, then the page shows the passing run.
    const runAndWait = async () => {
      const sessionsBefore = (await h.vigil.storage.checkResults.listByCheck(h.a.accountId, checkId, { limit: 100, offset: 0 })).items.length;
      await page.click('#run-now button');
      await page.waitForFunction(() => (document.getElementById('run-progress')?.textContent ?? '').trim().length > 0, { timeout: 10_000 });
      await advanceUntil(async () => (await h.vigil.storage.checkResults.listByCheck(h.a.accountId, checkId, { limit: 100, offset: 0 })).items.length > sessionsBefore, 'the run to be stored');
      // The page reloads itself once the session is final.
      await page.waitForNavigation({ timeout: 15_000 });
    };
    await runAndWait();
    expect(await page.$eval('#results', (e) => e.textContent)).toMatch(/pass/i);
    await page.waitForSelector('.chart canvas', { timeout: 10_000 });
    await audit('check page, passing');

    // The service goes away: the next run fails, the failure shows, and the alert reaches the webhook.
    await service.stop();
    await runAndWait();
    expect(await page.$eval('#results', (e) => e.textContent)).toMatch(/refused|ECONNREFUSED/i);
    await advanceUntil(() => receiver.bodies.length > 0, 'the failure alert at the webhook');
    expect(receiver.bodies.join('\n')).toContain('local service');
    await page.reload();
    expect(await page.$eval('main', (e) => e.textContent)).toMatch(/Alert history[\s\S]*deliver/i);
    await audit('check page, failing');

    // Mute, then delete after the confirmation page.
    await submit(page, 'form[action$="/mute"] button');
    expect(await page.$eval('main', (e) => e.textContent)).toMatch(/Unmute alerts/);
    expect((await h.vigil.storage.checks.get(h.a.accountId, checkId))!.muted).toBe(true);
    await page.goto(`${base}/`);
    expect(await page.$eval(`[data-check="${checkId}"]`, (e) => e.textContent)).toMatch(/Failing · muted/);
    await audit('home, one failing muted check');
    // The list updates without a reload: a check made elsewhere (here through the service) appears.
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    const other = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'made elsewhere', request: { hostname: '127.0.0.1', port: 1 } });
    await page.waitForSelector(`[data-check="${other.id}"]`, { timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    // Dark mode: the system's, and the toggle; the choice is kept.
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    const dark = await background();
    expect(dark).not.toBe(light);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.click('#theme-toggle');
    expect(await background()).toBe(dark);
    await page.reload();
    expect(await background()).toBe(dark);
    await audit('home, dark');
    // The keyboard reaches the skip link first, then the navigation.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.goto(checkUrl);
    await Promise.all([page.waitForNavigation(), page.click('a[href$="/delete"]')]);
    await audit('delete confirmation');
    await submit(page, 'main form button.danger');
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(await h.vigil.storage.checks.get(h.a.accountId, checkId)).toBeNull();

    // At 375 px wide nothing runs off the side.
    await page.setViewport({ width: 375, height: 800 });
    await page.goto(`${base}/alert-channels`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1)).toBe(true);

    expect(violations).toEqual(Object.fromEntries(Object.keys(violations).map((k) => [k, []])));
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
