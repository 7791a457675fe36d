import { describe, expect, it } from 'vitest';
import { errorText, parseReport } from '../src/report.js';

/** A report of one file with one test of these results, as Playwright's JSON reporter writes it. */
const reportOf = (status: string, results: { status: string; error?: { message: string } }[], expectedStatus = 'passed') =>
  JSON.stringify({
    config: { rootDir: '/suite' },
    suites: [{ title: 'a.spec.ts', file: 'a.spec.ts', specs: [{ title: 'x', file: 'a.spec.ts', tests: [{ projectName: '', status, expectedStatus, results }] }] }],
    errors: [],
    stats: { duration: 10 },
  });

describe('parseReport', () => {
  it('reports a test the global timeout stopped as interrupted, not skipped (Playwright calls it skipped)', () => {
    const statusOf = (...args: Parameters<typeof reportOf>) => parseReport(reportOf(...args), '/suite').tests.map((t) => t.status);
    // Playwright 1.65 writes a test it stopped at the global timeout as a `skipped` result of a test expected to pass.
    expect(statusOf('skipped', [{ status: 'skipped' }])).toEqual(['interrupted']);
    expect(statusOf('skipped', [{ status: 'interrupted' }])).toEqual(['interrupted']);
    // test.skip(): expected to be skipped. Not started before the global timeout: no result.
    expect(statusOf('skipped', [{ status: 'skipped' }], 'skipped')).toEqual(['skipped']);
    expect(statusOf('skipped', [])).toEqual(['skipped']);
  });
});

describe('errorText', () => {
  it('scrubs a secret holding " and \\ from an error, as Playwright prints it quoted and escaped', () => {
    const secret = 'pa"ss\\word-42';
    const message = `Error: expect(received).toBe(expected)\n\nExpected: "expected"\nReceived: ${JSON.stringify(secret)}\nand raw ${secret}`;
    const text = errorText({ message }, [secret])!;
    expect(text).not.toContain('ss\\\\word');
    expect(text).not.toContain('pa\\"ss');
    expect(text).not.toContain(secret);
    expect(text).toContain('Received: "********"');
  });
});

describe('the time limit of one suite', () => {
  it('is the suite\'s own globalTimeout and a minute for starting and storing, never past the longest suite\'s', async () => {
    const { playwrightRunner } = await import('../src/index.js');
    const runner = playwrightRunner();
    expect(runner.timeoutMs).toBe(660_000);
    expect(runner.timeoutFor!({ globalTimeout: 30_000 })).toBe(90_000);
    expect(runner.timeoutFor!({ globalTimeout: 900_000 })).toBe(660_000);
    expect(runner.timeoutFor!({})).toBe(660_000);
    await runner.close!();
  });
});
