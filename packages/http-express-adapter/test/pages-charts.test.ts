import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { percentileCont } from '@vigil/core';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { vigilPages } from '../src/index.js';
import { apiHarness, type ApiHarness } from './support/harness.js';
import { pagesHarness, seedChecks } from './support/pages.js';

let h: ApiHarness;
afterEach(async () => {
  await h?.close();
});

const anon = () => request(h.app);
const uplotFile = (name: string) => readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`));

/** An asset as bytes (supertest buffers only text types by itself). */
async function bytes(path: string) {
  const res = await anon().get(path).buffer(true).parse((r, done) => {
    const chunks: Buffer[] = [];
    r.on('data', (c: Buffer) => chunks.push(c));
    r.on('end', () => done(null, Buffer.concat(chunks)));
  });
  return { status: res.status, headers: res.headers, body: res.body as Buffer };
}

/** The chart files a page loads: the stylesheet and the two scripts, in the page's order. */
function assetUrls(html: string): { css: string; scripts: string[] } {
  return {
    css: /<link rel="stylesheet" nonce="[^"]+" href="([^"]+)">/.exec(html)![1]!,
    scripts: [...html.matchAll(/<script nonce="[^"]+" src="([^"]+)" defer><\/script>/g)].map((m) => m[1]!),
  };
}

/** The text of the page's chart data element, and what it parses to. */
function chartData(html: string): { text: string; data: { charts: Record<string, unknown>[] } } {
  const open = '<script type="application/json" id="vigil-chart-data">';
  const start = html.indexOf(open) + open.length;
  const text = html.slice(start, html.indexOf('</script>', start));
  return { text, data: JSON.parse(text) };
}

async function expandedDashboard(customUrl = 'shop') {
  const res = await h.a.post('/api/v1/dashboards', { header: 'Shop', customUrl, expandChecks: true });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

describe('chart assets of the pages', () => {
  it('are uPlot and the chart script under names that hash their content, cached for a year as immutable', async () => {
    h = await pagesHarness();
    await seedChecks(h, ['PASSING']);
    await expandedDashboard();
    const page = await anon().get('/d/shop');
    const { css, scripts } = assetUrls(page.text);
    expect(css).toMatch(/^\/assets\/uplot\.[0-9a-f]{16}\.min\.css$/);
    expect(scripts).toHaveLength(2);
    expect(scripts[0]).toMatch(/^\/assets\/uplot\.[0-9a-f]{16}\.min\.js$/);
    expect(scripts[1]).toMatch(/^\/assets\/charts\.[0-9a-f]{16}\.js$/);
    const expected: Record<string, { type: string; body?: Buffer }> = {
      [css]: { type: 'text/css; charset=utf-8', body: uplotFile('uPlot.min.css') },
      [scripts[0]!]: { type: 'text/javascript; charset=utf-8', body: uplotFile('uPlot.iife.min.js') },
      [scripts[1]!]: { type: 'text/javascript; charset=utf-8' },
    };
    for (const [url, want] of Object.entries(expected)) {
      const res = await bytes(url);
      expect(res.status, url).toBe(200);
      expect(res.headers['content-type']).toBe(want.type);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      if (want.body) expect(res.body.equals(want.body)).toBe(true);
      const hash = /\.([0-9a-f]{16})\./.exec(url)![1];
      expect(createHash('sha256').update(res.body).digest('hex').slice(0, 16)).toBe(hash);
    }
    // The same names on every page and every request: the browser's copy serves them all.
    expect(assetUrls((await anon().get('/d/shop')).text)).toEqual({ css, scripts });
  });

  it('answer 404 for a name of their shape with another hash, and leave other names under /assets to the host', async () => {
    h = await pagesHarness();
    h.app.get('/assets/site.css', (_req, res) => {
      res.type('css').send('body{}');
    });
    for (const path of ['/assets/uplot.0123456789abcdef.min.js', '/assets/uplot.0123456789abcdef.min.css', '/assets/charts.0123456789abcdef.js']) {
      const res = await anon().get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers['cache-control']).toBe('no-cache');
    }
    const host = await anon().get('/assets/site.css');
    expect(host.status).toBe(200);
    expect(host.text).toBe('body{}');
  });

  it('are loaded by elements carrying the response\'s nonce, under a CSP that admits nothing else', async () => {
    h = await pagesHarness();
    await seedChecks(h, ['PASSING']);
    await expandedDashboard();
    const res = await anon().get('/d/shop');
    const csp = res.headers['content-security-policy'] as string;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp.split('; ')).toEqual([
      "default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, 'img-src data:', "form-action 'self'", "base-uri 'none'",
    ]);
    const html = res.text.replace(/&#x3D;/g, '=');
    // Every script that runs and every stylesheet carries this nonce; the data element is not script.
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(4);
    expect(scripts.filter((a) => !a.includes(`nonce="${nonce}"`))).toEqual([' type="application/json" id="vigil-chart-data"']);
    expect([...html.matchAll(/<(?:link rel="stylesheet"|style)([^>]*)>/g)].every((m) => m[0].includes(`nonce="${nonce}"`))).toBe(true);
  });

  it('mount with the router: a prefix the host mounts it under is in the URLs', async () => {
    h = await apiHarness();
    h.app.use('/public', vigilPages(h.vigil));
    await seedChecks(h, ['PASSING']);
    await expandedDashboard();
    const { css, scripts } = assetUrls((await anon().get('/public/d/shop')).text);
    for (const url of [css, ...scripts]) {
      expect(url.startsWith('/public/assets/')).toBe(true);
      expect((await bytes(url)).status).toBe(200);
    }
  });
});

describe('chart data of the pages', () => {
  it('gives each dashboard card its check\'s hourly medians where the dashboard shows response times, expanded or not', async () => {
    h = await pagesHarness();
    const [check] = await seedChecks(h, ['PASSING']);
    await expandedDashboard();
    const html = (await anon().get('/d/shop')).text;
    const { data } = chartData(html);
    expect(data.charts).toHaveLength(1);
    const spark = data.charts[0] as { kind: string; name: string; t: number[]; p50: (number | null)[]; runs: number[] };
    expect(spark).toMatchObject({ kind: 'spark', name: check!.name });
    // Now is 12:00: the runs 10, 20 … 100 minutes before it fall in the hours of 11:00 (6) and 10:00 (4).
    expect(spark.t).toHaveLength(24);
    expect(spark.t[23]).toBe(Date.parse('2026-05-01T12:00:00Z') / 1000);
    const median = (xs: number[]) => Math.round(percentileCont([...xs].sort((a, b) => a - b), 0.5)!);
    expect(spark.runs.slice(21)).toEqual([4, 6, 0]);
    expect(spark.p50.slice(21)).toEqual([median(check!.times.slice(6)), median(check!.times.slice(0, 6)), null]);
    expect(spark.p50.slice(0, 21).every((v) => v === null)).toBe(true);
    // The chart box: hidden until the script draws it, described for screen readers.
    expect(html).toMatch(/<div class="chart" data-chart="0" role="img" aria-label="Median response time by the hour over the last 24 hours: \d+ to \d+ ms, \d+ ms in the latest hour with runs" hidden><\/div>/);

    // A dashboard that does not expand its checks but shows p95 or p99 has the same sparkline on each card, without the hourly bar.
    await h.a.post('/api/v1/dashboards', { header: 'Flat', customUrl: 'flat' });
    const flat = (await anon().get('/d/flat')).text;
    expect(chartData(flat).data.charts).toEqual(data.charts);
    expect(flat).toContain('<div class="chart" data-chart="0"');
    expect(flat).not.toContain('class="bar"');
    // One that shows no response time at all (no p95, p99 or expanded average) publishes none in a chart either.
    await h.a.post('/api/v1/dashboards', { header: 'Quiet', customUrl: 'quiet', showP95: false, showP99: false });
    const quiet = (await anon().get('/d/quiet')).text;
    expect(quiet).not.toContain('vigil-chart-data');
    expect(quiet).not.toContain('class="chart"');
    expect(quiet).not.toMatch(/\d+ ms/);
  });

  it('keeps a check name from closing the data element or opening a comment in it', async () => {
    h = await pagesHarness();
    const name = '</script><script>alert(1)</script><!-- & \u2028 </SCRIPT >';
    await seedChecks(h, ['PASSING'], () => name);
    await expandedDashboard();
    const html = (await anon().get('/d/shop')).text;
    const { text, data } = chartData(html);
    expect(text).not.toMatch(/[<>&\u2028]/);
    expect(data.charts[0]!.name).toBe(name);
    expect(html).not.toContain('<script>alert');
    expect(html.match(/<script/g)).toHaveLength(4);
  });

  it('gives a status page each service\'s daily bars, the HTML bars staying for browsers without scripts', async () => {
    h = await pagesHarness();
    const ids: string[] = [];
    for (const name of ['API', '</script>Web']) ids.push((await h.a.post('/api/v1/status-pages/services', { name })).body.id);
    await h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: ids }, { name: 'Again', serviceIds: [ids[0]] }] });
    h.clock.advance(2 * 86_400_000);
    const inc = await h.a.post('/api/v1/status-pages/incidents', { name: 'Down', serviceIds: [ids[0]], incidentUpdate: { description: 'Down', status: 'INVESTIGATING' } });
    h.clock.advance(6 * 3_600_000);
    await h.a.post(`/api/v1/status-pages/incidents/${inc.body.id}/updates`, { description: 'Up', status: 'RESOLVED' });
    const html = (await anon().get('/s/acme')).text;
    const { data } = chartData(html);
    // One chart per service per card, in page order: API, Web, API again.
    expect(data.charts.map((c) => c.name)).toEqual(['API', '</script>Web', 'API']);
    const api = data.charts[0] as { kind: string; dates: string[]; labels: string[]; cls: number[] };
    expect(api.kind).toBe('days');
    expect(api.dates).toHaveLength(90);
    // Each day's class and label are those of the HTML bar (ok 0, some 1, down 2, none 3).
    const block = html.slice(html.indexOf('id="bar-0"'), html.indexOf('id="bar-1"'));
    const spans = [...block.matchAll(/<span class="(b-[a-z]+)" title="([^"]+)"><\/span>/g)].map((m) => [m[1], m[2]]);
    expect(spans).toHaveLength(90);
    expect(spans).toEqual(api.dates.map((d, i) => [['b-ok', 'b-some', 'b-down', 'b-none'][api.cls[i]!], `${d}: ${api.labels[i]}`]));
    // Today, down 6 of its 18 hours so far.
    expect(api.labels.slice(-3)).toEqual(['100% uptime', '100% uptime', '66.67% uptime']);
    expect(api.cls.slice(-3)).toEqual([0, 0, 2]);
    for (const i of [0, 1, 2]) expect(html).toMatch(new RegExp(`<div class="chart" data-chart="${i}" data-fallback="bar-${i}" role="img" aria-label="[^"]+ uptime over 90 days" hidden>`));
  });
});
