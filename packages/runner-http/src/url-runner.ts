import {
  ApiRequestSchema, applyShouldFail, parse, RUNNERS, runChecked,
  type ApiAssertion, type ApiCheck, type PluginRegistry, type Runner, type RunJob, type RunResult, type UrlCheck,
} from '@vigil/core';
import { httpRunner, type HttpRunnerOptions } from './http-runner.js';

export const URL_CHECK_TYPE = 'URL' as const;

export interface UrlRunner extends Runner {
  readonly checkType: typeof URL_CHECK_TYPE;
}

const statusAssertion = (comparison: 'EQUALS' | 'GREATER_THAN' | 'LESS_THAN', target: number): ApiAssertion =>
  ({ source: 'STATUS_CODE', comparison, target: String(target), property: '', regex: null }) as ApiAssertion;

/** `200`, `2xx` or `200-399` as STATUS_CODE assertions: every one must pass. */
export function expectedStatusAssertions(expected: string): ApiAssertion[] {
  if (/^\d{3}$/.test(expected)) return [statusAssertion('EQUALS', Number(expected))];
  const [low, high] = /^\dxx$/.test(expected)
    ? [Number(expected[0]) * 100, Number(expected[0]) * 100 + 99]
    : expected.split('-').map(Number) as [number, number];
  return [statusAssertion('GREATER_THAN', low - 1), statusAssertion('LESS_THAN', high + 1)];
}

/**
 * The API check a URL check's run is: its method and URL with no headers, body or scripts, its
 * redirect, TLS and IP-family settings, and its expected status as STATUS_CODE assertions.
 */
function asApiCheck(check: UrlCheck): ApiCheck {
  const { request, ...rest } = check;
  return {
    ...rest,
    // The URL runner applies shouldFail to the verdict on the status itself.
    shouldFail: false,
    checkType: 'API',
    request: parse(ApiRequestSchema, {
      method: request.method,
      url: request.url,
      followRedirects: request.followRedirects,
      skipSSL: request.skipSSL,
      ipFamily: request.ipFamily,
      assertions: expectedStatusAssertions(request.expectedStatus),
    }),
  } as ApiCheck;
}

/**
 * Runs URL checks: one GET or HEAD of a URL with the HTTP runner's exchange (redirects, TLS,
 * timed phases, the target policy), passing when the final status is the expected one. A group's
 * API defaults and setup and teardown scripts are for its API checks, not for URL checks.
 */
export function urlRunner(options: HttpRunnerOptions = {}): UrlRunner {
  const http = httpRunner(options);
  return {
    checkType: URL_CHECK_TYPE,
    timeoutMs: http.options.defaultTimeoutMs,
    run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
      return runChecked('URL runner', URL_CHECK_TYPE, job, async (check) => {
        const result = await http.run({ ...job, group: null, check: asApiCheck(check) }, signal);
        // shouldFail inverts the verdict on an answer: a status outside the expected one passes, an
        // expected one fails. No answer at all (refused, timed out, a refused target) still fails,
        // as for API checks.
        return check.shouldFail && typeof result.statusCode === 'number' ? applyShouldFail(result, true, signal) : result;
      });
    },
  };
}

/** Creates a URL runner and registers it on the host's container as one of Vigil's RUNNERS. */
export function registerUrlRunner(container: PluginRegistry, options: HttpRunnerOptions = {}): UrlRunner {
  const runner = urlRunner(options);
  container.register(RUNNERS, { useValue: runner });
  return runner;
}
