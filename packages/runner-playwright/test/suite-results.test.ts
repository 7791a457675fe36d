import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directoryArtifacts, playwrightRunner, type PlaywrightRunner } from '../src/index.js';
import { CHROMIUM, HAS_CHROMIUM, playwrightJob, serveSite, testsOf, type Site } from './support.js';

const signal = () => new AbortController().signal;
const IMPORT = "import { expect, test } from '@playwright/test';\n";

describe.skipIf(!HAS_CHROMIUM)('playwrightRunner: a suite against a local site', () => {
  let site: Site;
  let runner: PlaywrightRunner;
  let artifactsDir: string;
  beforeAll(async () => {
    site = await serveSite({
      '/': '<!doctype html><title>Shop</title><h1>Shop</h1><a href="/cart">Cart</a>',
      '/cart': '<!doctype html><title>Cart</title><h1>Your cart</h1><p id="items">2 items</p>',
    });
    artifactsDir = mkdtempSync(join(tmpdir(), 'vigil-pw-artifacts-'));
    runner = playwrightRunner({ executablePath: CHROMIUM, artifacts: directoryArtifacts(artifactsDir), workers: 2 });
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
});
