import type http from 'node:http';
import { targetPolicy } from '@vigil/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserRunner, type BrowserRunner } from '../src/index.js';
import { browserJob, CHROMIUM_BUILDS, serveSite, type BrowserJobOptions, type Site } from './support.js';

const signal = () => new AbortController().signal;
const shouldFail = { shouldFail: true };

describe.each(CHROMIUM_BUILDS)('a browser check with shouldFail on %s', (executablePath) => {
  let site: Site;
  let runner: BrowserRunner;
  let hanging: Promise<void>;
  let held: http.ServerResponse[] = [];
  beforeAll(async () => {
    let arrived!: () => void;
    hanging = new Promise<void>((resolve) => (arrived = resolve));
    site = await serveSite({
      '/': '<!doctype html><title>Shop</title><h1>Welcome</h1>',
      '/never': (_req, res) => {
        held.push(res);
        arrived();
      },
    });
    runner = browserRunner({ executablePath, poolSize: 1 });
  });
  afterAll(async () => {
    await runner.close();
    for (const res of held) res.destroy();
    held = [];
    await site.close();
  });
  const run = (options: BrowserJobOptions, s = signal()) => runner.run(browserJob({ ...options, check: { ...shouldFail, ...options.check } }), s);

  it('fails a script that passes, saying the check expected the run to fail', async () => {
    const result = await run({ script: `await page.goto('${site.url}/');\nexpect(await page.title()).toBe('Shop');` });
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' });
    expect(result.errorMessage).toBe('The run passed, but the check has shouldFail set: it was expected to fail');
  });

  it('passes a script that throws, its error kept in details.expectedFailure', async () => {
    const result = await run({ script: `await page.goto('${site.url}/');\nexpect(await page.title()).toBe('Sold out');` });
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null });
    const expected = result.details?.expectedFailure as { errorMessage: string; failureKind: string };
    expect(expected.failureKind).toBe('ASSERTION');
    expect(expected.errorMessage).toContain('Sold out');
    expect(expected.errorMessage).toMatch(/\(at script\.js:2:\d+\)$/);
  });

  it('passes a script that runs out of time', async () => {
    const result = await run({ script: 'await new Promise(() => {});', job: { timeoutMs: 3_000 } });
    expect(result).toMatchObject({ hasFailures: false, errorMessage: null });
    expect(result.details?.expectedFailure).toMatchObject({ failureKind: 'TIMEOUT', errorMessage: expect.stringContaining('did not finish within') });
  });

  it('still fails a connection the target policy refused', async () => {
    const result = await run({ script: `await page.goto('${site.url}/');`, job: { targetPolicy: targetPolicy({ refuseInternalAddresses: true }) } });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER', details: { errorCode: 'ETARGETPOLICY' } });
    expect(result.errorMessage).toMatch(/^The target policy refused 127\.0\.0\.1/);
  });

  it('still fails a cancelled run, and a script whose process died', async () => {
    const controller = new AbortController();
    const pending = run({ script: `await page.goto('${site.url}/never');` }, controller.signal);
    await hanging;
    controller.abort();
    expect(await pending).toMatchObject({ hasFailures: true, errorMessage: 'The run was cancelled', failureKind: 'TIMEOUT' });

    const exited = await run({ script: 'process.reallyExit(3);' });
    expect(exited).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(exited.errorMessage).toBe('The script\'s process ended before the script finished (exit code 3)');
  });
});

describe('a browser check with shouldFail whose browser cannot start', () => {
  it('fails with the runner\'s error', async () => {
    const runner = browserRunner({ executablePath: '/nonexistent/chromium' });
    try {
      const result = await runner.run(browserJob({ script: 'await page.goto("about:blank");', check: shouldFail }), signal());
      expect(result).toMatchObject({ hasErrors: true, hasFailures: false });
      expect(result.errorMessage).toMatch(/^The browser could not be started/);
    } finally {
      await runner.close();
    }
  });
});
