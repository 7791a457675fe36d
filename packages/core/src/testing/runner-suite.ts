import * as v from 'valibot';
import { hasCode } from '../errors.js';
import type { Runner, RunJob, RunResult } from '../ports/runner.js';
import { check, type TestFn } from './suite-types.js';

export interface RunnerFixture {
  runner: Runner;
  /** A job against a target that answers as the check expects. */
  passing: RunJob;
  /** A job against a target that fails (refused, wrong answer, thrown error). */
  failing: RunJob;
  /** A job whose target never answers; the suite aborts it. */
  hanging?: RunJob;
  /** A failing job whose error would carry one of `job.secrets` unless the runner scrubs it. */
  leakingSecret?: RunJob;
  /** A check body the runner's `validate` must reject. */
  invalidCheck?: unknown;
  cleanup?: () => Promise<void>;
}

const RunResultShape = v.object({
  hasFailures: v.boolean(),
  hasErrors: v.boolean(),
  isDegraded: v.boolean(),
  overMaxResponseTime: v.boolean(),
  responseTime: v.pipe(v.number(), v.finite(), v.minValue(0)),
  phases: v.record(v.string(), v.pipe(v.number(), v.finite(), v.minValue(0))),
  errorMessage: v.nullable(v.string()),
  failureKind: v.nullable(v.picklist(['NETWORK_ERROR', 'TIMEOUT', 'ASSERTION', 'OTHER'])),
});

function assertShape(result: RunResult, label: string) {
  const parsed = v.safeParse(RunResultShape, result);
  check(parsed.success, `${label}: result has the wrong shape: ${parsed.issues?.map((i) => `${v.getDotPath(i)} ${i.message}`).join('; ')}`);
}

/**
 * The contract every Runner keeps. A runner package calls it first in its tests:
 * `runnerSuite(it, async () => ({ runner, passing, failing, ... }))`.
 */
export function runnerSuite(test: TestFn, factory: () => Promise<RunnerFixture>, options: { prefix?: string } = {}) {
  const name = (n: string) => `${options.prefix ?? 'runnerSuite'}: ${n}`;
  const withFixture = (fn: (f: RunnerFixture) => Promise<void>) => async () => {
    const f = await factory();
    try {
      await fn(f);
    } finally {
      await f.cleanup?.();
    }
  };

  test(name('declares the check type it runs'), withFixture(async ({ runner, passing }) => {
    check(typeof runner.checkType === 'string' && runner.checkType.length > 0, 'checkType is a non-empty string');
    check(passing.check.checkType === runner.checkType, 'the fixture job is of the runner\'s check type');
  }));

  test(name('a passing target gives a passing result with timings'), withFixture(async ({ runner, passing }) => {
    const result = await runner.run(passing, new AbortController().signal);
    assertShape(result, 'passing');
    check(!result.hasFailures && !result.hasErrors, `passing job failed: ${result.errorMessage}`);
    check(result.errorMessage === null && result.failureKind === null, 'a pass carries no error');
  }));

  test(name('a failing target resolves (never rejects) with a failure a person can read'), withFixture(async ({ runner, failing }) => {
    const result = await runner.run(failing, new AbortController().signal);
    assertShape(result, 'failing');
    check(result.hasFailures || result.hasErrors, 'failing job passed');
    check(typeof result.errorMessage === 'string' && result.errorMessage.trim().length > 0, 'a failure has a message');
    check(result.failureKind !== null, 'a failure is classified (failureKind)');
  }));

  test(name('an aborted run ends promptly as a failure'), withFixture(async ({ runner, hanging, passing }) => {
    const job = hanging ?? passing;
    const controller = new AbortController();
    const started = Date.now();
    const pending = runner.run(job, controller.signal);
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    assertShape(result, 'aborted');
    if (hanging) {
      check(result.hasFailures || result.hasErrors, 'an aborted hanging run is not a pass');
      check(Date.now() - started < Math.max(5_000, job.timeoutMs), 'the run ended soon after the abort');
    }
  }), 30_000);

  test(name('secret values never appear in what a run records'), withFixture(async ({ runner, leakingSecret }) => {
    if (!leakingSecret) return;
    check(leakingSecret.secrets.length > 0, 'the leakingSecret fixture names its secrets');
    const result = await runner.run(leakingSecret, new AbortController().signal);
    const recorded = JSON.stringify(result);
    for (const secret of leakingSecret.secrets) {
      check(!recorded.includes(secret), 'a secret value appears in the run result');
    }
  }));

  test(name('validate rejects a check it cannot run'), withFixture(async ({ runner, invalidCheck }) => {
    if (invalidCheck === undefined || !runner.validate) return;
    let threw: unknown = null;
    try {
      runner.validate(invalidCheck);
    } catch (err) {
      threw = err;
    }
    check(threw !== null, 'validate accepted an invalid check');
    check(hasCode(threw, 'VALIDATION'), 'validate throws a ValidationError');
  }));
}
