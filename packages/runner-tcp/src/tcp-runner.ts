import { applyShouldFail, fillVariables, isDegradedRun, isOverMaxResponseTime, positiveOption, RegexSandbox, runChecked, RUNNERS, runResult, systemLookupAll, type AssertionOutcome, type LookupAllFunction, type PluginRegistry, type Runner, type RunJob, type RunResult, type TcpAssertion, type TcpCheck } from '@vigil/core';
import { evaluateAssertion } from './assertions.js';
import { exchange, systemLookup, type ExchangeOutcome, type ExchangeSettings, type LookupFunction } from './exchange.js';
import { Sweeper } from './sweeper.js';
import { validateTcpCheck } from './validate.js';

export const TCP_CHECK_TYPE = 'TCP' as const;

export interface TcpRunnerOptions {
  /** Bytes of response read at most; reading stops there and the run goes on with what it has. Default 64 KiB. */
  maxResponseBytes?: number;
  /**
   * Once the response has started, it is complete when no byte arrives for this long (for
   * servers that answer and keep the connection open). Default 200 ms. It is not counted in
   * the response time, which ends at the last byte.
   */
  responseQuietMs?: number;
  /** Longest a regex of an assertion may run on a response. Default 100 ms. */
  regexTimeoutMs?: number;
  /** Time limit of a run whose job carries none. Default 30 s. */
  defaultTimeoutMs?: number;
  /** Replaces `dns.lookup` (a host's own service discovery, say). */
  lookup?: LookupFunction;
}

export interface TcpRunner extends Runner {
  readonly checkType: typeof TCP_CHECK_TYPE;
  readonly options: Readonly<Required<Omit<TcpRunnerOptions, 'lookup'>>>;
}

const DEFAULTS = {
  maxResponseBytes: 64 * 1024,
  responseQuietMs: 200,
  regexTimeoutMs: 100,
  defaultTimeoutMs: 30_000,
};

/** How often time limits and quiet periods are looked at; they end up to this much late. */
const TICK_MS = 10;

/** Longest piece of the response kept in `details.response`. */
const RESPONSE_EXCERPT = 512;

/** Exchange failures that tell nothing about the target (see failures.ts). */
const NOT_THE_TARGET = new Set(['ETARGETPOLICY', 'EFAMILY']);

const positive = (name: string, value: number | undefined, fallback: number) => positiveOption('tcpRunner', name, value, fallback);
const emptyResult = (overrides: Partial<RunResult>) => runResult({ phases: { dns: 0, connection: 0, data: 0, total: 0 }, ...overrides });

/**
 * The response time's verdict on the final result, after shouldFail: a failing run is not also
 * degraded. The result is the run's own (made here or by applyShouldFail), so it is set in place.
 */
function judged(result: RunResult, check: TcpCheck): RunResult {
  result.isDegraded = isDegradedRun(result, check);
  return result;
}

/**
 * The assertions with `{{KEY}}` in their targets filled from the environment; the same array when
 * none has a placeholder, as most do not (a run then makes no copy).
 */
function filledAssertions(list: readonly TcpAssertion[], environment: Readonly<Record<string, string>>): readonly TcpAssertion[] {
  let filled: TcpAssertion[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const a = list[i]!;
    const target = a.target ?? '';
    const value = fillVariables(target, environment);
    if (value === target && filled === null) continue;
    filled ??= list.slice(0, i);
    filled.push(value === target ? a : { ...a, target: value });
  }
  return filled ?? list;
}

function readsData(assertions: readonly TcpAssertion[]): boolean {
  for (const a of assertions) if (a.source === 'RESPONSE_DATA') return true;
  return false;
}

const NO_ASSERTIONS: readonly TcpAssertion[] = [];

/** Runs TCP checks: connect, send the check's data, read the answer, assert on it. */
export function tcpRunner(options: TcpRunnerOptions = {}): TcpRunner {
  const settings = {
    maxResponseBytes: Math.floor(positive('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes)),
    responseQuietMs: positive('responseQuietMs', options.responseQuietMs, DEFAULTS.responseQuietMs),
    regexTimeoutMs: positive('regexTimeoutMs', options.regexTimeoutMs, DEFAULTS.regexTimeoutMs),
    defaultTimeoutMs: positive('defaultTimeoutMs', options.defaultTimeoutMs, DEFAULTS.defaultTimeoutMs),
  };
  // A host's own lookup answers one address; the policy then checks that one.
  const custom = options.lookup;
  const lookupAll: LookupAllFunction = custom ? async (hostname, family) => [await custom(hostname, family || 4)] : systemLookupAll;
  const exchangeSettings: ExchangeSettings = {
    maxBytes: settings.maxResponseBytes,
    quietMs: settings.responseQuietMs,
    lookup: options.lookup ?? systemLookup,
    lookupAll,
    sweeper: new Sweeper(TICK_MS),
  };
  let sandbox: RegexSandbox | null = null;
  const regex = () => (sandbox ??= new RegexSandbox(settings.regexTimeoutMs));

  function runCheck(job: RunJob, check: TcpCheck, signal: AbortSignal): Promise<RunResult> {
    const env = job.environment ?? {};
    const request = check.request;
    const data = request.data ? fillVariables(request.data, env) : null;
    const assertions = filledAssertions(request.assertions ?? NO_ASSERTIONS, env);
    const maxMs = check.maxResponseTime ?? null;
    const runLimit = job.timeoutMs > 0 ? job.timeoutMs : settings.defaultTimeoutMs;
    // Past maxResponseTime the run fails whatever comes later, so there is no point waiting longer.
    const cutAtMax = maxMs !== null && maxMs > 0 && maxMs < runLimit;

    // The exchange's promise resolves with the run's result, judged as soon as the exchange ends.
    return exchange({
      hostname: fillVariables(request.hostname, env),
      port: request.port,
      family: request.ipFamily === 'IPv6' ? 6 : 4,
      data,
      readResponse: data !== null || readsData(assertions),
      limitMs: cutAtMax ? maxMs : runLimit,
      limitIsMaxResponseTime: cutAtMax,
      policy: job.targetPolicy ?? null,
    }, exchangeSettings, signal, (outcome) => judge(outcome, check, assertions, cutAtMax, signal));
  }

  /** The run's result from the exchange's outcome: its failure, or what its assertions make of the response. */
  function judge(outcome: ExchangeOutcome, check: TcpCheck, assertions: readonly TcpAssertion[], cutAtMax: boolean, signal: AbortSignal): RunResult {
    const maxMs = check.maxResponseTime ?? null;
    const phases = outcome.phases;
    const responseTime = phases.total;
    const responseData = outcome.bytesReceived > 0 ? outcome.response.toString('utf8') : '';
    const details = describeExchange(outcome, check.request.ipFamily, responseData);
    const failure = outcome.failure;

    if (failure) {
      const overMax = (cutAtMax && failure.timedOut) || isOverMaxResponseTime(responseTime, maxMs);
      const result = emptyResult({
        hasFailures: true,
        overMaxResponseTime: overMax,
        responseTime,
        phases,
        errorMessage: failure.message,
        failureKind: failure.kind,
        details,
      });
      // A refused target was never tried, and a check whose address contradicts its ipFamily is
      // wrong itself: neither says the target is down, so shouldFail does not make them pass.
      return NOT_THE_TARGET.has(failure.code) ? result : judged(applyShouldFail(result, check.shouldFail, signal), check);
    }

    const subject = { responseData, responseTime };
    const outcomes: AssertionOutcome[] = new Array(assertions.length);
    let problems: string[] | null = null;
    for (let i = 0; i < assertions.length; i++) {
      const evaluated = evaluateAssertion(assertions[i]!, subject, regex);
      outcomes[i] = evaluated.outcome;
      if (evaluated.failure) (problems ??= []).push(evaluated.failure);
    }
    const assertionFailed = problems !== null;
    const overMax = isOverMaxResponseTime(responseTime, maxMs);
    if (overMax) (problems ??= []).push(`The response took ${responseTime} ms, over the check's maxResponseTime of ${maxMs} ms`);
    return judged(applyShouldFail({
      hasFailures: problems !== null,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: overMax,
      responseTime,
      phases,
      errorMessage: problems !== null ? problems.join('; ') : null,
      failureKind: assertionFailed ? 'ASSERTION' : overMax ? 'TIMEOUT' : null,
      assertions: outcomes,
      details,
    }, check.shouldFail, signal), check);
  }

  const runner: TcpRunner = {
    checkType: TCP_CHECK_TYPE,
    options: settings,
    validate: validateTcpCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('TCP runner', TCP_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
    },
  };
  return runner;
}

function describeExchange(outcome: ExchangeOutcome, ipFamily: string, responseData: string): Record<string, unknown> {
  const details: Record<string, unknown> = {
    ipFamily,
    remoteAddress: outcome.address,
    bytesSent: outcome.bytesSent,
    bytesReceived: outcome.bytesReceived,
    responseEnded: outcome.ended,
    firstByte: outcome.firstByte,
  };
  if (responseData !== '') details.response = responseData.slice(0, RESPONSE_EXCERPT);
  if (outcome.failure) details.errorCode = outcome.failure.code;
  return details;
}

/** Creates a TCP runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerTcpRunner(container: PluginRegistry, options: TcpRunnerOptions = {}): TcpRunner {
  const runner = tcpRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
