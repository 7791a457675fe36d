/// <reference lib="dom" />
import { checkResultFixture } from '@vigil/core/testing';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import type { ApiHarness } from './support/harness.js';
import { seedChecks } from './support/pages.js';
import { HAS_CHROMIUM, pagesInChromium, shot, type PagesInChromium } from './support/pages-browser.js';

const HOUR = 3_600_000;

let h: ApiHarness;
let base: string;
let chromium: PagesInChromium;
const newPage = (viewport?: { width: number; height: number }) => chromium.newPage(viewport);

async function open(): Promise<void> {
  ({ h, base } = await chromium.open());
}

/** Pixels of each chart canvas (within `scope`) near a colour (opaque enough to be drawn, not antialiased edge). */
function inked(page: Page, rgb: [number, number, number] | null, scope = ''): Promise<number[]> {
  return page.$$eval(`${scope} .chart canvas`, (canvases, want) => canvases.map((c) => {
    const px = (c as HTMLCanvasElement).getContext('2d')!.getImageData(0, 0, (c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3]! < 200) continue;
      if (!want || (Math.abs(px[i]! - want[0]) < 24 && Math.abs(px[i + 1]! - want[1]) < 24 && Math.abs(px[i + 2]! - want[2]) < 24)) n++;
    }
    return n;
  }), rgb);
}

/** Whether an element matching the selector is rendered with a size. */
const shown = (page: Page, selector: string) => page.$eval(selector, (e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(e).display !== 'none';
});

describe.skipIf(!HAS_CHROMIUM)('the pages\' charts in Chromium', () => {
  chromium = pagesInChromium();

  it('a dashboard draws a sparkline per check with no CSP violation, in light and dark, on a phone, and shows its figures without scripts', async () => {
    await open();
    const checks = await seedChecks(h, ['PASSING', 'FAILING', 'PENDING']);
    // A day of runs every 20 minutes for the first check, slower in the afternoon.
    const now = h.clock.now().getTime();
    await h.vigil.storage.checkResults.insertMany(h.a.accountId, Array.from({ length: 70 }, (_, k) => checkResultFixture(checks[0]!.id, {
      startedAt: new Date(now - 2 * HOUR - k * 20 * 60_000).toISOString(), responseTime: 80 + (k % 24) * 9,
    })));
    await h.a.post('/api/v1/dashboards', { header: 'Shop', customUrl: 'shop', expandChecks: true });

    const { page, errors, requests, violations } = await newPage();
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.goto(`${base}/d/shop`, { waitUntil: 'load' });
    // A chart for each check with runs; the one without keeps its box hidden.
    expect(await page.evaluate(() => document.documentElement.dataset.charts)).toBe('2');
    expect(await page.$$eval('[data-check] .chart canvas', (els) => els.length)).toBe(2);
    expect(await shown(page, `[data-check="${checks[0]!.id}"] .chart`)).toBe(true);
    expect(await page.$eval(`[data-check="${checks[2]!.id}"] .chart`, (e) => (e as HTMLElement).hidden)).toBe(true);
    // The line is drawn in the light theme's link colour (#0b57d0).
    const first = `[data-check="${checks[0]!.id}"]`;
    expect((await inked(page, [0x0b, 0x57, 0xd0], first))[0]).toBeGreaterThan(100);
    // Hovering a point names its hour and median.
    const box = (await (await page.$(`[data-check="${checks[0]!.id}"] .chart .u-over`))!.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    expect(await page.$eval(`[data-check="${checks[0]!.id}"] .chart-tip`, (e) => e.textContent)).toMatch(/^\d\d:00 UTC: \d+ ms median, \d+ runs$/);
    await shot(page, 'dashboard-charts-light');
    await page.mouse.move(0, 0);

    // Dark: the page's colours change and the line is redrawn in the dark link colour (#8ab4f8).
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await page.waitForFunction(() => getComputedStyle(document.body).backgroundColor === 'rgb(17, 20, 24)');
    // The redraw follows the media query's change event, a frame after the new colours: wait for its pixels.
    for (let i = 0; i < 100 && ((await inked(page, [0x8a, 0xb4, 0xf8], first))[0] ?? 0) <= 100; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await inked(page, [0x8a, 0xb4, 0xf8], first))[0]).toBeGreaterThan(100);
    expect((await inked(page, [0x0b, 0x57, 0xd0], first))[0]).toBe(0);
    await shot(page, 'dashboard-charts-dark');

    expect(await violations()).toEqual([]);
    expect(errors).toEqual([]);
    expect(requests.every((u) => u.startsWith(base) || u.startsWith('data:'))).toBe(true);
    expect(requests.filter((u) => u.includes('/assets/'))).toHaveLength(3);

    // 375 px wide: the charts fit their cards and nothing scrolls sideways.
    const phone = await newPage({ width: 375, height: 740 });
    await phone.page.goto(`${base}/d/shop`, { waitUntil: 'load' });
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await phone.page.$$eval('[data-check]:has(canvas)', (els) => els.length > 0 && els.every((e) => {
      const card = e.getBoundingClientRect();
      const chart = e.querySelector('.chart canvas')!.getBoundingClientRect();
      return chart.width > 200 && chart.left >= card.left && chart.right <= card.right;
    }))).toBe(true);
    expect(await phone.violations()).toEqual([]);
    await shot(phone.page, 'dashboard-charts-phone');

    // Without scripts: no chart, every figure and the HTML hour bars still there.
    const plain = await newPage();
    await plain.page.setJavaScriptEnabled(false);
    await plain.page.goto(`${base}/d/shop`, { waitUntil: 'load' });
    expect(await plain.page.$$eval('.chart', (els) => els.every((e) => (e as HTMLElement).hidden && e.getBoundingClientRect().height === 0))).toBe(true);
    expect(await plain.page.$$eval('[data-check] .bar', (els) => els.length)).toBe(3);
    expect(await shown(plain.page, '[data-check] .bar')).toBe(true);
    expect(await plain.page.$eval(`[data-check="${checks[0]!.id}"] .p95`, (e) => e.textContent)).toMatch(/^\d+ ms$/);
    for (const p of [page, phone.page, plain.page]) await p.close();
  }, 90_000);

  it('a status page draws each service\'s daily bars with uPlot in place of the HTML ones, with no CSP violation', async () => {
    await open();
    const ids: string[] = [];
    for (const name of ['API', 'Website']) ids.push((await h.a.post('/api/v1/status-pages/services', { name })).body.id);
    await h.a.post('/api/v1/status-pages', { name: 'Acme status', url: 'acme', defaultTheme: 'DARK', cards: [{ name: 'Platform', serviceIds: ids }] });
    h.clock.advance(3 * 86_400_000);
    const inc = await h.a.post('/api/v1/status-pages/incidents', { name: 'Errors', serviceIds: [ids[1]], incidentUpdate: { description: 'Errors', status: 'INVESTIGATING' } });
    h.clock.advance(12 * HOUR);
    await h.a.post(`/api/v1/status-pages/incidents/${inc.body.id}/updates`, { description: 'Fixed', status: 'RESOLVED' });
    h.clock.advance(86_400_000);

    const { page, errors, violations } = await newPage();
    await page.goto(`${base}/s/acme`, { waitUntil: 'load' });
    expect(await page.evaluate(() => document.documentElement.dataset.charts)).toBe('2');
    expect(await page.$$eval('[data-service] .bar', (els) => els.map((e) => (e as HTMLElement).hidden))).toEqual([true, true]);
    expect(await shown(page, '[data-service] .chart canvas')).toBe(true);
    // Days up (#137333) on both; the day of the outage (down half of it: #b3261e) only on the website.
    expect((await inked(page, [0x13, 0x73, 0x33])).every((n) => n > 100)).toBe(true);
    const down = await inked(page, [0xb3, 0x26, 0x1e]);
    expect(down[0]).toBe(0);
    expect(down[1]).toBeGreaterThan(20);
    // The chart box says what the hidden HTML bar said.
    expect(await page.$eval(`[data-service="${ids[1]}"] .chart`, (e) => e.getAttribute('aria-label'))).toMatch(/^Website: \d+(\.\d+)?% uptime over 90 days$/);
    const box = (await (await page.$(`[data-service="${ids[1]}"] .chart .u-over`))!.boundingBox())!;
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
    expect(await page.$eval(`[data-service="${ids[1]}"] .chart-tip`, (e) => e.textContent)).toMatch(/^\d{4}-\d\d-\d\d: (\d+(\.\d+)?% uptime|no data)$/);
    await shot(page, 'status-page-charts-dark');

    // The theme button switches the page; the bars of days without data follow its border colour.
    await page.click('#theme-toggle');
    expect((await inked(page, [0xd5, 0xd9, 0xe0])).every((n) => n > 100)).toBe(true);
    await shot(page, 'status-page-charts-light');
    expect(await violations()).toEqual([]);
    expect(errors).toEqual([]);

    const phone = await newPage({ width: 375, height: 740 });
    await phone.page.goto(`${base}/s/acme`, { waitUntil: 'load' });
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await phone.violations()).toEqual([]);
    await shot(phone.page, 'status-page-charts-phone');
    await page.close();
    await phone.page.close();
  }, 90_000);
});
