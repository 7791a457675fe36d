import { runResult, scrubSecrets, type RunResult, type RefusedTarget } from '@vigil/core';
import type { ParsedReport, SuiteTest } from './report.js';
import type { SuiteProcessOutcome } from './suite-process.js';

export interface VerdictInput {
  outcome: SuiteProcessOutcome;
  report: ParsedReport | null;
  reportError: string | null;
  refused: RefusedTarget[];
  globalTimeoutMs: number;
  artifactErrors: string[];
  artifactsKept: boolean;
  secrets: readonly string[];
}

/** The most tests a result lists (the failing ones first to be kept); `details.testsOmitted` counts the rest. */
export const MAX_LISTED_TESTS = 500;

/** At most `MAX_LISTED_TESTS` of the tests, in their order: every failing one that fits, then the others. */
function listedTests(tests: SuiteTest[]): SuiteTest[] {
  if (tests.length <= MAX_LISTED_TESTS) return tests;
  const kept = new Set<SuiteTest>();
  for (const t of tests) if (kept.size < MAX_LISTED_TESTS && FAILING.has(t.status)) kept.add(t);
  for (const t of tests) if (kept.size < MAX_LISTED_TESTS) kept.add(t);
  return tests.filter((t) => kept.has(t));
}

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
/** Playwright's error when the suite reaches its globalTimeout. */
const GLOBAL_TIMEOUT = /Timed out waiting [\d.]+m?s for the (entire )?test (suite|run)/i;
const NO_TESTS = /No tests found/i;
const FAILING: ReadonlySet<SuiteTest['status']> = new Set(['failed', 'timedOut', 'interrupted']);

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** The last lines Playwright wrote that tell what went wrong (its output without the progress lines). */
function outputError(output: string, secrets: readonly string[]): string | null {
  const lines = scrubSecrets(output.replace(ANSI, ''), secrets).split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const at = lines.findIndex((l) => /Error/.test(l));
  const picked = (at >= 0 ? lines.slice(at) : lines.slice(-6)).slice(0, 8).join('\n').trim();
  return picked === '' ? null : picked.slice(0, 2_000);
}

/** A failing test as a person reads it: `file › describe › title: the first line of its error`. */
export function failingTestMessage(test: SuiteTest): string {
  const where = [test.file, ...test.suitePath, test.title].filter((part) => part !== '').join(' › ');
  const first = (test.error ?? (test.status === 'timedOut' ? 'The test ran past its timeout' : 'The test failed')).split('\n').find((l) => l.trim() !== '') ?? '';
  return `${where}: ${first.trim().replace(/^Error: /, '')}`;
}

/** The result of a suite's run: its tests, then whether (and why) the check failed. */
export function suiteVerdict(input: VerdictInput): RunResult {
  const { outcome, report } = input;
  const tests = report?.tests ?? [];
  const count = (...statuses: SuiteTest['status'][]) => tests.filter((t) => statuses.includes(t.status)).length;
  const stats = { passed: count('passed'), failed: count('failed', 'timedOut', 'interrupted'), flaky: count('flaky'), skipped: count('skipped') };
  const globalTimedOut = outcome.end === 'limit' || (report?.errors.some((e) => GLOBAL_TIMEOUT.test(e)) ?? false);
  const listed = listedTests(tests);
  const details: Record<string, unknown> = {
    tests: listed,
    ...(listed.length < tests.length ? { testsOmitted: tests.length - listed.length } : {}),
    stats,
    timedOut: globalTimedOut,
    projects: [...new Set(tests.map((t) => t.project))],
    artifactErrors: input.artifactErrors,
    artifactsKept: input.artifactsKept,
  };
  if (input.refused.length > 0) details.refusedTargets = input.refused;
  const responseTime = Math.max(0, report?.durationMs ?? outcome.durationMs);
  const base = { responseTime, phases: { total: responseTime }, details };
  const fail = (failureKind: 'ASSERTION' | 'TIMEOUT' | 'OTHER', errorMessage: string, errors = false) =>
    runResult({ ...base, hasFailures: !errors, hasErrors: errors, failureKind, errorMessage });

  if (input.refused.length > 0) {
    details.errorCode = 'ETARGETPOLICY';
    return fail('OTHER', input.refused[0]!.message);
  }
  if (outcome.end === 'aborted') return fail('TIMEOUT', 'The run was stopped before the suite ended; its processes were killed');
  if (globalTimedOut) return fail('TIMEOUT', `The suite ran past its globalTimeout of ${seconds(input.globalTimeoutMs)}`);
  const firstFailing = tests.find((t) => FAILING.has(t.status));
  if (firstFailing) return fail('ASSERTION', failingTestMessage(firstFailing));
  const suiteError = report?.errors[0] ?? null;
  if (!report && input.reportError) return fail('OTHER', input.reportError);
  if (tests.length === 0) {
    const said = suiteError ?? outputError(outcome.output, input.secrets);
    if (report && (suiteError === null || NO_TESTS.test(suiteError))) return fail('ASSERTION', 'No tests matched: the suite has no test that its projects, grep and grepInvert select');
    if (said) return fail('OTHER', said);
    return fail('OTHER', input.reportError ?? `Playwright ended (exit code ${outcome.exitCode}) without a report`, true);
  }
  if (suiteError) return fail('OTHER', suiteError);
  if (outcome.exitCode !== 0 && stats.passed + stats.flaky === 0 && stats.skipped === tests.length) {
    return fail('OTHER', outputError(outcome.output, input.secrets) ?? `Playwright ended with exit code ${outcome.exitCode}`);
  }
  return runResult({ ...base, isDegraded: stats.flaky > 0 });
}
