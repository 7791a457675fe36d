import { describe, expect, it } from 'vitest';
import { isDegradedRun, isOverMaxResponseTime } from '../src/rules/response-time.js';

const passed = (responseTime: number) => ({ hasFailures: false, hasErrors: false, responseTime });
const limits = { degradedResponseTime: 100, maxResponseTime: 500 };

describe('isOverMaxResponseTime', () => {
  it('is over only past the limit, and never without one', () => {
    expect(isOverMaxResponseTime(501, 500)).toBe(true);
    expect(isOverMaxResponseTime(500, 500)).toBe(false);
    expect(isOverMaxResponseTime(10_000, null)).toBe(false);
    expect(isOverMaxResponseTime(10_000, undefined)).toBe(false);
  });
});

describe('isDegradedRun', () => {
  it('a passing run slower than degradedResponseTime is degraded; one at the limit or faster is not', () => {
    expect(isDegradedRun(passed(101), limits)).toBe(true);
    expect(isDegradedRun(passed(100), limits)).toBe(false);
    expect(isDegradedRun(passed(20), limits)).toBe(false);
  });

  it('a failing run is a failure, not also degraded, however slow', () => {
    expect(isDegradedRun({ hasFailures: true, hasErrors: false, responseTime: 300 }, limits)).toBe(false);
    expect(isDegradedRun({ hasFailures: false, hasErrors: true, responseTime: 300 }, limits)).toBe(false);
  });

  it('a run over maxResponseTime is not degraded, even when shouldFail made it pass', () => {
    expect(isDegradedRun(passed(501), limits)).toBe(false);
  });

  it('without a degradedResponseTime no run is degraded', () => {
    expect(isDegradedRun(passed(400), { degradedResponseTime: null, maxResponseTime: 500 })).toBe(false);
    expect(isDegradedRun(passed(400), {})).toBe(false);
  });
});
