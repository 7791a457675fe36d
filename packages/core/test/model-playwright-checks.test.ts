import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlaywrightCheck, suiteFiles } from '../src/constructs/index.js';
import { createVigil } from '../src/container.js';
import { MAX_SUITE_CHARACTERS, PlaywrightCheckCreateSchema } from '../src/model/check-playwright.js';
import { parse } from '../src/model/parse.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { issuesOf } from './assertions.js';
import { ACCOUNT_A } from './helpers.js';

const SPEC = "import { test } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('https://example.com/'); });\n";
const issue = (input: unknown) => issuesOf(PlaywrightCheckCreateSchema, input).map((i) => `${i.path}: ${i.message}`);
const suite = (files: Record<string, string>, more: object = {}) => ({ name: 'shop suite', files, ...more });

describe('Playwright check suite', () => {
  it('fills its defaults: every project and test, a two-minute global timeout', () => {
    expect(parse(PlaywrightCheckCreateSchema, suite({ 'tests/home.spec.ts': SPEC }))).toMatchObject({
      files: { 'tests/home.spec.ts': SPEC }, projects: [], grep: null, grepInvert: null, globalTimeout: 120_000, environmentVariables: [], frequency: 10,
    });
  });

  it.each([
    [suite({ 'README.md': 'no tests' }), 'files: must hold at least one test file (*.spec.ts, *.test.js, ...)'],
    [suite({ '../escape.spec.ts': SPEC }), 'files.../escape.spec.ts: must be a relative path of letters, digits, ., _, - and / (no .. or hidden segment, at most 255 characters)'],
    [suite({ '/abs.spec.ts': SPEC }), 'files./abs.spec.ts: must be a relative path of letters, digits, ., _, - and / (no .. or hidden segment, at most 255 characters)'],
    [suite({ '.env': 'A=1', 'a.spec.ts': SPEC }), 'files..env: must be a relative path of letters, digits, ., _, - and / (no .. or hidden segment, at most 255 characters)'],
    [suite({ 'a.spec.ts': SPEC, 'sub/playwright.config.ts': 'export default {}' }), "files.sub/playwright.config.ts: a Playwright config must be at the suite's root"],
    [suite(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}.spec.ts`, SPEC]))), 'files: must hold at most 50 files'],
    [suite(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}.spec.ts`, 'x'.repeat(99_000)]))), 'files: must hold at most 1,000,000 characters in all (it holds 1,089,000)'],
    [suite({ 'a.spec.ts': 'x'.repeat(100_001) }), 'files.a.spec.ts: must be at most 100000 characters'],
    [suite({ 'a.spec.ts': SPEC }, { globalTimeout: 9_999 }), 'globalTimeout: must be between 10000 and 600000'],
    [suite({ tests: 'x', 'tests/a.spec.ts': SPEC }), 'files.tests: is a file and also a folder of other files'],
    [suite({ 'a.spec.ts': SPEC }, { grep: '(' }), 'grep: must be a valid regular expression'],
    [suite({ 'a.spec.ts': SPEC }, { projects: [''] }), 'projects.0: must not be empty'],
  ])('refuses a suite over its limits naming the field (%#)', (input, expected) => {
    expect(issue(input)).toEqual([expected]);
  });

  it('takes a suite at its limits', () => {
    const files = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`tests/t${i}.spec.ts`, 'x'.repeat(MAX_SUITE_CHARACTERS / 10)]));
    expect(Object.keys(parse(PlaywrightCheckCreateSchema, suite(files)).files)).toHaveLength(10);
  });

  it('suiteFiles reads a folder for checks as code, leaving out hidden files, node_modules and Playwright\'s output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-suite-'));
    try {
      mkdirSync(join(dir, 'tests', 'fixtures'), { recursive: true });
      mkdirSync(join(dir, 'node_modules', 'x'), { recursive: true });
      mkdirSync(join(dir, 'test-results'));
      writeFileSync(join(dir, 'playwright.config.ts'), 'export default {};\n');
      writeFileSync(join(dir, 'tests', 'home.spec.ts'), SPEC);
      writeFileSync(join(dir, 'tests', 'fixtures', 'user.json'), '{"name":"ops"}');
      writeFileSync(join(dir, '.env'), 'SECRET=1');
      writeFileSync(join(dir, 'node_modules', 'x', 'index.js'), '');
      writeFileSync(join(dir, 'test-results', 'trace.zip'), '');
      const files = suiteFiles(dir);
      expect(Object.keys(files)).toEqual(['playwright.config.ts', 'tests/fixtures/user.json', 'tests/home.spec.ts']);

      const vigil = createVigil({ storage: memoryStorage(), secretKey: '5e'.repeat(32) });
      try {
        await vigil.accounts.ensure(ACCOUNT_A);
        await vigil.apply(ACCOUNT_A, [new PlaywrightCheck('shop', { name: 'Shop suite', files, projects: ['chromium'] })]);
        const [made] = (await vigil.checks.list(ACCOUNT_A, {})).items;
        expect(made).toMatchObject({ checkType: 'PLAYWRIGHT', files, projects: ['chromium'], globalTimeout: 120_000 });
        const wrong = await vigil.apply(ACCOUNT_A, [new PlaywrightCheck('bad', { name: 'Bad', files: { 'README.md': '' } })]).catch((e: unknown) => e);
        expect((wrong as ConstructValidationError).constructIssues.map((i) => `${i.construct} ${i.path}`)).toEqual(['PlaywrightCheck "bad" files']);
      } finally {
        await vigil.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
