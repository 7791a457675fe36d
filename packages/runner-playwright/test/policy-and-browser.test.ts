import { PUBLIC_ONLY_TARGET_POLICY, type RunResult } from '@vigil/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playwrightRunner, validatePlaywrightCheck, type PlaywrightRunner, type RefusedTarget } from '../src/index.js';
import { browserProcesses, CHROMIUM, HAS_CHROMIUM, playwrightJob, serveSite, testsOf, type Site } from './support.js';

const signal = () => new AbortController().signal;
const IMPORT = "import { expect, test } from '@playwright/test';\n";

describe('validatePlaywrightCheck', () => {
  const issues = (files: Record<string, string>) => {
    try {
      validatePlaywrightCheck({ files });
      return [];
    } catch (err) {
      return (err as { issues: { path: string; message: string }[] }).issues;
    }
  };
  it('accepts a suite with its config at the root', () => {
    expect(issues({ 'playwright.config.ts': 'export default {};', 'tests/a.spec.ts': '' })).toEqual([]);
  });
  it('refuses a config below the root and files where the runner keeps its own', () => {
    expect(issues({ 'tests/playwright.config.ts': '', 'node_modules/@playwright/test/index.js': '', 'a.spec.ts': '' })).toEqual([
      { path: 'files.tests/playwright.config.ts', message: "a Playwright config must be at the suite's root" },
      { path: 'files.node_modules/@playwright/test/index.js', message: expect.stringMatching(/where the runner keeps its own files/) },
    ]);
  });
});

describe('a runner without its Chromium', () => {
  it.each([true, false])('fails a run with an error that names the missing Chromium (shareBrowser: %s)', async (shareBrowser) => {
    const runner = playwrightRunner({ executablePath: '/nonexistent/chromium', shareBrowser });
    try {
      const result = await runner.run(playwrightJob({ 'a.spec.ts': `${IMPORT}test('x', () => {});\n` }), signal());
      expect(result).toMatchObject({ hasErrors: true, failureKind: 'OTHER' });
      expect(result.errorMessage).toBe('The browser could not be started: there is no Chromium at /nonexistent/chromium (on Debian: apt-get install chromium; executablePath or PUPPETEER_EXECUTABLE_PATH names another)');
    } finally {
      await runner.close();
    }
  });
});

describe.skipIf(!HAS_CHROMIUM)('Playwright runner: target policy and the shared browser', () => {
  let site: Site;
  let runner: PlaywrightRunner;
  beforeAll(async () => {
    site = await serveSite({ '/': '<!doctype html><title>Shop</title><h1>Shop</h1>' });
    runner = playwrightRunner({ executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await runner.close();
    await site.close();
  });

  it('refuses the suite\'s pages and request fixture at 127.0.0.1 under a policy that refuses internal addresses', async () => {
    site.requests.length = 0;
    const files = {
      'policy.spec.ts': `${IMPORT}test('page', async ({ page }) => {\n  await page.goto('${site.url}/');\n});\ntest('request', async ({ request }) => {\n  await request.get('${site.url}/api');\n});\ntest('own context', async ({ browser }) => {\n  const context = await browser.newContext();\n  await (await context.newPage()).goto('${site.url}/own');\n});\n`,
      // A context made over CDP has no proxy of its own: the browser's launch-level proxy holds it.
      'cdp.spec.ts': `${IMPORT}test('cdp context', async ({ browser }) => {\n  const cdp = await browser.newBrowserCDPSession();\n  const { browserContextId } = await cdp.send('Target.createBrowserContext', {});\n  await cdp.send('Target.createTarget', { url: '${site.url}/cdp', browserContextId });\n  await new Promise((r) => setTimeout(r, 1_500));\n});\n`,
    };
    const result: RunResult = await runner.run(playwrightJob(files, {}, { targetPolicy: PUBLIC_ONLY_TARGET_POLICY }), signal());
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(/^The target policy refused 127\.0\.0\.1/);
    expect(result.details).toMatchObject({ errorCode: 'ETARGETPOLICY' });
    expect((result.details!.refusedTargets as RefusedTarget[]).map((r) => r.address)).toEqual(['127.0.0.1']);
    expect(testsOf(result.details).map((t) => [t.title, t.status])).toEqual([['cdp context', 'passed'], ['page', 'failed'], ['request', 'failed'], ['own context', 'failed']]);
    expect(site.requests).toEqual([]);
    // The same suite without the policy reaches the site.
    const open = await runner.run(playwrightJob({ 'policy.spec.ts': files['policy.spec.ts'].replace('/api', '/').replace('/own', '/') }), signal());
    expect(open.hasFailures).toBe(false);
    expect(site.requests.filter((path) => path !== '/favicon.ico')).toEqual(['/', '/', '/']);
  }, 60_000);

  it('runs the suites of one account in one shared browser, of another account in another, and starts one again when it died', async () => {
    const suite = { 'a.spec.ts': `${IMPORT}test('shop', async ({ page, browser }) => {\n  await page.goto('${site.url}/');\n  await expect(page).toHaveTitle('Shop');\n  expect(browser.contexts()).toHaveLength(1);\n});\n` };
    const first = await runner.run(playwrightJob(suite), signal());
    expect(first.hasFailures).toBe(false);
    const pid = await runner.browserPid('account-1');
    expect(pid).not.toBeNull();
    const launches = runner.browserLaunches();
    const second = await runner.run(playwrightJob(suite), signal());
    expect(second.hasFailures).toBe(false);
    expect(await runner.browserPid('account-1')).toBe(pid);
    expect(runner.browserLaunches()).toBe(launches);
    // Another account's runs never share that browser.
    const other = await runner.run(playwrightJob(suite, {}, { accountId: 'account-2' }), signal());
    expect(other.hasFailures).toBe(false);
    const otherPid = await runner.browserPid('account-2');
    expect(otherPid).not.toBeNull();
    expect(otherPid).not.toBe(pid);
    expect(runner.browserLaunches()).toBe(launches + 1);
    expect(browserProcesses()).toEqual(expect.arrayContaining([pid, otherPid]));
    // The one Chromium is the shared one: the runs started none of their own.
    expect(browserProcesses()).toContain(pid);
    process.kill(pid!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const third = await runner.run(playwrightJob(suite), signal());
    expect(third.hasFailures).toBe(false);
    expect(runner.browserLaunches()).toBe(launches + 2);
    expect(await runner.browserPid('account-1')).not.toBe(pid);
  }, 60_000);

  it('ends the runs in progress and its browser on close', async () => {
    const own = playwrightRunner({ executablePath: CHROMIUM });
    const result = await own.run(playwrightJob({ 'a.spec.ts': `${IMPORT}test('x', async ({ page }) => { await page.setContent('<p>x</p>'); });\n` }), signal());
    expect(result.hasFailures).toBe(false);
    const pid = (await own.browserPid('account-1'))!;
    expect(browserProcesses()).toContain(pid);
    const sleeping = own.run(playwrightJob({ 'a.spec.ts': `${IMPORT}test('waits', async ({ page }) => {\n  await page.setContent('<p>x</p>');\n  await new Promise((r) => setTimeout(r, 600_000));\n});\n` }), signal());
    await new Promise((r) => setTimeout(r, 2_000));
    const closing = Date.now();
    await own.close();
    expect(Date.now() - closing).toBeLessThan(5_000);
    expect(await sleeping).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
    await new Promise((r) => setTimeout(r, 200));
    expect(browserProcesses()).not.toContain(pid);
  }, 30_000);
});
