import type { PwtMetadata } from '../model/error-group.js';

/** A Playwright suite's test that failed in a run, as its test-session error group records it. */
export interface FailedSuiteTest {
  /** What the test's failure said, prefixed by where it is: `tests/cart.spec.ts › Cart › adds: Expected 2, received 1`. */
  error: string;
  pwtMetadata: PwtMetadata;
}

const text = (x: unknown): string | null => (typeof x === 'string' ? x : null);
// A test the suite's globalTimeout stopped (`interrupted`) did not pass either.
const FAILED = new Set(['failed', 'timedOut', 'interrupted']);

/**
 * The failed tests (failed, timed out, or interrupted by the suite's time limit) of a PLAYWRIGHT run's `details.tests` (each `{ title, file, suitePath, project,
 * status, error }`), read defensively: the details are what a runner wrote. Tests that passed,
 * were skipped or were flaky (passed on a retry) are not failures.
 */
export function failedSuiteTests(details: unknown): FailedSuiteTest[] {
  const tests = (details as { tests?: unknown } | null)?.tests;
  if (!Array.isArray(tests)) return [];
  const out: FailedSuiteTest[] = [];
  for (const raw of tests) {
    const t = (raw ?? {}) as Record<string, unknown>;
    if (!FAILED.has(String(t.status))) continue;
    const title = text(t.title) ?? '(untitled test)';
    const file = text(t.file) ?? '';
    const suitePath = Array.isArray(t.suitePath) ? t.suitePath.filter((s): s is string => typeof s === 'string') : [];
    const where = [file, ...suitePath, title].filter((s) => s !== '').join(' › ');
    const error = text(t.error) ?? (t.status === 'timedOut' ? 'the test timed out' : t.status === 'interrupted' ? 'the suite\'s time ran out during the test' : 'the test failed');
    out.push({ error: `${where}: ${error}`, pwtMetadata: { projectName: text(t.project) ?? '', testFile: file, testTitle: title, suitePath } });
  }
  return out;
}
