import { describe, expect, it } from 'vitest';
import { applyShouldFail, runResult } from '../src/index.js';

const passed = runResult({ responseTime: 12, phases: { total: 12 }, details: { remoteAddress: '127.0.0.1' } });
const failed = runResult({
  hasFailures: true,
  errorMessage: 'Connection refused by 127.0.0.1:5999: nothing is listening on that port',
  failureKind: 'NETWORK_ERROR',
  responseTime: 3,
  details: { errorCode: 'ECONNREFUSED' },
});
const aborted = () => {
  const controller = new AbortController();
  controller.abort();
  return controller.signal;
};

describe('applyShouldFail', () => {
  it('leaves every result as it is when the check has no shouldFail', () => {
    expect(applyShouldFail(passed, false)).toBe(passed);
    expect(applyShouldFail(failed, false)).toBe(failed);
  });

  it('fails a run that passed, saying the check expected it to fail', () => {
    const result = applyShouldFail(passed, true);
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'ASSERTION', responseTime: 12, details: { remoteAddress: '127.0.0.1' } });
    expect(result.errorMessage).toBe('The run passed, but the check has shouldFail set: it was expected to fail');
  });

  it('passes a run that failed, keeping what happened in details.expectedFailure', () => {
    const result = applyShouldFail(failed, true);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null, responseTime: 3 });
    expect(result.details).toEqual({
      errorCode: 'ECONNREFUSED',
      expectedFailure: { errorMessage: 'Connection refused by 127.0.0.1:5999: nothing is listening on that port', failureKind: 'NETWORK_ERROR' },
    });
  });

  it('passes a failed run that had no details', () => {
    const result = applyShouldFail(runResult({ hasFailures: true, errorMessage: 'expect(received).toContain(expected)', failureKind: 'ASSERTION' }), true);
    expect(result.hasFailures).toBe(false);
    expect(result.details).toEqual({ expectedFailure: { errorMessage: 'expect(received).toContain(expected)', failureKind: 'ASSERTION' } });
  });

  it('keeps the assertions that failed, so the result shows them', () => {
    const assertions = [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', property: '', target: 'b', actual: 'a', passed: false }];
    const result = applyShouldFail(runResult({ hasFailures: true, errorMessage: 'Assertion failed', failureKind: 'ASSERTION', assertions }), true);
    expect(result).toMatchObject({ hasFailures: false, assertions });
  });

  it('never turns an error of Vigil or the runner into a pass', () => {
    const error = runResult({ hasErrors: true, errorMessage: 'The browser could not be started: spawn ENOENT', failureKind: 'OTHER' });
    expect(applyShouldFail(error, true)).toBe(error);
  });

  it('leaves a run whose signal aborted as it is, failed or passed', () => {
    const cancelled = runResult({ hasFailures: true, errorMessage: 'The run was cancelled', failureKind: 'TIMEOUT' });
    expect(applyShouldFail(cancelled, true, aborted())).toBe(cancelled);
    expect(applyShouldFail(passed, true, aborted())).toBe(passed);
    expect(applyShouldFail(cancelled, true, new AbortController().signal).hasFailures).toBe(false);
  });
});
