import { performance } from 'node:perf_hooks';
import { positiveOption, RegexSandbox, runChecked, RUNNERS, type ApiCheck, type Runner, type RunJob, type RunResult } from '@vigil/core';
import { Agent } from 'undici';
import { systemLookup, RunConnections, type LookupFunction } from './connector.js';
import { hopPhases, PHASES, sendHop, type Hop, type HopRequest, type HopResponse } from './exchange.js';
import { describeTarget, requestFailure, type RunFailure, type StopReason } from './failures.js';
import { recordedHeaders, buildRequest } from './request.js';
import { judgeResponse } from './verdict.js';
import { validateApiCheck } from './validate.js';

export const API_CHECK_TYPE = 'API' as const;

export interface HttpRunnerOptions {
  /** Bytes of a response body read at most; reading stops there and assertions see what arrived. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Redirects followed at most (when the check follows them). Default 10. */
  maxRedirects?: number;
  /** Longest a regex of an assertion may run on a response. Default 100 ms. */
  regexTimeoutMs?: number;
  /** Time limit of a run whose job carries none. Default 30 s. */
  defaultTimeoutMs?: number;
  /** Sent as User-Agent unless the check sets one. Default `Vigil-API-Check/0.1`. */
  userAgent?: string;
  /** Replaces `dns.lookup` (a host's own service discovery, or a test's names). */
  lookup?: LookupFunction;
}

export interface HttpRunner extends Runner {
  readonly checkType: typeof API_CHECK_TYPE;
  readonly options: Readonly<Required<Omit<HttpRunnerOptions, 'lookup'>>>;
}

/** The part of a DI container (tsyringe's DependencyContainer) that registering uses. */
export interface RunnerRegistry {
  register(token: typeof RUNNERS, provider: { useValue: Runner }): unknown;
}

const DEFAULTS = {
  maxResponseBytes: 1024 * 1024,
  maxRedirects: 10,
  regexTimeoutMs: 100,
  defaultTimeoutMs: 30_000,
  userAgent: 'Vigil-API-Check/0.1',
};

/** Longest piece of the response body kept in `details.response.body`. */
const BODY_EXCERPT = 2048;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DAY_MS = 86_400_000;

const positive = (name: string, value: number | undefined, fallback: number) => positiveOption('httpRunner', name, value, fallback);

function decodeText(body: Buffer, contentType: string | undefined): string {
  const charset = /charset="?([\w-]+)"?/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return body.toString('utf8');
  }
}

/**
 * The request of the next hop of a redirect (RFC 9110 §15.4): 303 turns anything but HEAD into
 * GET, and so do 301/302 for POST, as browsers do; the body and its headers go with the method.
 * Credentials stay with the origin they were written for.
 */
function redirected(previous: HopRequest, status: number, location: URL): HopRequest {
  const toGet = (status === 303 && previous.method !== 'HEAD') || ((status === 301 || status === 302) && previous.method === 'POST');
  const sameOrigin = location.origin === previous.url.origin;
  const dropped = new Set([...(toGet ? ['content-type', 'content-length'] : []), ...(sameOrigin ? [] : ['authorization', 'cookie', 'proxy-authorization'])]);
  return {
    method: toGet ? 'GET' : previous.method,
    url: location,
    headers: previous.headers.filter(([name]) => !dropped.has(name.toLowerCase())),
    body: toGet ? null : previous.body,
  };
}

/** Runs API checks: sends the request with undici, follows redirects, times each phase, asserts on the answer. */
export function httpRunner(options: HttpRunnerOptions = {}): HttpRunner {
  const settings = {
    maxResponseBytes: Math.floor(positive('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes)),
    maxRedirects: options.maxRedirects === 0 ? 0 : Math.floor(positive('maxRedirects', options.maxRedirects, DEFAULTS.maxRedirects)),
    regexTimeoutMs: positive('regexTimeoutMs', options.regexTimeoutMs, DEFAULTS.regexTimeoutMs),
    defaultTimeoutMs: positive('defaultTimeoutMs', options.defaultTimeoutMs, DEFAULTS.defaultTimeoutMs),
    userAgent: options.userAgent ?? DEFAULTS.userAgent,
  };
  const lookup = options.lookup ?? systemLookup;
  let sandbox: RegexSandbox | null = null;
  const regex = () => (sandbox ??= new RegexSandbox(settings.regexTimeoutMs));

  async function runCheck(job: RunJob, check: ApiCheck, signal: AbortSignal): Promise<RunResult> {
    const built = buildRequest(check.request, job.environment ?? {}, settings.userAgent);
    if (!built.ok) return { ...emptyResult(), hasFailures: true, errorMessage: built.message, failureKind: 'OTHER' };
    const { assertions } = built.request;

    const maxMs = check.maxResponseTime ?? null;
    const runLimit = job.timeoutMs > 0 ? job.timeoutMs : settings.defaultTimeoutMs;
    // Past maxResponseTime the run fails whatever comes later, so there is no point waiting longer.
    const cutAtMax = maxMs !== null && maxMs > 0 && maxMs < runLimit;
    const limitMs = cutAtMax ? maxMs : runLimit;
    const limitLabel = cutAtMax ? `the check's maxResponseTime of ${maxMs} ms` : `the run's time limit of ${limitMs} ms`;

    // Set from the timer and the abort listener, read after a request fails.
    const stopped: { reason: StopReason | null } = { reason: null };
    const controller = new AbortController();
    const timer = setTimeout(() => {
      stopped.reason ??= { kind: 'limit', label: limitLabel };
      controller.abort(new Error(`time limit of ${limitMs} ms`));
    }, limitMs);
    const onAbort = () => {
      stopped.reason ??= { kind: 'abort' };
      controller.abort(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });

    const family = check.request.ipFamily === 'IPv6' ? 6 : 4;
    const connections = new RunConnections({ family, lookup, skipSSL: check.request.skipSSL, signal: controller.signal });
    const agent = new Agent({ connect: connections.connect, pipelining: 1 });
    const started = performance.now();
    const hops: Hop[] = [];
    const redirects: { statusCode: number; url: string }[] = [];
    let request: HopRequest = { method: built.request.method, url: built.request.url, headers: built.request.headers, body: built.request.body };
    try {
      for (;;) {
        const host = hostOf(request.url);
        // Looked up before the request's clock starts: reading and opening a certificate is not the target's time.
        if (request.url.protocol === 'https:' && !connections.certificates.has(host)) {
          connections.certificates.set(host, (await job.clientCertificates?.forHost(host)) ?? null);
        }
        const hop: Hop = { start: performance.now(), connection: null, headersAt: null, end: null };
        hops.push(hop);
        const outcome = controller.signal.aborted
          ? { ok: false as const, error: new Error('aborted') }
          : await sendHop(agent, connections, hop, request, controller.signal, settings.maxResponseBytes);
        if (!outcome.ok) {
          const failure = requestFailure(outcome.error, {
            url: request.url, hop, address: connections.last?.remoteAddress ?? null, stop: stopped.reason, family, lateError: connections.lateError,
            elapsedMs: performance.now() - started, clientCertificate: connections.certificates.get(host)?.host ?? null,
          });
          return failed(failure, request, stopped.reason?.kind === 'limit' && cutAtMax);
        }
        const response = outcome.response;
        const location = response.headers.location;
        if (check.request.followRedirects && REDIRECTS.has(response.statusCode) && typeof location === 'string' && location !== '') {
          let next: URL;
          try {
            next = new URL(location, request.url);
          } catch {
            next = new URL('invalid:');
          }
          if (next.protocol !== 'http:' && next.protocol !== 'https:') {
            return failed({ kind: 'OTHER', code: 'EREDIRECT', message: `${describeTarget(request.url, null)} redirected (${response.statusCode}) to "${location}", which is not an http:// or https:// URL` }, request, false, response);
          }
          if (redirects.length >= settings.maxRedirects) {
            return failed({ kind: 'OTHER', code: 'EREDIRECT', message: `More than ${settings.maxRedirects} redirects, the last from ${request.url.href} to ${next.href}: the redirects may go round in a loop` }, request, false, response);
          }
          redirects.push({ statusCode: response.statusCode, url: next.href });
          request = redirected(request, response.statusCode, next);
          continue;
        }
        return passedOrFailed(response, request);
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      agent.destroy().catch(() => undefined);
    }

    function phasesOf(failedAt: number | null): Record<string, number> {
      const sums: Record<string, number> = { wait: 0, dns: 0, tcp: 0, tls: 0, firstByte: 0, download: 0, total: 0 };
      hops.forEach((hop, i) => {
        const p = hopPhases(hop, i === hops.length - 1 ? failedAt : null);
        for (const k of [...PHASES, 'total'] as const) sums[k] = Math.round((sums[k]! + p[k]) * 100) / 100;
      });
      // "tls where there is one": a run that made no TLS connection has no tls phase.
      if (!hops.some((h) => h.connection?.https)) delete sums.tls;
      return sums;
    }

    function details(req: HopRequest, response: HopResponse | null, text: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
      const info = connections.last;
      const out: Record<string, unknown> = {
        request: { method: req.method, url: req.url.href, headers: recordedHeaders(req.headers) },
        redirects,
        remoteAddress: info?.remoteAddress ?? null,
        tlsProtocol: info?.tlsProtocol ?? null,
        clientCertificate: info?.clientCertificate ?? null,
        ...extra,
      };
      if (response && text !== null) {
        out.response = {
          statusCode: response.statusCode,
          statusText: response.statusText,
          headers: response.headers,
          body: text.length > BODY_EXCERPT ? `${text.slice(0, BODY_EXCERPT)}…` : text,
          bytesReceived: response.bytesReceived,
          truncated: response.truncated,
          ...(response.decodeProblem ? { decodeProblem: response.decodeProblem } : {}),
        };
      }
      return out;
    }

    function sslDaysRemaining(): number | null {
      const validTo = connections.last?.certificateValidTo;
      return validTo && !Number.isNaN(validTo.getTime()) ? Math.floor((validTo.getTime() - Date.now()) / DAY_MS) : null;
    }

    function failed(failure: RunFailure, req: HopRequest, overMax: boolean, response: HopResponse | null = null): RunResult {
      const phases = phasesOf(performance.now());
      return {
        ...emptyResult(),
        hasFailures: !failure.ours,
        hasErrors: failure.ours === true,
        overMaxResponseTime: overMax,
        responseTime: phases.total!,
        phases,
        errorMessage: failure.message,
        failureKind: failure.kind,
        statusCode: response?.statusCode ?? null,
        sslDaysRemaining: sslDaysRemaining(),
        details: details(req, response, response ? decodeText(response.body, headerOf(response, 'content-type')) : null, { errorCode: failure.code }),
      };
    }

    function passedOrFailed(response: HopResponse, req: HopRequest): RunResult {
      const phases = phasesOf(null);
      const responseTime = phases.total!;
      const body = decodeText(response.body, headerOf(response, 'content-type'));
      const verdict = judgeResponse({
        assertions,
        subject: { statusCode: response.statusCode, headers: response.headers, body, responseTime },
        shouldFail: check.shouldFail,
        degradedMs: check.degradedResponseTime ?? null,
        maxMs,
        regex,
      });
      return {
        hasFailures: verdict.problems.length > 0,
        hasErrors: false,
        isDegraded: verdict.degraded,
        overMaxResponseTime: verdict.overMax,
        responseTime,
        phases,
        errorMessage: verdict.problems.length > 0 ? verdict.problems.join('; ') : null,
        failureKind: verdict.failureKind,
        statusCode: response.statusCode,
        sslDaysRemaining: sslDaysRemaining(),
        assertions: verdict.outcomes,
        details: details(req, response, body),
      };
    }
  }

  return {
    checkType: API_CHECK_TYPE,
    options: settings,
    validate: validateApiCheck,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('HTTP runner', API_CHECK_TYPE, job, (check) => runCheck(job, check, signal));
    },
  };
}

/** The host a certificate is looked up for: lower case, an IPv6 address without brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

function headerOf(response: HopResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function emptyResult(): RunResult {
  return {
    hasFailures: false, hasErrors: false, isDegraded: false, overMaxResponseTime: false, responseTime: 0,
    phases: { wait: 0, dns: 0, tcp: 0, firstByte: 0, download: 0, total: 0 }, errorMessage: null, failureKind: null, statusCode: null,
  };
}

/** Creates an HTTP runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerHttpRunner(container: RunnerRegistry, options: HttpRunnerOptions = {}): HttpRunner {
  const runner = httpRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
