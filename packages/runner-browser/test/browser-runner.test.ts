import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '@vigil/core';
import { runnerSuite } from '@vigil/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunner, directoryArtifacts, type ArtifactRecord } from '../src/index.js';
import { browserJob, CHROMIUM_BUILDS, serveSite, SHOP_PAGE, type BrowserJobOptions, type Site } from './support.js';


const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
const never = () => undefined;
const signal = () => new AbortController().signal;

// Every test below runs once per Chromium build here: Debian's chromium and its headless shell.
describe.each(CHROMIUM_BUILDS)('browser runner on %s', (executablePath) => {
  let site: Site;
  let dir: string;
  const artifacts = () => directoryArtifacts(dir);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-artifacts-test-'));
    site = await serveSite({
      '/': SHOP_PAGE,
      '/never': never,
      '/missing-image': '<!doctype html><title>x</title><img src="/nope.png" alt="missing"><script>throw new Error("boom in page")</script>',
      '/popup': '<!doctype html><title>popup</title><script>console.log("popup loading")</script>',
    });
  });
  afterAll(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('conformance', () => {
    runnerSuite(it, async () => {
      const runner = browserRunner({ executablePath, poolSize: 1, artifacts: artifacts() });
      return {
        runner,
        passing: browserJob({ script: `await page.goto('${site.url}/');\nassert.equal(await page.title(), 'Shop');` }),
        failing: browserJob({ script: `await page.goto('${site.url}/');\nassert.equal(await page.title(), 'Cart');` }),
        hanging: browserJob({ script: `await page.goto('${site.url}/never');` }),
        leakingSecret: browserJob({
          script: `await page.goto('${site.url}/');\nconsole.log('token', process.env.SERVICE_SECRET_TOKEN);\nthrow new Error('login refused for ' + process.env.SERVICE_SECRET_TOKEN);`,
          job: { environment: { SERVICE_SECRET_TOKEN: 'tok-3f9a1c7e' }, secrets: ['tok-3f9a1c7e'] },
        }),
        invalidCheck: { checkType: 'BROWSER', name: 'broken', script: 'await page.goto(' },
        cleanup: () => runner.close(),
      };
    });
  });

  describe('runs', () => {
    // Two runs prepared ahead per browser: runs stay apart however many contexts wait beside them.
    const runner = browserRunner({ executablePath, poolSize: 2, prepareAhead: 2, artifacts: undefined });
    let store: ReturnType<typeof directoryArtifacts>;
    let withStore: ReturnType<typeof browserRunner>;
    beforeAll(() => {
      store = artifacts();
      withStore = browserRunner({ executablePath, poolSize: 2, artifacts: store, memoryLimitMb: 64 });
    });
    afterAll(async () => {
      await runner.close();
      await withStore.close();
    });
    const run = (options: BrowserJobOptions) => withStore.run(browserJob(options), signal());
    const stored = (result: RunResult) => (result.details?.artifacts ?? []) as ArtifactRecord[];

    it('passes a script that navigates, clicks, reads text and asserts; records console, timings, web vitals and versions', async () => {
      const result = await run({
        // On a busy machine a page can fire load before it paints, and a click ends its LCP: the
        // script waits for the paint (5 s at most) before it clicks.
        script: `await page.goto('${site.url}/');
await page.evaluate(() => new Promise((resolve) => {
  new PerformanceObserver(() => resolve()).observe({ type: 'largest-contentful-paint', buffered: true });
  setTimeout(resolve, 5000);
}));
await page.click('#add');
const text = await page.$eval('#title', (el) => el.textContent);
expect(text).toBe('Added to cart');
console.log('saw', text);`,
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null, isDegraded: false });
      expect(result.responseTime).toBeGreaterThan(0);
      expect(result.phases.script).toBe(result.responseTime);
      const details = result.details!;
      expect(details.logs).toEqual([expect.objectContaining({ source: 'script', level: 'log', text: 'saw Added to cart' })]);
      expect(details.console).toContainEqual({ type: 'log', text: 'shop ready', url: `${site.url}/` });
      const [nav] = details.webVitals as { url: string; status: number; TTFB: number; FCP: number; LCP: number; CLS: number }[];
      expect(nav).toMatchObject({ url: `${site.url}/`, status: 200 });
      expect(nav!.TTFB).toBeGreaterThan(0);
      expect(nav!.FCP).toBeGreaterThanOrEqual(nav!.TTFB);
      // LCP is read on the wall clock, FCP and TTFB on the monotonic one: ordered against TTFB only.
      expect(nav!.LCP).toBeGreaterThan(nav!.TTFB);
      expect(nav!.CLS).toBe(0);
      expect(details.runtime).toMatchObject({ runtimeId: '2026.04', puppeteer: expect.stringMatching(/^\d+\.\d+\.\d+$/), chromium: expect.stringMatching(/Chrome\/\d+/) });
      expect(stored(result)).toEqual([]);
    });

    it('records what a page the script opens logs while it loads', async () => {
      const result = await run({
        script: `await page.goto('${site.url}/');
const opened = new Promise((resolve) => page.once('popup', resolve));
await page.evaluate(() => { window.open('/popup'); });
const popup = await opened;
await popup.waitForFunction(() => document.readyState === 'complete');`,
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
      expect(result.details!.console).toContainEqual({ type: 'log', text: 'popup loading', url: `${site.url}/popup` });
    });

    it('fails on a failed assertion with its message and line, and stores a screenshot of the page', async () => {
      const result = await run({ script: `await page.goto('${site.url}/');\nassert.equal(await page.title(), 'Checkout');` });
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' });
      expect(result.errorMessage).toContain("'Shop' == 'Checkout'");
      expect(result.errorMessage).toContain('(at script.js:2:');
      const [shot] = stored(result);
      expect(shot).toMatchObject({ name: '01-failure.png', contentType: 'image/png' });
      const bytes = Buffer.from(await store.read(shot!.ref));
      expect(bytes.subarray(0, 4)).toEqual(PNG);
      expect(bytes.byteLength).toBe(shot!.bytes);
    });

    it('fails on a thrown error, and records page errors and failed requests', async () => {
      const result = await run({ script: `await page.goto('${site.url}/missing-image');\nthrow new Error('Cart is empty');` });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER', errorMessage: 'Cart is empty (at script.js:2:7)' });
      expect(result.details!.pageErrors).toEqual([expect.stringContaining('boom in page')]);
      expect(result.details!.failedRequests).toContainEqual({ method: 'GET', url: `${site.url}/nope.png`, error: null, status: 404 });
    });

    it('a network error is classified as one', async () => {
      const closed = await serveSite({});
      const url = closed.url;
      await closed.close();
      const result = await run({ script: `await page.goto('${url}/');` });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
      expect(result.errorMessage).toContain('net::ERR_CONNECTION_REFUSED');
    });

    it('stops a page that never loads at the time limit, with a screenshot', async () => {
      const started = Date.now();
      const result = await run({ script: `await page.goto('${site.url}/never', { timeout: 0 });`, job: { timeoutMs: 4_000 } });
      // Within the engine's limit for the job, so the runner's own result is the one that counts.
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
      expect(result.errorMessage).toBe("The script did not finish within the run's time limit of 2.5 s and was stopped");
      expect(stored(result).map((a) => a.name)).toEqual(['01-failure.png']);
      expect(result.details!.webVitals).toEqual([{ url: `${site.url}/never`, status: null, TTFB: null, FCP: null, LCP: null, CLS: null }]);
    });

    it('takes no failure screenshot of a run with secrets when the page cannot be masked in time', async () => {
      const result = await run({
        script: `await page.goto('${site.url}/never', { timeout: 0 });`,
        job: { timeoutMs: 4_000, environment: { TOKEN: 'abc-123-xyz' }, secrets: ['abc-123-xyz'] },
      });
      expect(result.failureKind).toBe('TIMEOUT');
      expect(stored(result)).toEqual([]);
      expect(result.details!.artifactErrors).toEqual(["No failure screenshot: the page did not answer in time to hide the run's secrets"]);
    });

    it('scrubs secret values from logs, errors and console messages, and masks them on screenshots', async () => {
      const secret = 'pa55-w0rd/+x';
      const seen: string[] = [];
      const spy = await serveSite({
        '/': `<!doctype html><title>Account</title><p id="token"></p><script>
let n = 0;
new MutationObserver(() => fetch('/seen?n=' + (n++) + '&text=' + encodeURIComponent(document.getElementById('token').textContent)))
  .observe(document.getElementById('token'), { childList: true, characterData: true, subtree: true });
</script>`,
        '/seen': (req, res) => {
          const query = new URL(req.url!, 'http://x').searchParams;
          seen[Number(query.get('n'))] = query.get('text')!;
          res.end();
        },
      });
      try {
        const result = await run({
          script: `await page.goto('${spy.url}/');
await page.evaluate((t) => { document.getElementById('token').textContent = 'Token: ' + t; console.log('page has ' + t); }, process.env.API_TOKEN);
await page.screenshot();
await new Promise((r) => setTimeout(r, 200));
expect(await page.$eval('#token', (el) => el.textContent)).toBe('Token: ' + process.env.API_TOKEN);
console.log('encoded', encodeURIComponent(process.env.API_TOKEN), Buffer.from(process.env.API_TOKEN).toString('base64'));
throw new Error('login failed with ' + process.env.API_TOKEN);`,
          job: { environment: { API_TOKEN: secret }, secrets: [secret] },
        });
        const recorded = JSON.stringify(result);
        for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) expect(recorded).not.toContain(form);
        expect(result.errorMessage).toBe('login failed with ******** (at script.js:7:7)');
        expect(result.details!.logs).toContainEqual(expect.objectContaining({ text: 'encoded ******** ********' }));
        expect(result.details!.console).toContainEqual(expect.objectContaining({ text: 'page has ********' }));
        // While each screenshot was taken the page showed the mask, and the real text again after
        // the script's own (the run ends right after the failure screenshot, so no one sees its undo).
        expect(seen.slice(0, 4)).toEqual(['Token: pa55-w0rd/+x', 'Token: ********', 'Token: pa55-w0rd/+x', 'Token: ********']);
        expect(stored(result).map((a) => a.name)).toEqual(['01-screenshot-1.png', '02-failure.png']);
      } finally {
        await spy.close();
      }
    });

    it('keeps the run\'s time limit while a browser starts, and the next run gets that browser', async () => {
      const fresh = browserRunner({ executablePath, poolSize: 1, screenshotOnFailure: false });
      try {
        const started = Date.now();
        // 1.6 s for the job leaves 100 ms for the script's side: less than a browser takes to start.
        const late = await fresh.run(browserJob({ script: '1', job: { timeoutMs: 1_600 } }), signal());
        expect(Date.now() - started).toBeLessThan(1_600);
        expect(late).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', errorMessage: "No browser was free within the run's time limit of 0.1 s" });
        const next = await fresh.run(browserJob({ script: `await page.goto('${site.url}/');` }), signal());
        expect(next.errorMessage).toBeNull();
      } finally {
        await fresh.close();
      }
    });

    it('counts the time limit by the clock when a busy event loop fires its timer late', async () => {
      const solo = browserRunner({ executablePath, poolSize: 1, screenshotOnFailure: false });
      try {
        expect((await solo.run(browserJob({ script: '1' }), signal())).errorMessage).toBeNull();
        // The browser is cleaned after a run and the next run prepared: a second is ample for both.
        // (Were it not, the next run would wait for the browser and still time out as below.)
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        // A run whose script side has 100 ms starts while the event loop is blocked for 300 ms: its
        // browser is free at once, but the timer of its time limit cannot fire until the loop is.
        const late = solo.run(browserJob({ script: '1', job: { timeoutMs: 1_600 } }), signal());
        const blockedUntil = Date.now() + 300;
        while (Date.now() < blockedUntil);
        expect(await late).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', errorMessage: "No browser was free within the run's time limit of 0.1 s" });
        expect((await solo.run(browserJob({ script: `await page.goto('${site.url}/');` }), signal())).errorMessage).toBeNull();
      } finally {
        await solo.close();
      }
    });

    it('replaces a browser that crashed', async () => {
      // This test's own browsers: Chromium processes started by this process for a Vigil profile.
      const chromiumPids = () => new Set(execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n').filter((line) => line.includes('vigil-chromium-')).map((line) => Number(line.trim().split(/\s+/)[0])));
      const before = chromiumPids();
      const solo = browserRunner({ executablePath, poolSize: 1, screenshotOnFailure: false });
      let killed = 0;
      const crashing = await serveSite({
        '/crash': (_req, res) => {
          for (const pid of chromiumPids()) {
            if (before.has(pid)) continue;
            process.kill(-pid, 'SIGKILL');
            killed++;
          }
          res.end('gone');
        },
      });
      try {
        const crashed = await solo.run(browserJob({ script: `await page.goto('${crashing.url}/crash').catch(() => {});\nawait new Promise(() => {});` }), signal());
        expect(killed).toBe(1);
        expect(crashed).toMatchObject({ hasErrors: true, errorMessage: 'The browser crashed during the run' });
        const next = await solo.run(browserJob({ script: `await page.goto('${site.url}/');\nexpect(await page.title()).toBe('Shop');` }), signal());
        expect(next.errorMessage).toBeNull();
      } finally {
        await solo.close();
        await crashing.close();
      }
    });

    it('runs scriptPath and dependency files; require("puppeteer") hands back the run\'s browser', async () => {
      const result = await run({
        script: `const puppeteer = require('puppeteer');
const { addToCart } = require('../lib/cart.js');
const own = await puppeteer.launch();
const tab = await own.newPage();
await tab.goto('${site.url}/');
expect(await addToCart(tab)).toBe('Added to cart');
expect(await own.pages()).toHaveLength(2);
await own.close();
expect(page.isClosed()).toBe(false);`,
        check: {
          scriptPath: 'tests/cart.spec.js',
          dependencies: [{ path: 'lib/cart.js', content: "exports.addToCart = async (page) => { await page.click('#add'); return page.$eval('#title', (el) => el.textContent); };" }],
        },
      });
      expect(result.errorMessage).toBeNull();
    });

    it('reports a run the script marked as degraded', async () => {
      const result = await run({ script: "markDegraded('checkout took 4 s');" });
      expect(result).toMatchObject({ hasFailures: false, isDegraded: true });
      expect(result.details!.degradedReason).toBe('checkout took 4 s');
    });

    it('refuses artifacts past the limit with a clear error and keeps the run', async () => {
      const small = browserRunner({ executablePath, poolSize: 1, artifacts: store, maxArtifactBytes: 1_000 });
      try {
        const result = await small.run(browserJob({ script: `await page.goto('${site.url}/');\nawait page.screenshot({ path: 'home.png' });` }), signal());
        expect(result.errorMessage).toBeNull();
        expect(result.details!.artifacts).toEqual([]);
        expect(result.details!.artifactErrors).toEqual([expect.stringMatching(/^home\.png \(0\.0 MB\) was not stored: the run's artifacts would pass the limit of 0 MB$/)]);
      } finally {
        await small.close();
      }
    });

    it('reads the days left on the certificate of sslCheckDomain from what the browser was served', async () => {
      const certDir = mkdtempSync(join(tmpdir(), 'vigil-cert-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '20', '-subj', '/CN=shop.vigil.test',
        '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem')], { stdio: 'ignore' });
      const server = https.createServer({ key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) }, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<title>secure</title>');
      });
      rmSync(certDir, { recursive: true, force: true });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      const secure = browserRunner({
        executablePath,
        poolSize: 1,
        args: ['--host-resolver-rules=MAP shop.vigil.test 127.0.0.1', '--ignore-certificate-errors'],
      });
      try {
        const port = (server.address() as AddressInfo).port;
        const result = await secure.run(browserJob({
          script: `await page.goto('https://shop.vigil.test:${port}/');\nexpect(await page.title()).toBe('secure');`,
          check: { sslCheckDomain: 'shop.vigil.test' },
        }), signal());
        expect(result.errorMessage).toBeNull();
        expect(result.sslDaysRemaining).toBe(19);
        expect(result.details!.ssl).toEqual({ domain: 'shop.vigil.test', daysRemaining: 19, source: 'browser' });
        const unseen = await secure.run(browserJob({ script: '1', check: { sslCheckDomain: 'other.vigil.test' } }), signal());
        expect(unseen.sslDaysRemaining).toBeNull();
        expect(unseen.details!.ssl).toMatchObject({ error: 'The script did not visit other.vigil.test, so its certificate was not seen' });
      } finally {
        await secure.close();
        server.closeAllConnections();
        server.close();
      }
    });

    it('reports the puppeteer and Chromium versions it runs each runtime as', async () => {
      const runtimes = await runner.runtimes();
      expect(runtimes.map((r) => r.runtimeId)).toEqual(['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10']);
      for (const r of runtimes) expect(r).toMatchObject({ puppeteer: expect.stringMatching(/^\d+\./), chromium: expect.stringMatching(/Chrome\/\d+/), node: process.version });
    });
  });
});
