import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runnerSuite } from '@vigil/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directoryArtifacts, playwrightRunner, type PlaywrightRunner } from '../src/index.js';
import { CHROMIUM, HAS_CHROMIUM, playwrightJob, serveSite, testsOf, type Site } from './support.js';

const signal = () => new AbortController().signal;
const IMPORT = "import { expect, test } from '@playwright/test';\n";
const PASSING = { 'tests/home.spec.ts': `${IMPORT}test('home', async ({ page }) => {\n  await page.setContent('<h1>Shop</h1>');\n  await expect(page.locator('h1')).toHaveText('Shop');\n});\n` };
const FAILING = { 'tests/home.spec.ts': `${IMPORT}test('home', async ({ page }) => {\n  await page.setContent('<h1>Shop</h1>');\n  await expect(page.locator('h1')).toHaveText('Closed', { timeout: 300 });\n});\n` };

describe.skipIf(!HAS_CHROMIUM)('Playwright runner conformance', () => {
  runnerSuite(it, async () => {
    const runner = playwrightRunner({ executablePath: CHROMIUM });
    return {
      runner,
      passing: playwrightJob(PASSING),
      failing: playwrightJob(FAILING),
      hanging: playwrightJob({ 'a.spec.ts': `${IMPORT}test('waits', async () => {\n  test.setTimeout(0);\n  await new Promise((r) => setTimeout(r, 600_000));\n});\n` }),
      leakingSecret: playwrightJob(
        { 'a.spec.ts': `${IMPORT}test('token', () => {\n  expect(process.env.API_TOKEN).toBe('expected');\n});\n` },
        {},
        { environment: { API_TOKEN: 'tok-9f8e7d6c5b' }, secrets: ['tok-9f8e7d6c5b'] },
      ),
      invalidCheck: { checkType: 'PLAYWRIGHT', name: 'x', files: { 'a.spec.ts': '', 'tests/playwright.config.ts': 'export default {};' } },
      cleanup: () => runner.close(),
    };
  });
});

describe.skipIf(!HAS_CHROMIUM)('playwrightRunner', () => {
  let site: Site;
  let runner: PlaywrightRunner;
  let artifactsDir: string;
  beforeAll(async () => {
    site = await serveSite({
      '/': '<!doctype html><title>Shop</title><h1>Shop</h1><a href="/cart">Cart</a>',
      '/cart': '<!doctype html><title>Cart</title><h1>Your cart</h1><p id="items">2 items</p>',
    });
    artifactsDir = mkdtempSync(join(tmpdir(), 'vigil-pw-artifacts-'));
    runner = playwrightRunner({ executablePath: CHROMIUM, artifacts: directoryArtifacts(artifactsDir) });
  });
  afterAll(async () => {
    await runner.close();
    await site.close();
    rmSync(artifactsDir, { recursive: true, force: true });
  });

  /** A two-file suite against the local shop, with a config of two projects and a shared helper module. */
  const shopSuite = (cartText = '2 items') => ({
    'playwright.config.ts': `import { defineConfig } from '@playwright/test';\nexport default defineConfig({\n  use: { baseURL: '${site.url}' },\n  projects: [\n    { name: 'desktop', use: { viewport: { width: 1280, height: 720 } } },\n    { name: 'mobile', use: { viewport: { width: 375, height: 667 } } },\n  ],\n});\n`,
    'tests/helpers.ts': "export const heading = 'h1';\n",
    'tests/home.spec.ts': `${IMPORT}import { heading } from './helpers';\ntest.describe('home', () => {\n  test('shows the shop @smoke', async ({ page }) => {\n    await page.goto('/');\n    await expect(page.locator(heading)).toHaveText('Shop');\n  });\n  test('has a title', async ({ page }) => {\n    await page.goto('/');\n    await expect(page).toHaveTitle('Shop');\n  });\n});\n`,
    'tests/cart.spec.ts': `${IMPORT}test.describe('cart', () => {\n  test.describe('with items', () => {\n    test('lists them', async ({ page }) => {\n      await page.goto('/cart');\n      await expect(page.locator('#items')).toHaveText('${cartText}', { timeout: 500 });\n    });\n  });\n});\n`,
  });

  it('runs a two-file suite against a local site and lists every test with its file, describes and project', async () => {
    const result = await runner.run(playwrightJob(shopSuite()), signal());
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false, errorMessage: null, failureKind: null });
    const tests = testsOf(result.details);
    expect(tests).toHaveLength(6);
    expect(tests.map((t) => [t.file, t.suitePath.join('/'), t.title, t.project, t.status]).sort()).toEqual([
      ['tests/cart.spec.ts', 'cart/with items', 'lists them', 'desktop', 'passed'],
      ['tests/cart.spec.ts', 'cart/with items', 'lists them', 'mobile', 'passed'],
      ['tests/home.spec.ts', 'home', 'has a title', 'desktop', 'passed'],
      ['tests/home.spec.ts', 'home', 'has a title', 'mobile', 'passed'],
      ['tests/home.spec.ts', 'home', 'shows the shop @smoke', 'desktop', 'passed'],
      ['tests/home.spec.ts', 'home', 'shows the shop @smoke', 'mobile', 'passed'],
    ]);
    expect(tests.every((t) => t.durationMs > 0 && t.error === null && t.artifacts.length === 0)).toBe(true);
    expect(result.details).toMatchObject({ stats: { passed: 6, failed: 0, flaky: 0, skipped: 0 }, timedOut: false, artifactErrors: [] });
    expect([...(result.details!.projects as string[])].sort()).toEqual(['desktop', 'mobile']);
    expect(result.responseTime).toBeGreaterThan(0);
    expect(result.phases).toEqual({ total: result.responseTime });
    expect(site.requests.filter((p) => p === '/cart')).toHaveLength(2);
  }, 60_000);

  it('fails on a failing test, naming it, and stores its screenshot and trace', async () => {
    const result = await runner.run(playwrightJob(shopSuite('3 items'), { projects: ['desktop'] }), signal());
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toMatch(/^tests\/cart\.spec\.ts › cart › with items › lists them: expect\(locator\)\.toHaveText\(expected\) failed$/);
    const failed = testsOf(result.details).find((t) => t.status === 'failed')!;
    expect(failed.error).toContain('Expected: "3 items"');
    expect(failed.error).toContain('Received: "2 items"');
    expect(result.details).toMatchObject({ stats: { passed: 2, failed: 1, flaky: 0, skipped: 0 }, artifactErrors: [] });
    const store = directoryArtifacts(artifactsDir);
    const screenshot = failed.artifacts.find((a) => a.contentType === 'image/png')!;
    const trace = failed.artifacts.find((a) => a.contentType === 'application/zip')!;
    expect(screenshot.bytes).toBeGreaterThan(1000);
    expect(Buffer.from(await store.read(screenshot.ref)).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(Buffer.from(await store.read(trace.ref)).subarray(0, 2).toString()).toBe('PK');
    // Passing tests keep nothing.
    expect(testsOf(result.details).filter((t) => t.status === 'passed').every((t) => t.artifacts.length === 0)).toBe(true);
  }, 60_000);

  it('runs only the projects and the tests grep and grepInvert choose', async () => {
    const mobile = await runner.run(playwrightJob(shopSuite(), { projects: ['mobile'], grep: '@smoke' }), signal());
    expect(mobile.hasFailures).toBe(false);
    expect(testsOf(mobile.details).map((t) => [t.project, t.title])).toEqual([['mobile', 'shows the shop @smoke']]);
    const inverted = await runner.run(playwrightJob(shopSuite(), { projects: ['desktop'], grepInvert: '@smoke|title' }), signal());
    expect(testsOf(inverted.details).map((t) => [t.project, t.title])).toEqual([['desktop', 'lists them']]);
  }, 60_000);

  it('fails when no test matches', async () => {
    const result = await runner.run(playwrightJob(shopSuite(), { grep: 'no such test' }), signal());
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toMatch(/^No tests matched/);
    expect(testsOf(result.details)).toEqual([]);
  }, 30_000);

  it('fails with Playwright\'s own error when the suite does not load', async () => {
    const syntax = await runner.run(playwrightJob({ 'a.spec.ts': `${IMPORT}test('x', async () => {\n  const = 1;\n});\n` }), signal());
    expect(syntax).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
    expect(syntax.errorMessage).toMatch(/a\.spec\.ts/);
    expect(syntax.errorMessage).toMatch(/Unexpected|SyntaxError|Missing initializer/);
    const missing = await runner.run(playwrightJob({ 'a.spec.ts': `${IMPORT}import { thing } from './nowhere';\ntest('x', () => expect(thing).toBe(1));\n` }), signal());
    expect(missing).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(missing.errorMessage).toMatch(/Cannot find module '\.\/nowhere'/);
  }, 60_000);

  it('passes a suite with a flaky test (passed on a retry) as degraded, and scrubs secrets from errors', async () => {
    const files = {
      'playwright.config.mjs': 'export default { retries: 1 };\n',
      'flaky.spec.ts': `${IMPORT}test('second try', ({}, info) => {\n  expect(info.retry, 'token ' + process.env.API_TOKEN).toBe(1);\n});\ntest('steady', () => {});\n`,
    };
    const result = await runner.run(playwrightJob(files, {}, { environment: { API_TOKEN: 'sekret-abc-123' }, secrets: ['sekret-abc-123'] }), signal());
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: true, errorMessage: null });
    const [flaky, steady] = testsOf(result.details);
    expect(flaky).toMatchObject({ title: 'second try', status: 'flaky', file: 'flaky.spec.ts' });
    expect(flaky!.error).toContain('token ********');
    expect(steady).toMatchObject({ status: 'passed' });
    expect(result.details).toMatchObject({ stats: { passed: 1, failed: 0, flaky: 1, skipped: 0 } });
    expect(JSON.stringify(result)).not.toContain('sekret-abc-123');
  }, 60_000);

  it('applies shouldFail: a failing suite passes, a passing one fails', async () => {
    const failing = await runner.run(playwrightJob(FAILING, { shouldFail: true }), signal());
    expect(failing).toMatchObject({ hasFailures: false, errorMessage: null });
    expect(failing.details?.expectedFailure).toMatchObject({ failureKind: 'ASSERTION' });
    const passing = await runner.run(playwrightJob(PASSING, { shouldFail: true }), signal());
    expect(passing).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
  }, 60_000);
});
