import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  isDegradedRun,
  isOverMaxResponseTime,
  positiveOption,
  runChecked,
  runResult,
  ValidationError,
  type FailureKind,
  type Runner,
  type RunJob,
  type RunResult,
  type ValidationIssue,
} from '@vigil/core';
import { dnsCheckType, type DnsCheck, type DnsRecordType } from './dns-check-type.js';

export interface DnsRunnerOptions {
  /**
   * Name servers to ask, as `node:dns` takes them (`'10.0.0.53'`, `'127.0.0.1:5353'`,
   * `'[::1]:53'`). Default: the system's (`/etc/resolv.conf`).
   */
  servers?: string[];
  /** How long one query waits for an answer, in milliseconds. Default 5,000 (never past the job's time limit). */
  queryTimeoutMs?: number;
  /** Queries sent per server before giving up (UDP may drop one). Default 2. */
  tries?: number;
}

/** One answer as text, and the other texts an expected value may match it by. */
interface Answer {
  text: string;
  matches: string[];
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Names compare without case and without the root's trailing dot; TXT compares exactly. */
function normalize(value: string, recordType: DnsRecordType): string {
  const trimmed = value.trim();
  return recordType === 'TXT' ? trimmed : trimmed.toLowerCase().replace(/\.$/, '');
}

async function lookup(resolver: dns.Resolver, hostname: string, recordType: DnsRecordType): Promise<Answer[]> {
  const plain = (texts: string[]) => texts.map((text) => ({ text, matches: [normalize(text, recordType)] }));
  switch (recordType) {
    case 'A': return plain(await resolver.resolve4(hostname));
    case 'AAAA': return plain(await resolver.resolve6(hostname));
    case 'CNAME': return plain(await resolver.resolveCname(hostname));
    case 'NS': return plain(await resolver.resolveNs(hostname));
    case 'TXT': return plain((await resolver.resolveTxt(hostname)).map((chunks) => chunks.join('')));
    case 'MX':
      return (await resolver.resolveMx(hostname)).map(({ priority, exchange }) => ({
        text: `${priority} ${exchange}`,
        matches: [normalize(`${priority} ${exchange}`, 'MX'), normalize(exchange, 'MX')],
      }));
  }
}

/** What a failed lookup means to a person, and how retries should see it. */
function describeError(err: unknown, check: DnsCheck, servers: string[]): { message: string; kind: FailureKind } {
  const { hostname, recordType } = check.request;
  const code = (err as { code?: string }).code ?? '';
  const where = servers.join(', ');
  switch (code) {
    case 'ENOTFOUND': return { message: `${hostname} does not exist (NXDOMAIN from ${where})`, kind: 'ASSERTION' };
    case 'ENODATA': return { message: `${hostname} has no ${recordType} records (asked ${where})`, kind: 'ASSERTION' };
    case 'ETIMEOUT': return { message: `No answer from ${where} for ${hostname} ${recordType}`, kind: 'TIMEOUT' };
    case 'ESERVFAIL': return { message: `${where} failed to answer for ${hostname} (SERVFAIL)`, kind: 'NETWORK_ERROR' };
    case 'EREFUSED': return { message: `${where} refused the query for ${hostname} (REFUSED)`, kind: 'NETWORK_ERROR' };
    case 'ECONNREFUSED': return { message: `Could not reach ${where} (connection refused)`, kind: 'NETWORK_ERROR' };
    default: return { message: `The lookup of ${hostname} ${recordType} failed: ${code || (err instanceof Error ? err.message : String(err))}`, kind: 'NETWORK_ERROR' };
  }
}

/** The DNS rules the schema cannot state: expected values that fit the record type. */
export function validateDnsCheck(check: unknown): void {
  const request = isObject(check) ? check.request : undefined;
  if (!isObject(request)) throw new ValidationError([{ path: 'request', message: 'is required' }]);
  const expected = Array.isArray(request.expectedValues) ? request.expectedValues : [];
  const issues: ValidationIssue[] = [];
  expected.forEach((value, i) => {
    if (typeof value !== 'string') return;
    const path = `request.expectedValues.${i}`;
    if (request.recordType === 'A' || request.recordType === undefined) {
      if (isIP(value) !== 4) issues.push({ path, message: 'must be an IPv4 address for an A record' });
    } else if (request.recordType === 'AAAA') {
      if (isIP(value) !== 6) issues.push({ path, message: 'must be an IPv6 address for an AAAA record' });
    } else if (request.recordType === 'MX') {
      if (!/^(\d{1,5}\s+)?[A-Za-z0-9._-]+$/.test(value)) issues.push({ path, message: 'must be a mail host, optionally after its priority (10 mail.example.com)' });
    }
  });
  if (issues.length > 0) throw new ValidationError(issues);
}

/**
 * A runner for DNS checks, written against `@vigil/core` alone: it asks the name servers for the
 * check's records with `node:dns`, times the answer, and compares it with the expected values.
 * Register it with the check type: `createVigil({ checkTypes: [dnsCheckType], runners: [dnsRunner()] })`.
 */
export function dnsRunner(options: DnsRunnerOptions = {}): Runner {
  const queryTimeoutMs = positiveOption('dnsRunner', 'queryTimeoutMs', options.queryTimeoutMs, 5_000);
  const tries = Math.max(1, Math.floor(positiveOption('dnsRunner', 'tries', options.tries, 2)));
  const servers = options.servers ? [...options.servers] : null;
  if (servers) new dns.Resolver().setServers(servers); // a malformed address throws here, when the host starts

  async function runCheck(job: RunJob, check: DnsCheck, signal: AbortSignal): Promise<RunResult> {
    const { hostname, recordType, expectedValues } = check.request;
    if (signal.aborted) return runResult({ hasFailures: true, errorMessage: 'The lookup was aborted', failureKind: 'TIMEOUT' });
    // One resolver per run, so that an abort cancels this run's queries and no other.
    const resolver = new dns.Resolver({ timeout: Math.min(queryTimeoutMs, job.timeoutMs > 0 ? job.timeoutMs : queryTimeoutMs), tries });
    if (servers) resolver.setServers(servers);
    const asked = resolver.getServers();
    const cancel = () => resolver.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    const started = performance.now();
    let answers: Answer[] | null = null;
    let error: unknown = null;
    try {
      answers = await lookup(resolver, hostname, recordType);
    } catch (err) {
      error = err;
    } finally {
      signal.removeEventListener('abort', cancel);
    }
    const responseTime = Math.round(performance.now() - started);
    const phases = { dns: responseTime, total: responseTime };
    const details = { recordType, nameServers: asked, answers: answers?.map((a) => a.text) ?? [] };

    if (error && signal.aborted) {
      return runResult({ hasFailures: true, responseTime, phases, errorMessage: 'The lookup was aborted', failureKind: 'TIMEOUT', details });
    }
    const problems: string[] = [];
    let kind: FailureKind | null = null;
    if (error) {
      const described = describeError(error, check, asked);
      problems.push(described.message);
      kind = described.kind;
    } else {
      const missing = expectedValues.filter((value) => !answers!.some((a) => a.matches.includes(normalize(value, recordType))));
      if (missing.length > 0) {
        problems.push(`${recordType} records of ${hostname} are ${answers!.map((a) => a.text).join(', ')}; expected ${missing.join(', ')} among them`);
        kind = 'ASSERTION';
      }
    }

    // Core's rule for response times: a run that passes and is slower than degradedResponseTime is
    // degraded; a failing run is a failure, not also degraded.
    const judged = (result: RunResult): RunResult => ({ ...result, isDegraded: isDegradedRun(result, check) });

    // shouldFail: a lookup that fails (or answers otherwise) is the expected outcome.
    if (check.shouldFail) {
      if (problems.length > 0) return judged(runResult({ responseTime, phases, details: { ...details, expectedFailure: problems[0] } }));
      return runResult({ hasFailures: true, responseTime, phases, errorMessage: `The lookup of ${hostname} ${recordType} succeeded, but the check expects it to fail`, failureKind: 'ASSERTION', details });
    }

    const maxMs = check.maxResponseTime;
    const overMax = isOverMaxResponseTime(responseTime, maxMs);
    if (overMax) {
      problems.push(`The answer took ${responseTime} ms, over the check's maxResponseTime of ${maxMs} ms`);
      kind ??= 'TIMEOUT';
    }
    return judged(runResult({
      hasFailures: problems.length > 0,
      overMaxResponseTime: overMax,
      responseTime,
      phases,
      errorMessage: problems.length > 0 ? problems.join('; ') : null,
      failureKind: problems.length > 0 ? kind : null,
      details,
    }));
  }

  return {
    checkType: dnsCheckType.checkType,
    validate: validateDnsCheck,
    run: (job, signal) => runChecked('DNS runner', dnsCheckType, job, (check) => runCheck(job, check, signal)),
  };
}
