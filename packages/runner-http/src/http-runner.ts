import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { positiveOption, RegexSandbox, runChecked, RUNNERS, scrubDeep, systemLookupAll, type ApiCheck, type PluginRegistry, type Runner, type RunJob, type RunResult } from '@vigil/core';
import { Agent } from 'undici';
import { systemLookup, RunConnections, type LookupFunction } from './connector.js';
import { hopPhases, PHASES, sendHop, type Hop, type HopRequest, type HopResponse } from './exchange.js';
import { describeTarget, requestFailure, type RunFailure, type StopReason } from './failures.js';
import { buildRequest, headerCredentials, recordedHeaders, recordedResponseHeaders, type OutgoingRequest } from './request.js';
import { ScriptedRun, withFailure, type Exchanged } from './scripted-run.js';
import { groupScripts } from './scripts.js';
import { judgeResponse } from './verdict.js';
import { multiStepRunner } from './multistep-runner.js';
import { urlRunner } from './url-runner.js';
import { validateApiCheck } from './validate.js';

export const API_CHECK_TYPE = 'API' as const;

export interface HttpRunnerOptions {
  /** Bytes of a response body read at most; reading stops there and assertions see what arrived. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Redirects followed at most (when the check follows them). Default 10. */
  maxRedirects?: number;
  /** Longest a regex of an assertion may run on a response. Default 100 ms. */
  regexTimeoutMs?: number;
  /**
   * Longest the request waits for a complete answer when the check sets no maxResponseTime (and
   * the run's time limit allows). Default 30 s.
   */
  defaultTimeoutMs?: number;
  /** Time limit of each of a run's setup and teardown phases (the group's scripts). Default 10 s. */
  scriptTimeoutMs?: number;
  /** Heap limit of the process a setup or teardown runs in. Default 128 MB. */
  scriptMemoryLimitMb?: number;
  /** Sent as User-Agent unless the check sets one. Default `Vigil-API-Check/0.1`. */
  userAgent?: string;
  /** Replaces `dns.lookup` (a host's own service discovery, or a test's names). */
  lookup?: LookupFunction;
}

export interface HttpRunner extends Runner {
  readonly checkType: typeof API_CHECK_TYPE;
  /** The engine's limit for one attempt: a request's defaultTimeoutMs plus a setup's and a teardown's scriptTimeoutMs. */
  readonly timeoutMs: number;
  readonly options: Readonly<Required<Omit<HttpRunnerOptions, 'lookup'>>>;
}

const DEFAULTS = {
  maxResponseBytes: 1024 * 1024,
  maxRedirects: 10,
  regexTimeoutMs: 100,
  defaultTimeoutMs: 30_000,
  scriptTimeoutMs: 10_000,
  scriptMemoryLimitMb: 128,
  userAgent: 'Vigil-API-Check/0.1',
};

/** Longest piece of the response body kept in `details.response.body`. */
const BODY_EXCERPT = 2048;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DAY_MS = 86_400_000;
/** Kept free at the end of a run's time limit: a script's process is killed and its folder removed in it. */
const FINISH_MS = 250;

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
/**
 * The setup/teardown worker: child/script-worker.cjs beside src/ (the sources) or dist/ (the
 * built package, whose `files` ship child/). It loads Node's own modules only, so it is not built.
 */
const scriptWorkerFile = () => realpathSync(join(here, '..', 'child', 'script-worker.cjs'));

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
    scriptTimeoutMs: positive('scriptTimeoutMs', options.scriptTimeoutMs, DEFAULTS.scriptTimeoutMs),
    scriptMemoryLimitMb: Math.floor(positive('scriptMemoryLimitMb', options.scriptMemoryLimitMb, DEFAULTS.scriptMemoryLimitMb)),
    userAgent: options.userAgent ?? DEFAULTS.userAgent,
  };
  const lookup = options.lookup ?? systemLookup;
  // A host's own lookup answers one address; a target policy then checks that one.
  const lookupAll = options.lookup ? undefined : systemLookupAll;
  let sandbox: RegexSandbox | null = null;
  const regex = () => (sandbox ??= new RegexSandbox(settings.regexTimeoutMs));
  const timeoutMs = settings.defaultTimeoutMs + 2 * settings.scriptTimeoutMs;
  let workerFile: string | null = null;

  /**
   * One run: the group's setup (which may change the request; when it fails nothing is sent), the
   * request, then the group's teardown (which reads what came back and may fail the run). The
   * run's time limit covers all three; each phase has its own limit inside it.
   */
  async function runCheck(job: RunJob, check: ApiCheck, signal: AbortSignal): Promise<RunResult> {
    const started = performance.now();
    const runMs = job.timeoutMs > 0 ? job.timeoutMs : timeoutMs;
    const left = () => runMs - (performance.now() - started);
    const built = buildRequest(check.request, job.environment ?? {}, settings.userAgent);
    if (!built.ok) return { ...emptyResult(), hasFailures: true, errorMessage: built.message, failureKind: 'OTHER' };
    const loaded = await groupScripts(job);
    if (!loaded.ok) return { ...emptyResult(), hasErrors: true, errorMessage: loaded.message, failureKind: 'OTHER' };
    const { setup, teardown } = loaded.scripts;
    if (setup.length === 0 && teardown.length === 0) {
      const exchanged = await exchange(job, check, built.request, signal, { ms: runMs, scripted: false });
      // The cookies the target set are credentials too, known only now.
      return exchanged.response ? scrubDeep(exchanged.result, headerCredentials(exchanged.response.headers)) : exchanged.result;
    }

    const scripted = new ScriptedRun({ job, scripts: loaded.scripts, signal, workerFile: workerFile ??= scriptWorkerFile(), memoryLimitMb: settings.scriptMemoryLimitMb });
    const phaseLimit = () => Math.max(1, Math.floor(Math.min(settings.scriptTimeoutMs, left() - FINISH_MS)));
    let outgoing = built.request;
    if (setup.length > 0) {
      const done = await scripted.setup(outgoing, phaseLimit());
      if (!done.ok) {
        const { ours, message, kind, details } = done.failure;
        return scripted.finish({
          ...emptyResult(), hasFailures: !ours, hasErrors: ours, errorMessage: message, failureKind: kind,
          details: { request: { method: outgoing.method, url: outgoing.url.href, headers: recordedHeaders(outgoing.headers) }, requestSent: false, ...details },
        });
      }
      outgoing = done.request;
    }
    // The teardown's time is set aside, a third of what is left at most, so a slow answer cannot leave it none.
    const reserve = teardown.length > 0 ? Math.min(settings.scriptTimeoutMs, left() / 3) : 0;
    const exchanged = await exchange(job, check, outgoing, signal, { ms: left() - reserve, scripted: true });
    if (exchanged.response) scripted.keep(headerCredentials(exchanged.response.headers));
    let result = exchanged.result;
    if (teardown.length > 0 && !signal.aborted) {
      const failure = left() > FINISH_MS + 50
        ? await scripted.teardown(exchanged, phaseLimit())
        : { message: 'Teardown did not run: no time was left of the run\'s time limit', kind: 'TIMEOUT' as const, ours: false };
      if (failure) result = withFailure(result, failure);
    }
    return scripted.finish(result);
  }

  async function exchange(
    job: RunJob,
    check: ApiCheck,
    outgoing: OutgoingRequest,
    signal: AbortSignal,
    budget: { ms: number; scripted: boolean },
  ): Promise<Exchanged & { result: RunResult }> {
    const { assertions } = outgoing;
    const maxMs = check.maxResponseTime ?? null;
    const budgetMs = Math.max(1, Math.floor(budget.ms));
    const runLimit = Math.min(budgetMs, settings.defaultTimeoutMs);
    const runLabel = budgetMs > settings.defaultTimeoutMs
      ? `the runner's time limit for a request of ${runLimit} ms`
      : budget.scripted ? `the ${runLimit} ms the run's time limit left the request beside its setup and teardown` : `the run's time limit of ${runLimit} ms`;
    // Past maxResponseTime the run fails whatever comes later, so there is no point waiting longer.
    const cutAtMax = maxMs !== null && maxMs > 0 && maxMs < runLimit;
    const limitMs = cutAtMax ? maxMs : runLimit;
    const limitLabel = cutAtMax ? `the check's maxResponseTime of ${maxMs} ms` : runLabel;

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
    const connections = new RunConnections({
      family, lookup, skipSSL: check.request.skipSSL, signal: controller.signal, policy: job.targetPolicy ?? null, ...(lookupAll ? { lookupAll } : {}),
    });
    const agent = new Agent({ connect: connections.connect, pipelining: 1 });
    const started = performance.now();
    const hops: Hop[] = [];
    const redirects: { statusCode: number; url: string }[] = [];
    let request: HopRequest = { method: outgoing.method, url: outgoing.url, headers: outgoing.headers, body: outgoing.body };
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
          if (failure.code === 'ETARGETPOLICY' && redirects.length > 0) {
            failure.message = `Redirect ${redirects.length} (to ${request.url.href}) was not followed: ${failure.message}`;
          }
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
          headers: recordedResponseHeaders(response.headers),
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

    function failed(failure: RunFailure, req: HopRequest, overMax: boolean, response: HopResponse | null = null): Exchanged & { result: RunResult } {
      const phases = phasesOf(performance.now());
      const text = response ? decodeText(response.body, headerOf(response, 'content-type')) : null;
      const result: RunResult = {
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
        details: details(req, response, text, { errorCode: failure.code }),
      };
      return { result, request: req, response, text, timings: phases, responseTime: phases.total! };
    }

    function passedOrFailed(response: HopResponse, req: HopRequest): Exchanged & { result: RunResult } {
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
      const result: RunResult = {
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
      return { result, request: req, response, text: body, timings: phases, responseTime };
    }
  }

  return {
    checkType: API_CHECK_TYPE,
    options: settings,
    timeoutMs,
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

/**
 * Creates an HTTP runner, a URL runner with the same options and a multi-step runner (with the same
 * maxResponseBytes and scriptMemoryLimitMb), and registers the three on the
 * host's container as Vigil's RUNNERS.
 */
export function registerHttpRunner(container: PluginRegistry, options: HttpRunnerOptions = {}): HttpRunner {
  const runner = httpRunner(options);
  container.register(RUNNERS, { useValue: runner });
  // URL checks are light HTTP checks: the same package runs them, with the same options.
  container.register(RUNNERS, { useValue: urlRunner(options) });
  // Multi-step checks are scripted flows of API requests: the same package runs them.
  container.register(RUNNERS, { useValue: multiStepRunner({ maxResponseBytes: options.maxResponseBytes, scriptMemoryLimitMb: options.scriptMemoryLimitMb }) });
  return runner;
}
