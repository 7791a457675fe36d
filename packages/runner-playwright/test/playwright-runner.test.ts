import { runnerSuite } from '@vigil/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directoryArtifacts, playwrightRunner, type PlaywrightRunner } from '../src/index.js';
import { CHROMIUM, HAS_CHROMIUM, playwrightJob, testsOf } from './support.js';

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
  let runner: PlaywrightRunner;
  beforeAll(() => {
    runner = playwrightRunner({ executablePath: CHROMIUM });
  });
  afterAll(() => runner.close());

  it('fails when no test matches', async () => {
    const result = await runner.run(playwrightJob(PASSING, { grep: 'no such test' }), signal());
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toMatch(/^No tests matched/);
    expect(testsOf(result.details)).toEqual([]);
    // A project the config does not have is Playwright's own error, naming the projects it has.
    const unknown = await runner.run(playwrightJob(PASSING, { projects: ['nope'] }), signal());
    expect(unknown).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(unknown.errorMessage).toMatch(/Project\(s\) "nope" not found/);
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

  it.each([
    ['playwright.config.cjs', "module.exports = { testDir: 'e2e', retries: 0 };\n"],
    ['playwright.config.js', "export default { testDir: './e2e' };\n"],
  ])('loads a suite config in %s (its testDir counts, files stay relative to the suite)', async (config, content) => {
    const result = await runner.run(playwrightJob({ [config]: content, 'e2e/home.spec.ts': PASSING['tests/home.spec.ts'], 'other/skipped.spec.ts': FAILING['tests/home.spec.ts'] }), signal());
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(testsOf(result.details).map((t) => [t.file, t.title, t.status])).toEqual([['e2e/home.spec.ts', 'home', 'passed']]);
  }, 30_000);

  it('says when no file is kept, and refuses a file past maxArtifactBytes', async () => {
    const failing = await runner.run(playwrightJob(FAILING), signal());
    expect(failing.details).toMatchObject({ artifactsKept: false, artifactErrors: [expect.stringMatching(/not kept: the runner has no artifact store/)] });
    expect(testsOf(failing.details)[0]!.artifacts).toEqual([]);
    const dir = mkdtempSync(join(tmpdir(), 'vigil-pw-small-'));
    const small = playwrightRunner({ executablePath: CHROMIUM, artifacts: directoryArtifacts(dir), maxArtifactBytes: 1_000 });
    try {
      const result = await small.run(playwrightJob(FAILING), signal());
      expect(result.details).toMatchObject({ artifactsKept: true });
      const errors = result.details!.artifactErrors as string[];
      expect(errors.some((e) => /screenshot\.png .* was not stored: it is past the limit/.test(e))).toBe(true);
      expect(testsOf(result.details)[0]!.artifacts).toEqual([]);
    } finally {
      await small.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
