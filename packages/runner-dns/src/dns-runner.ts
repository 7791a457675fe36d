import { getServers } from 'node:dns';
import { isIP } from 'node:net';
import {
  applyShouldFail, isDegradedRun, isOverMaxResponseTime, positiveOption, RegexSandbox, runChecked, RUNNERS, runResult,
  targetRefusalMessage,
  type AssertionOutcome, type DnsCheck, type PluginRegistry, type Runner, type RunJob, type RunResult,
} from '@vigil/core';
import { answerLines, evaluateAssertion, implicitProblems } from './assertions.js';
import { DnsQueryError, queryDns, type DnsResponse } from './query.js';

export const DNS_CHECK_TYPE = 'DNS' as const;

export interface DnsRunnerOptions {
  /**
   * The name server of checks that name none, as `node:dns` lists them (`'10.0.0.53'`,
   * `'10.0.0.53:5353'`, `'[2001:db8::53]:53'`). Default: this host's first system name server.
   */
  defaultNameServer?: string;
  /** Longest a regex of an assertion may run on the answers. Default 100 ms. */
  regexTimeoutMs?: number;
  /** Time limit of a run whose job carries none. Default 10 s. */
  defaultTimeoutMs?: number;
}

export interface DnsRunner extends Runner {
  readonly checkType: typeof DNS_CHECK_TYPE;
}

function portOf(digits: string, text: string): number {
  const port = Number(digits);
  if (port < 1 || port > 65535) throw new TypeError(`dnsRunner: the port of ${JSON.stringify(text)} must be 1..65535`);
  return port;
}

/** `'10.0.0.53'`, `'10.0.0.53:5353'`, `'[::1]:53'` or `'::1'` as an address and a port (null: the check's). */
export function parseServer(text: string): { address: string; port: number | null } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed && isIP(bracketed[1]!) === 6) return { address: bracketed[1]!, port: bracketed[2] ? portOf(bracketed[2], text) : null };
  if (isIP(text) !== 0) return { address: text, port: null };
  const withPort = /^([^:]+):(\d+)$/.exec(text);
  if (withPort && isIP(withPort[1]!) === 4) return { address: withPort[1]!, port: portOf(withPort[2]!, text) };
  throw new TypeError(`dnsRunner: ${JSON.stringify(text)} is not a name server address`);
}

function systemServer(): { address: string; port: number | null } | null {
  const [first] = getServers();
  return first ? parseServer(first) : null;
}

/** Runs DNS checks: one query to the check's name server (or the host's), its answer held to the check's assertions. */
export function dnsRunner(options: DnsRunnerOptions = {}): DnsRunner {
  const regexTimeoutMs = positiveOption('dnsRunner', 'regexTimeoutMs', options.regexTimeoutMs, 100);
  const defaultTimeoutMs = positiveOption('dnsRunner', 'defaultTimeoutMs', options.defaultTimeoutMs, 10_000);
  const fallback = options.defaultNameServer === undefined ? null : parseServer(options.defaultNameServer);
  let sandbox: RegexSandbox | null = null;
  const regex = () => (sandbox ??= new RegexSandbox(regexTimeoutMs));

  async function runCheck(job: RunJob, check: DnsCheck, signal: AbortSignal): Promise<RunResult> {
    const { request } = check;
    const system = request.nameServer ? null : fallback ?? systemServer();
    const address = request.nameServer ?? system?.address ?? null;
    const port = request.nameServer ? request.port : system?.port ?? request.port;
    const details: Record<string, unknown> = { recordType: request.recordType, query: request.query, nameServer: address, port, protocol: request.protocol };
    const failed = (message: string, kind: RunResult['failureKind'], extra: Partial<RunResult> = {}) =>
      runResult({ hasFailures: true, errorMessage: message, failureKind: kind, phases: { dns: 0, total: 0 }, details, ...extra });

    if (address === null) return failed('This host has no system name server; give the check a nameServer', 'NETWORK_ERROR');
    // The policy holds for a name server the check names; the host's own resolver (the runner's
    // default or the system's) is the operator's choice, often a loopback or private address.
    const refusal = request.nameServer && job.targetPolicy?.refuseInternalAddresses ? job.targetPolicy.checkAddress(address) : null;
    // A refused name server was never asked: that says nothing about it, so shouldFail does not apply.
    if (refusal) return failed(targetRefusalMessage(refusal), 'NETWORK_ERROR');

    const maxMs = check.maxResponseTime ?? null;
    const runLimit = job.timeoutMs > 0 ? job.timeoutMs : defaultTimeoutMs;
    const cutAtMax = maxMs !== null && maxMs > 0 && maxMs < runLimit;
    const judged = (result: RunResult): RunResult => {
      const degraded = isDegradedRun(result, check);
      return degraded === result.isDegraded ? result : { ...result, isDegraded: degraded };
    };

    let response: DnsResponse;
    try {
      response = await queryDns({ name: request.query, type: request.recordType, server: address, port, protocol: request.protocol, timeoutMs: cutAtMax ? maxMs : runLimit, signal });
    } catch (err) {
      const error = err instanceof DnsQueryError ? err : new DnsQueryError('NETWORK', err instanceof Error ? err.message : String(err));
      const timedOut = error.reason === 'TIMEOUT' || error.reason === 'ABORTED';
      const elapsed = timedOut ? (cutAtMax ? maxMs : runLimit) : 0;
      const result = failed(error.message, timedOut ? 'TIMEOUT' : 'NETWORK_ERROR', {
        responseTime: elapsed, phases: { dns: elapsed, total: elapsed }, overMaxResponseTime: cutAtMax && error.reason === 'TIMEOUT',
        details: { ...details, errorCode: error.code ?? error.reason },
      });
      return judged(applyShouldFail(result, check.shouldFail, signal));
    }

    const subject = { response, recordType: request.recordType };
    const server = `${address}:${port}`;
    const outcomes: AssertionOutcome[] = [];
    const problems = implicitProblems(request.assertions, subject, request.query, server);
    for (const a of request.assertions) {
      const evaluated = evaluateAssertion(a, subject, regex);
      outcomes.push(evaluated.outcome);
      if (evaluated.failure) problems.push(evaluated.failure);
    }
    const assertionFailed = problems.length > 0;
    const responseTime = response.responseTime;
    const overMax = isOverMaxResponseTime(responseTime, maxMs);
    if (overMax) problems.push(`The answer took ${responseTime} ms, over the check's maxResponseTime of ${maxMs} ms`);
    return judged(applyShouldFail({
      hasFailures: problems.length > 0,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: overMax,
      responseTime,
      phases: { dns: responseTime, total: responseTime },
      errorMessage: problems.length > 0 ? problems.join('; ') : null,
      failureKind: assertionFailed ? 'ASSERTION' : overMax ? 'TIMEOUT' : null,
      assertions: outcomes,
      details: {
        ...details, protocol: response.protocol, rcode: response.rcode, authoritative: response.authoritative, truncated: response.truncated,
        answers: response.answers.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`), matched: answerLines(subject).length,
      },
    }, check.shouldFail, signal));
  }

  return {
    checkType: DNS_CHECK_TYPE,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('DNS runner', DNS_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
    },
  };
}

/** Creates a DNS runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerDnsRunner(container: PluginRegistry, options: DnsRunnerOptions = {}): DnsRunner {
  const runner = dnsRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
