/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import type { ApiHarness } from './support/harness.js';
import { MIXED, pagesHarness, percentile, seedChecks } from './support/pages.js';
import { HAS_CHROMIUM, pagesInChromium, shot, type PagesInChromium } from './support/pages-browser.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let h: ApiHarness;
let base: string;
let chromium: PagesInChromium;
const newPage = (viewport?: { width: number; height: number }) => chromium.newPage(viewport);

async function open(options: Parameters<typeof pagesHarness>[0] = {}): Promise<void> {
  ({ h, base } = await chromium.open(options));
}

/** axe-core's WCAG 2 A/AA rules on the page as it stands: the ids of what fails. */
async function accessibilityViolations(page: Page): Promise<string[]> {
  const client = await page.createCDPSession();
  await client.send('Page.setBypassCSP', { enabled: true });
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    return axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
  });
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Whether each selector matches an element that is rendered with a size and lies within the page's width. */
async function visible(page: Page, selectors: string[]): Promise<Record<string, boolean>> {
  return page.evaluate((sels) => Object.fromEntries(sels.map((s) => {
    const el = document.querySelector(s);
    if (!el) return [s, false];
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return [s, r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none' && r.right <= document.documentElement.clientWidth + 1];
  })), selectors);
}

const bodyColor = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);

describe.skipIf(!HAS_CHROMIUM)('pages in Chromium', () => {
  chromium = pagesInChromium();

  it('a dashboard of 20 checks in mixed states: the right states, p95/p99, pagination that turns, on a desktop and a phone', async () => {
    await open();
    const checks = await seedChecks(h, MIXED);
    const created = await h.a.post('/api/v1/dashboards', {
      header: 'Shop checks', description: 'Everything the shop depends on', customUrl: 'shop', tags: ['web'],
      checksPerPage: 15, paginationRate: 30, refreshRate: 300, expandChecks: true,
    });
    expect(created.status).toBe(201);
    const { page, errors, requests } = await newPage();
    // The page's own long timers are caught so the test can fire them instead of waiting 30 s;
    // short ones (axe-core's) run as usual.
    await page.evaluateOnNewDocument(() => {
      const w = window as unknown as { __timers: { fn: () => void; ms: number }[] };
      const original = window.setTimeout.bind(window);
      w.__timers = [];
      window.setTimeout = ((fn: () => void, ms = 0, ...rest: unknown[]) => {
        if (ms < 20_000) return original(fn, ms, ...rest);
        w.__timers.push({ fn, ms });
        return 0;
      }) as unknown as typeof setTimeout;
    });
    const res = await page.goto(`${base}/d/shop`);
    expect(res!.status()).toBe(200);

    const cards = await page.$$eval('[data-check]', (els) => els.map((e) => ({
      id: e.getAttribute('data-check'), state: e.querySelector('.state')!.textContent, name: e.querySelector('h3')!.textContent,
      p95: e.querySelector('.p95')?.textContent ?? null, p99: e.querySelector('.p99')?.textContent ?? null,
    })));
    expect(cards).toHaveLength(15);
    const label = { PASSING: 'Passing', FAILING: 'Failing', DEGRADED: 'Degraded', PAUSED: 'Paused', PENDING: 'No runs yet' } as const;
    for (const card of cards) {
      const seeded = checks.find((c) => c.id === card.id)!;
      expect(card.state, card.name!).toBe(label[seeded.state]);
      expect(card.name).toBe(seeded.name);
      if (seeded.times.length) {
        expect(card.p95).toBe(`${percentile(seeded.times, 95)} ms`);
        expect(card.p99).toBe(`${percentile(seeded.times, 99)} ms`);
      } else {
        expect(card.p95).toBe('–');
      }
    }
    expect(cards.slice(0, 3).map((c) => c.state)).toEqual(['Failing', 'Failing', 'Failing']);
    expect(await visible(page, ['header h1', 'main', '.summary', '[data-check]', '.bar', 'nav.pages', 'footer'])).toEqual({
      'header h1': true, main: true, '.summary': true, '[data-check]': true, '.bar': true, 'nav.pages': true, footer: true,
    });
    expect(await accessibilityViolations(page)).toEqual([]);
    await shot(page, 'dashboard-desktop');

    // The script set both timers: turn the page after paginationRate, reload after refreshRate.
    const timers = await page.evaluate(() => (window as unknown as { __timers: { ms: number }[] }).__timers.map((t) => t.ms));
    expect(timers.sort((a, b) => a - b)).toEqual([30_000, 300_000]);
    await Promise.all([
      page.waitForNavigation(),
      page.evaluate(() => (window as unknown as { __timers: { fn: () => void; ms: number }[] }).__timers.find((t) => t.ms === 30_000)!.fn()),
    ]);
    expect(page.url()).toBe(`${base}/d/shop?page=2`);
    expect(await page.$$eval('[data-check]', (els) => els.length)).toBe(5);
    expect(await page.$eval('nav.pages [aria-current]', (e) => e.textContent)).toBe('2');
    // From the last page it turns back to the first.
    await Promise.all([
      page.waitForNavigation(),
      page.evaluate(() => (window as unknown as { __timers: { fn: () => void; ms: number }[] }).__timers.find((t) => t.ms === 30_000)!.fn()),
    ]);
    expect(page.url()).toBe(`${base}/d/shop`);

    expect(errors).toEqual([]);
    expect(requests.every((u) => u.startsWith(base) || u.startsWith('data:'))).toBe(true);

    const phone = await newPage({ width: 375, height: 740 });
    await phone.page.goto(`${base}/d/shop`);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await visible(phone.page, ['header h1', '[data-check]', 'nav.pages'])).toEqual({ 'header h1': true, '[data-check]': true, 'nav.pages': true });
    await shot(phone.page, 'dashboard-phone');
    await page.close();
    await phone.page.close();
  }, 90_000);

  it('a private dashboard opened without a key shows nothing of it', async () => {
    await open();
    await seedChecks(h, ['FAILING'], () => 'payroll-export');
    const d = await h.a.post('/api/v1/dashboards', { header: 'Finance', customUrl: 'finance', isPrivate: true });
    const { page } = await newPage();
    const res = await page.goto(`${base}/d/finance`);
    expect(res!.status()).toBe(401);
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).not.toContain('payroll-export');
    expect(text).not.toContain('Finance');
    expect(await page.$$eval('[data-check]', (els) => els.length)).toBe(0);
    await shot(page, 'dashboard-private-401');
    // The key form on the page opens it.
    await page.type('#key', d.body.keys[0].rawKey);
    await Promise.all([page.waitForNavigation(), page.click('form.key button')]);
    expect(await page.$$eval('[data-check]', (els) => els.map((e) => e.querySelector('h3')!.textContent))).toEqual(['payroll-export']);
    await page.close();
  }, 60_000);

  it('a check name holding <script> renders as text, and customCSS cannot leave its style element', async () => {
    await open();
    const name = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    await seedChecks(h, ['PASSING'], () => name);
    await h.a.post('/api/v1/dashboards', {
      header: 'Escaping', customUrl: 'escaping',
      customCSS: 'h1 { letter-spacing: 3px } </style><script>window.__pwned = 3</script><style>',
    });
    const { page, requests } = await newPage();
    await page.goto(`${base}/d/escaping`);
    expect(await page.$eval('[data-check] h3', (e) => e.textContent)).toBe(name);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.$eval('h1', (e) => getComputedStyle(e).letterSpacing)).toBe('3px');
    // The chart data, the chart files and the page's own script: nothing a user typed.
    expect(await page.$$eval('script', (els) => els.map((e) => e.getAttribute('src')?.replace(/[0-9a-f]{16}/, '<hash>') ?? e.getAttribute('type') ?? 'inline'))).toEqual([
      'inline', 'application/json', '/assets/uplot.<hash>.min.js', '/assets/charts.<hash>.js',
    ]);
    expect(requests.some((u) => u.endsWith('/x'))).toBe(false);
    await page.close();
  }, 60_000);

  it('a status page in dark mode, switched to light by its button, and AUTO following the viewer', async () => {
    await open();
    const services = await Promise.all(['API', 'Website'].map(async (name) => (await h.a.post('/api/v1/status-pages/services', { name })).body.id as string));
    await h.a.post('/api/v1/status-pages', {
      name: 'Acme status', url: 'acme', description: 'Live status of Acme', defaultTheme: 'DARK',
      themeColors: { dark: { bodyBackgroundColor: '#101820' }, light: { bodyBackgroundColor: '#fafafa' } },
      cards: [{ name: 'Platform', serviceIds: services }],
    });
    h.clock.advance(86_400_000);
    await h.a.post('/api/v1/status-pages/incidents', { name: 'Website errors', serviceIds: [services[1]], incidentUpdate: { description: 'We see errors', status: 'IDENTIFIED' } });

    const { page, errors } = await newPage();
    await page.goto(`${base}/s/acme`);
    expect(await bodyColor(page)).toBe('rgb(16, 24, 32)');
    expect(await page.$eval('#theme-toggle', (e) => [e.textContent, e.getAttribute('aria-pressed')])).toEqual(['Light mode', 'true']);
    expect(await page.$$eval('[data-service]', (els) => els.map((e) => [e.querySelector('h3')!.textContent, e.getAttribute('data-state')]))).toEqual([
      ['API Operational', 'OPERATIONAL'], ['Website Disrupted', 'DISRUPTED'],
    ]);
    expect(await page.$$eval('[data-service="' + services[0] + '"] .bar span', (els) => els.length)).toBe(90);
    expect(await page.$eval('[data-overall]', (e) => e.textContent)).toBe('Some systems are disrupted');
    // With scripts on, uPlot's bars stand in for the HTML ones (which stay for browsers without).
    expect(await visible(page, ['header h1', '.banner', '[data-card]', '.chart canvas', '.incident', 'footer'])).toEqual({
      'header h1': true, '.banner': true, '[data-card]': true, '.chart canvas': true, '.incident': true, footer: true,
    });
    expect(await accessibilityViolations(page)).toEqual([]);
    await shot(page, 'status-page-dark');

    await page.click('#theme-toggle');
    expect(await bodyColor(page)).toBe('rgb(250, 250, 250)');
    expect(await accessibilityViolations(page)).toEqual([]);
    await shot(page, 'status-page-light');
    // The choice is kept for the next visit.
    await page.reload();
    expect(await bodyColor(page)).toBe('rgb(250, 250, 250)');
    expect(errors).toEqual([]);
    await page.close();

    await h.a.post('/api/v1/status-pages', { name: 'Auto', url: 'auto', defaultTheme: 'AUTO' });
    const auto = await newPage();
    await auto.page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await auto.page.goto(`${base}/s/auto`);
    expect(await bodyColor(auto.page)).toBe('rgb(17, 20, 24)');
    await auto.page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    expect(await bodyColor(auto.page)).toBe('rgb(246, 247, 249)');
    await auto.page.close();
  }, 60_000);
});
