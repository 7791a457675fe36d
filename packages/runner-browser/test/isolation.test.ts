import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunner, directoryArtifacts } from '../src/index.js';
import { browserJob, CHROMIUM_BUILDS, serveSite, SHOP_PAGE, type BrowserJobOptions, type Site } from './support.js';

const signal = () => new AbortController().signal;

// A script kept to its run: its process (environment, folder, modules, exit, time and memory) and
// the browser it shares with other runs (contexts, pages, files, browser-wide commands).
describe.each(CHROMIUM_BUILDS)('a browser check\'s script kept to its run on %s', (executablePath) => {
  let site: Site;
  let dir: string;
  // Two runs prepared ahead per browser: runs stay apart however many contexts wait beside them.
  const runner = browserRunner({ executablePath, poolSize: 2, prepareAhead: 2, artifacts: undefined });
  let limited: ReturnType<typeof browserRunner>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-artifacts-test-'));
    site = await serveSite({ '/': SHOP_PAGE });
    limited = browserRunner({ executablePath, poolSize: 2, artifacts: directoryArtifacts(dir), memoryLimitMb: 64 });
  });
  afterAll(async () => {
    await runner.close();
    await limited.close();
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = (options: BrowserJobOptions) => limited.run(browserJob(options), signal());

  it('gives the script the check\'s variables and nothing of the host\'s environment', async () => {
    process.env.VIGIL_HOST_ONLY_SECRET = 'host-secret-value';
    try {
      const result = await run({
        script: `await page.goto('${site.url}/');
await page.evaluate((name) => { document.getElementById('title').textContent = 'Hello ' + name; }, process.env.CUSTOMER);
expect(await page.$eval('#title', (el) => el.textContent)).toBe('Hello Ada');
expect(Object.keys(process.env).sort()).toEqual(['CUSTOMER', 'VIGIL_RUN_SOURCE']);
expect(process.env.VIGIL_HOST_ONLY_SECRET).toBeUndefined();`,
        job: { environment: { CUSTOMER: 'Ada', VIGIL_RUN_SOURCE: 'TEST' } },
      });
      expect(result.errorMessage).toBeNull();
    } finally {
      delete process.env.VIGIL_HOST_ONLY_SECRET;
    }
  });

  it('keeps the script in its own folder: no reads elsewhere, no child processes', async () => {
    const result = await run({
      script: `const fs = require('node:fs');
fs.writeFileSync('note.txt', 'mine');
expect(fs.readFileSync('note.txt', 'utf8')).toBe('mine');
expect(() => fs.readFileSync('/etc/hostname')).toThrow(expect.objectContaining({ code: 'ERR_ACCESS_DENIED' }));
expect(() => fs.writeFileSync('/tmp/vigil-escape.txt', 'x')).toThrow(expect.objectContaining({ code: 'ERR_ACCESS_DENIED' }));
expect(() => require('node:child_process').execSync('id')).toThrow("require('node:child_process') is not available to check scripts");
expect(() => require('net')).toThrow("require('net') is not available to check scripts");
expect(() => require('module')).toThrow("require('module') is not available to check scripts");
expect(() => process.getBuiltinModule('node:child_process')).toThrow("process.getBuiltinModule('node:child_process') is not available to check scripts");
expect(process.getBuiltinModule('node:path').join('a', 'b')).toBe('a/b');
expect(typeof require('node:https').request).toBe('function');
expect([process.kill, process._debugProcess]).toEqual([undefined, undefined]);`,
    });
    expect(result.errorMessage).toBeNull();
  });

  it('a script that calls process.exit fails its run and harms nothing else', async () => {
    const result = await run({ script: 'process.exit(0);' });
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false });
    expect(result.errorMessage).toContain('may not end its process (process.exit(0) was called)');
    const hard = await run({ script: 'process.reallyExit(3);' });
    expect(hard.errorMessage).toBe('The script\'s process ended before the script finished (exit code 3)');
    const next = await run({ script: `await page.goto('${site.url}/');` });
    expect(next.errorMessage).toBeNull();
  });

  it('a script that loops forever is stopped at the time limit and the next run passes', async () => {
    const result = await run({ script: 'for (;;) {}', job: { timeoutMs: 3_000 } });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
    const next = await run({ script: `await page.goto('${site.url}/');` });
    expect(next.errorMessage).toBeNull();
  });

  it('a script that leaks memory fails at its memory limit', async () => {
    const result = await run({ script: 'const keep = []; for (;;) keep.push(new Array(100_000).fill(Math.random()));', job: { timeoutMs: 15_000 } });
    expect(result).toMatchObject({ hasFailures: true, errorMessage: 'The script ran out of memory (its limit is 64 MB)' });
  });

  it('gives every run a fresh incognito context: no cookies or storage of the run before', async () => {
    const first = await runner.run(browserJob({
      script: `await page.goto('${site.url}/');
await page.evaluate(() => { localStorage.setItem('cart', '3 items'); document.cookie = 'session=abc'; });
expect(await page.evaluate(() => document.cookie)).toBe('session=abc');`,
    }), signal());
    expect(first.errorMessage).toBeNull();
    for (let i = 0; i < 3; i++) {
      const later = await runner.run(browserJob({
        script: `await page.goto('${site.url}/');
expect(await page.evaluate(() => [document.cookie, localStorage.getItem('cart')])).toEqual(['', null]);
expect((await browser.pages()).length).toBe(1);`,
      }), signal());
      expect(later.errorMessage).toBeNull();
    }
  });

  it('leaves nothing of a run in the browser: contexts the script made are disposed, and pages opened in the default context open in the run\'s', async () => {
    const solo = browserRunner({ executablePath, poolSize: 1, screenshotOnFailure: false });
    try {
      const messy = await solo.run(browserJob({
        script: `const real = page.browser();
const own = await real.createBrowserContext();
console.log(own.id);
const hidden = await own.newPage();
await hidden.goto('${site.url}/');
await hidden.evaluate(() => localStorage.setItem('cart', 'someone else'));
const shared = await real.defaultBrowserContext().newPage();
await shared.goto('${site.url}/');
await shared.evaluate(() => { document.cookie = 'session=leaked'; });`,
      }), signal());
      expect(messy.errorMessage).toBeNull();
      const leftBehind = (messy.details!.logs as { text: string }[])[0]!.text;
      const next = await solo.run(browserJob({
        script: `const s = await page.browser().target().createCDPSession();
const { browserContextIds } = await s.send('Target.getBrowserContexts');
expect(browserContextIds).toContain(page.browserContext().id);
expect(browserContextIds).not.toContain(process.env.LEFT_BEHIND);
const { targetInfos } = await s.send('Target.getTargets');
expect(targetInfos.filter((t) => t.type === 'page').map((t) => t.url)).not.toContain('${site.url}/');
const { cookies } = await s.send('Storage.getCookies');
expect(cookies).toEqual([]);`,
        job: { environment: { LEFT_BEHIND: leftBehind } },
      }), signal());
      expect(next.errorMessage).toBeNull();
    } finally {
      await solo.close();
    }
  });

  it('keeps a script to its run: no file: or chrome: pages, no host files, nothing browser-wide', async () => {
    const result = await run({
      script: `const blocked = [];
for (const attempt of [
  () => page.goto('file:///etc/passwd'),
  async () => (await page.browser().newPage()).goto('chrome://version'),
  async () => (await page.createCDPSession()).send('Browser.close'),
  async () => (await page.browser().target().createCDPSession()).send('Tracing.start'),
]) {
  try {
  await attempt();
  blocked.push('not blocked');
  } catch (err) {
  blocked.push(err.message);
  }
}
await page.goto('${site.url}/');
// The page itself cannot go to a file either.
await page.evaluate(() => { location.href = 'file:///etc/hostname'; });
await new Promise((r) => setTimeout(r, 300));
console.log(JSON.stringify({ blocked, url: page.url()}));`,
    });
    expect(result.errorMessage).toBeNull();
    const seen = JSON.parse((result.details!.logs as { text: string }[])[0]!.text) as { blocked: string[]; url: string };
    expect(seen.blocked).toEqual([
      expect.stringContaining('Page.navigate is not available to check scripts: a check opens http(s), data:, blob: and about: URLs, not file:'),
      expect.stringContaining('not chrome:'),
      expect.stringContaining('Browser.close is not available to check scripts: the browser is shared with other runs'),
      expect.stringContaining('Tracing.start is not available to check scripts: a trace records every page of the browser'),
    ]);
    expect(seen.url).toBe(`${site.url}/`);
  });
});
