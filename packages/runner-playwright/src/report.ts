import { isAbsolute, relative, resolve } from 'node:path';
import { scrubSecrets } from '@vigil/core';

/** One test of a run, as its result records it. */
export interface SuiteTest {
  title: string;
  /** The test file, relative to the suite. */
  file: string;
  /** The titles of the `describe` blocks around it, outermost first. */
  suitePath: string[];
  project: string;
  /** `flaky`: failed, then passed on a retry. */
  status: 'passed' | 'failed' | 'timedOut' | 'skipped' | 'flaky' | 'interrupted';
  durationMs: number;
  /** The first lines of the error of its last failed attempt (scrubbed of the job's secrets). */
  error: string | null;
  artifacts: { name: string; contentType: string; bytes: number; ref: string }[];
}

/** An attachment of a test's last attempt that the run stores (the screenshot on failure, the trace). */
export interface ReportAttachment {
  test: SuiteTest;
  name: string;
  contentType: string;
  path: string;
}

export interface ParsedReport {
  tests: SuiteTest[];
  attachments: ReportAttachment[];
  /** Errors outside any test: a file that does not load, the global timeout. */
  errors: string[];
  durationMs: number | null;
}

interface JsonError { message?: string; stack?: string; value?: string }
interface JsonResult { status?: string; duration?: number; error?: JsonError; errors?: JsonError[]; attachments?: { name?: string; contentType?: string; path?: string }[] }
interface JsonTest { projectName?: string; status?: string; expectedStatus?: string; results?: JsonResult[] }
interface JsonSpec { title?: string; file?: string; tests?: JsonTest[] }
interface JsonSuite { title?: string; file?: string; specs?: JsonSpec[]; suites?: JsonSuite[] }
interface JsonReport { config?: { rootDir?: string }; suites?: JsonSuite[]; errors?: JsonError[]; stats?: { duration?: number } }

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
const ERROR_LINES = 8;
const ERROR_CHARACTERS = 2_000;

/** The first lines of an error, without terminal colours, scrubbed of `secrets` before it is cut (no piece of one survives at the cut). */
export function errorText(error: JsonError | undefined, secrets: readonly string[] = []): string | null {
  // JSON-escaped forms too: Playwright prints a received string quoted, its `"` and `\` escaped.
  const text = scrubSecrets((error?.message ?? error?.value ?? error?.stack ?? '').replace(ANSI, ''), secrets, true).trim();
  if (text === '') return null;
  return text.split('\n').slice(0, ERROR_LINES).join('\n').trimEnd().slice(0, ERROR_CHARACTERS);
}

function statusOf(test: JsonTest, last: JsonResult | undefined): SuiteTest['status'] {
  if (test.status === 'flaky') return 'flaky';
  // Playwright calls a test the global timeout stopped `skipped`: it started (it has a result), it
  // was not to be skipped (no test.skip(), expectedStatus is not `skipped`), yet its result is
  // `skipped`, or `interrupted`.
  const results = test.results ?? [];
  if (results.some((r) => r.status === 'interrupted')) return 'interrupted';
  if (test.expectedStatus !== 'skipped' && last?.status === 'skipped') return 'interrupted';
  if (test.status === 'skipped' || last?.status === 'skipped') return 'skipped';
  if (test.status === 'expected') return 'passed';
  switch (last?.status) {
    case 'timedOut':
      return 'timedOut';
    case 'interrupted':
      return 'interrupted';
    case 'passed':
      // Passed where it was expected to fail (`test.fail()`).
      return 'failed';
    default:
      return 'failed';
  }
}

/** The tests of Playwright's JSON report, with their files relative to the suite's folder `dir`. */
export function parseReport(json: string, dir: string, secrets: readonly string[] = []): ParsedReport {
  const report = JSON.parse(json) as JsonReport;
  const rootDir = report.config?.rootDir ?? dir;
  const fileOf = (file: string | undefined) => {
    if (!file) return '';
    const full = isAbsolute(file) ? file : resolve(rootDir, file);
    return relative(dir, full).split('\\').join('/');
  };
  const tests: SuiteTest[] = [];
  const attachments: ReportAttachment[] = [];
  const walk = (suite: JsonSuite, path: string[], file: string | undefined) => {
    const here = suite.file ?? file;
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        const results = test.results ?? [];
        const last = results[results.length - 1];
        const failed = [...results].reverse().find((r) => r.status !== 'passed' && r.status !== 'skipped');
        const status = statusOf(test, last);
        const entry: SuiteTest = {
          title: spec.title ?? '',
          file: fileOf(spec.file ?? here),
          suitePath: path,
          project: test.projectName ?? '',
          status,
          durationMs: Math.round(results.reduce((sum, r) => sum + (r.duration ?? 0), 0)),
          error: status === 'passed' || status === 'skipped' ? null : errorText(failed?.error ?? failed?.errors?.[0], secrets),
          artifacts: [],
        };
        if (status === 'failed' && entry.error === null) {
          entry.error = last?.status === 'passed' ? 'The test passed, but it is marked to fail (test.fail())' : 'The test failed';
        }
        tests.push(entry);
        // The files of the attempt that failed last (a flaky test's failed try), else of the last one.
        for (const a of (failed ?? last)?.attachments ?? []) {
          if (a.path && (a.name === 'screenshot' || a.name === 'trace')) {
            attachments.push({ test: entry, name: a.name, contentType: a.contentType ?? 'application/octet-stream', path: a.path });
          }
        }
      }
    }
    for (const inner of suite.suites ?? []) walk(inner, [...path, inner.title ?? ''], here);
  };
  // The top level of the report is one suite per file; its title is the file's path, not a describe.
  for (const top of report.suites ?? []) walk(top, [], top.file);
  const errors = (report.errors ?? []).map((e) => errorText(e, secrets)).filter((e): e is string => e !== null);
  return { tests, attachments, errors, durationMs: typeof report.stats?.duration === 'number' ? Math.round(report.stats.duration) : null };
}
