import type { Runner, RunJob, RunResult } from '../ports/runner.js';
import { runResult } from '../runner-kit/run-result.js';

export type FakeOutcome = Partial<RunResult> | ((job: RunJob) => Partial<RunResult> | Promise<Partial<RunResult>>);

/** A passing result; `fail()` and `degrade()` give the other two outcomes. */
export function passResult(overrides: Partial<RunResult> = {}): RunResult {
  return runResult({ responseTime: 42, phases: { total: 42 }, ...overrides });
}

export function failResult(message = 'Connection refused', overrides: Partial<RunResult> = {}): RunResult {
  return passResult({ hasFailures: true, errorMessage: message, failureKind: 'NETWORK_ERROR', ...overrides });
}

export function degradedResult(responseTime = 4_000, overrides: Partial<RunResult> = {}): RunResult {
  return passResult({ isDegraded: true, responseTime, phases: { total: responseTime }, ...overrides });
}

/**
 * A runner whose outcomes a test scripts. Each run takes the next queued outcome (the last one
 * repeats); every job it was given is kept in `jobs`.
 */
export class FakeRunner implements Runner {
  readonly jobs: RunJob[] = [];
  private outcomes: FakeOutcome[];

  constructor(
    readonly checkType: string = 'TCP',
    outcomes: FakeOutcome[] = [{}],
  ) {
    this.outcomes = [...outcomes];
  }

  /** Queues outcomes for the next runs. */
  willReturn(...outcomes: FakeOutcome[]): this {
    this.outcomes = outcomes;
    return this;
  }

  async run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
    this.jobs.push(job);
    if (signal.aborted) return failResult('Run aborted', { failureKind: 'TIMEOUT' });
    const next = this.outcomes.length > 1 ? this.outcomes.shift()! : this.outcomes[0] ?? {};
    const partial = typeof next === 'function' ? await next(job) : next;
    return passResult(partial);
  }
}
