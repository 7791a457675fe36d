import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  applyShouldFail, IcmpRequestSchema, lookupChecked, parse, positiveOption, RUNNERS, runChecked, runResult, systemLookupAll,
  targetRefusalMessage, ValidationError,
  type IcmpCheck, type LookupAllFunction, type PluginRegistry, type Runner, type RunJob, type RunResult,
} from '@vigil/core';
import { icmpVerdict } from './assertions.js';
import { GUARD_MARGIN_MS, IcmpUnavailableError, ping, PingHostError, PingNetworkError, type PingOutcome } from './ping.js';

export const ICMP_CHECK_TYPE = 'ICMP' as const;

export interface IcmpRunnerOptions {
  /** The ping to run: iputils' ping, by name on PATH or by path. Default `'ping'`. */
  command?: string;
  /** Milliseconds between the echo requests of a run, 10 or more. Default 200. */
  intervalMs?: number;
  /** An interface name or source address the echo requests leave from (`ping -I`). Default: the route's. */
  sourceInterface?: string | null;
  /** Time limit of a run whose job carries none. Default 30 s. */
  defaultTimeoutMs?: number;
  /** Replaces `dns.lookup(name, { family, all: true })` (a host's own service discovery, say). */
  lookupAll?: LookupAllFunction;
}

export interface IcmpRunner extends Runner {
  readonly checkType: typeof ICMP_CHECK_TYPE;
  /**
   * The longest a run can take: the largest pingCount's requests at intervalMs, the largest
   * timeout, the guard past ping's deadline and a DNS allowance. The engine gives each attempt
   * this long, so its limit never cuts a run that is within the check's own bounds.
   */
  readonly timeoutMs: number;
  readonly options: Readonly<{ command: string; intervalMs: number; sourceInterface: string | null; defaultTimeoutMs: number }>;
}

/** Fewer milliseconds between echo requests than this is a flood, which ping refuses to most users. */
const MIN_INTERVAL_MS = 10;
/** The request's bounds (IcmpRequestSchema): pingCount 1..10, timeout 100..10000 ms. */
const MAX_PING_COUNT = 10;
const MAX_TIMEOUT_MS = 10_000;
/** What a run may spend resolving its host name, beside ping's own time. */
const DNS_ALLOWANCE_MS = 5000;

/** The longest a run of checks within the request's bounds can take with this interval. */
export const longestRunMs = (intervalMs: number) => (MAX_PING_COUNT - 1) * intervalMs + MAX_TIMEOUT_MS + GUARD_MARGIN_MS + DNS_ALLOWANCE_MS;

const familyName = (family: 4 | 6) => `IPv${family}`;
const describe = (host: string, address: string) => (host === address ? address : `${host} (${address})`);

function lookupProblem(err: NodeJS.ErrnoException, host: string, family: 4 | 6): string {
  const code = String(err.code ?? 'EDNS');
  if (['ENOTFOUND', 'ENODATA', 'EAI_NODATA', 'EAI_NONAME'].includes(code)) {
    return `DNS lookup of "${host}" found no ${familyName(family)} address (${code}): check the hostname, and that it has an ${family === 6 ? 'AAAA' : 'A'} record`;
  }
  return `DNS lookup of "${host}" for an ${familyName(family)} address failed (${code}): ${err.message}`;
}

/** `work`, unless `signal` aborts first (a lookup cannot be cancelled, only left behind). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (err) => { signal.removeEventListener('abort', onAbort); reject(err); },
    );
  });
}

/** The run's phases: the analytics metrics of ICMP checks. */
function phasesOf(outcome: PingOutcome): Record<string, number> {
  const { latency } = outcome;
  if (!latency) return { total: outcome.elapsedMs, packetLoss: 100 };
  return {
    total: latency.avg, latencyAvg: latency.avg, latencyMin: latency.min, latencyMax: latency.max,
    latencyStdDev: latency.stdDev, packetLoss: outcome.packetLoss,
  };
}

/** The request rules a stored check keeps; the API checks them on create and update as well. */
export function validateIcmpCheck(check: unknown): void {
  const request = check !== null && typeof check === 'object' ? (check as { request?: unknown }).request : undefined;
  try {
    parse(IcmpRequestSchema, request);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(err.issues.map((i) => ({ ...i, path: i.path ? `request.${i.path}` : 'request' })));
    throw err;
  }
}

/** Runs ICMP checks: `pingCount` echo requests to the check's host by the system's ping, the replies held to the check's rules. */
export function icmpRunner(options: IcmpRunnerOptions = {}): IcmpRunner {
  const intervalMs = positiveOption('icmpRunner', 'intervalMs', options.intervalMs, 200);
  if (intervalMs < MIN_INTERVAL_MS) throw new TypeError(`icmpRunner: intervalMs must be at least ${MIN_INTERVAL_MS}, got ${intervalMs}`);
  const settings = {
    command: options.command ?? 'ping',
    intervalMs,
    sourceInterface: options.sourceInterface ?? null,
    defaultTimeoutMs: positiveOption('icmpRunner', 'defaultTimeoutMs', options.defaultTimeoutMs, 30_000),
  };
  if (typeof settings.command !== 'string' || settings.command === '') throw new TypeError('icmpRunner: command must be a non-empty string');
  const lookupAll = options.lookupAll ?? systemLookupAll;

  async function runCheck(job: RunJob, check: IcmpCheck, signal: AbortSignal): Promise<RunResult> {
    const { request } = check;
    const host = request.hostname;
    const family: 4 | 6 = request.ipFamily === 'IPv6' ? 6 : 4;
    const count = request.pingCount;
    const details: Record<string, unknown> = { hostname: host, address: null, ipFamily: request.ipFamily, pingCount: count };
    const started = performance.now();
    const waited = () => Math.round((performance.now() - started) * 100) / 100;
    const failed = (message: string, kind: RunResult['failureKind'], extra: Partial<RunResult> = {}) =>
      runResult({ hasFailures: true, errorMessage: message, failureKind: kind, phases: { total: 0 }, details, ...extra });
    const runLimit = job.timeoutMs > 0 ? job.timeoutMs : settings.defaultTimeoutMs;
    const limit = AbortSignal.timeout(runLimit);
    const ended = AbortSignal.any([signal, limit]);
    const stopped = (): RunResult => {
      const elapsed = waited();
      const message = signal.aborted
        ? `The run was stopped after ${Math.round(elapsed)} ms, before ping finished`
        : `ping did not finish within the run's time limit of ${runLimit} ms`;
      return applyShouldFail(failed(message, 'TIMEOUT', { responseTime: elapsed, phases: { total: elapsed } }), check.shouldFail, signal);
    };
    if (signal.aborted) return failed('The run was stopped before it started: its signal was already aborted', 'TIMEOUT');

    const literal = isIP(host);
    if (literal !== 0 && literal !== family) {
      // The check contradicts itself: that says nothing about the target, so shouldFail does not apply.
      return failed(`${host} is an ${familyName(literal as 4 | 6)} address, but the check's ipFamily is ${request.ipFamily}: change one of them`, 'OTHER');
    }
    let address: string;
    try {
      if (job.targetPolicy?.refuseInternalAddresses) {
        const checked = await untilAborted(lookupChecked(job.targetPolicy, host, family, lookupAll), ended);
        // A refused target was never pinged: that says nothing about it, so shouldFail does not apply.
        if (checked.refusal) return failed(targetRefusalMessage(checked.refusal, host), 'NETWORK_ERROR');
        address = checked.addresses[0].address;
      } else if (literal !== 0) {
        address = host;
      } else {
        const [first] = await untilAborted(lookupAll(host, family), ended);
        if (!first) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        address = first.address;
      }
    } catch (err) {
      if (signal.aborted || limit.aborted) return stopped();
      const problem = lookupProblem(err as NodeJS.ErrnoException, host, family);
      return applyShouldFail(failed(problem, 'NETWORK_ERROR', { responseTime: waited(), phases: { total: waited() } }), check.shouldFail, signal);
    }
    if (isIP(address) !== family) {
      // Only a host's own lookupAll can hand back something else; nothing was sent.
      return runResult({
        hasErrors: true, errorMessage: `The lookup of "${host}" gave ${JSON.stringify(address)}, which is not an ${familyName(family)} address: ping was not started`,
        failureKind: 'OTHER', details,
      });
    }
    details.address = address;
    if (signal.aborted || limit.aborted) return stopped();

    const target = describe(host, address);
    let outcome: PingOutcome;
    try {
      outcome = await ping({
        address, family, count, timeoutMs: request.timeout, intervalMs: settings.intervalMs,
        sourceInterface: settings.sourceInterface, command: settings.command, signal: ended,
      });
    } catch (err) {
      if (signal.aborted || limit.aborted) return stopped();
      // No ping, or a ping that may open no ICMP socket: this host cannot run the check at all.
      if (err instanceof IcmpUnavailableError) return runResult({ hasErrors: true, errorMessage: err.message, failureKind: 'OTHER', details });
      // ping refused to start here, its output was not iputils', or it would not end: nothing about the target.
      if (err instanceof PingHostError) {
        return runResult({
          hasErrors: true, errorMessage: err.message, failureKind: 'OTHER', responseTime: waited(), phases: { total: waited() },
          details: { ...details, errors: [err.detail] },
        });
      }
      if (err instanceof PingNetworkError) {
        const result = failed(`ping could not reach ${target}: ${err.detail}`, 'NETWORK_ERROR', {
          responseTime: waited(), phases: { total: waited() }, details: { ...details, errors: [err.detail] },
        });
        return applyShouldFail(result, check.shouldFail, signal);
      }
      throw err;
    }

    const verdict = icmpVerdict({
      subject: outcome, assertions: request.assertions, limits: check, target, errors: outcome.errors, waitedMs: outcome.elapsedMs,
    });
    const result = applyShouldFail({
      hasFailures: verdict.hasFailures,
      hasErrors: false,
      isDegraded: false,
      overMaxResponseTime: verdict.overMaxResponseTime,
      responseTime: verdict.responseTime,
      phases: phasesOf(outcome),
      errorMessage: verdict.errorMessage,
      failureKind: verdict.failureKind,
      assertions: verdict.assertions,
      details: {
        ...details, sent: outcome.sent, received: outcome.received, packetLoss: outcome.packetLoss,
        latency: outcome.latency, replies: outcome.replies, errors: outcome.errors,
      },
    }, check.shouldFail, signal);
    // Degraded is a passing run's verdict, and only the run's own: a run that passed because
    // shouldFail turned its failure round is not also degraded.
    return { ...result, isDegraded: verdict.isDegraded && !result.hasFailures };
  }

  return {
    checkType: ICMP_CHECK_TYPE,
    options: settings,
    timeoutMs: longestRunMs(settings.intervalMs),
    validate: validateIcmpCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('ICMP runner', ICMP_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
    },
  };
}

/** Creates an ICMP runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerIcmpRunner(container: PluginRegistry, options: IcmpRunnerOptions = {}): IcmpRunner {
  const runner = icmpRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
