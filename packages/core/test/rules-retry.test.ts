import { describe, expect, it } from 'vitest';
import { DOUBLE_CHECK_STRATEGY, effectiveRetryStrategy, nextRetry, retryDelayMs, type RetryStrategyInput } from '../src/rules/retry.js';

const s = (o: Partial<RetryStrategyInput> = {}): RetryStrategyInput => ({
  type: 'FIXED', baseBackoffSeconds: 10, maxRetries: 3, maxDurationSeconds: 600, sameRegion: true, onlyOn: [], ...o,
});

describe('retry backoff', () => {
  it('FIXED base, LINEAR base*n, EXPONENTIAL base^n seconds, SINGLE_RETRY base', () => {
    expect([1, 2, 3].map((n) => retryDelayMs(s(), n))).toEqual([10_000, 10_000, 10_000]);
    expect([1, 2, 3].map((n) => retryDelayMs(s({ type: 'LINEAR' }), n))).toEqual([10_000, 20_000, 30_000]);
    expect([1, 2, 3].map((n) => retryDelayMs(s({ type: 'EXPONENTIAL', baseBackoffSeconds: 2 }), n))).toEqual([2_000, 4_000, 8_000]);
    expect(retryDelayMs(s({ type: 'SINGLE_RETRY', baseBackoffSeconds: 5 }), 1)).toBe(5_000);
  });

  it('stops exactly at maxRetries', () => {
    const base = { elapsedMs: 0, failureKind: 'ASSERTION' as const };
    expect(nextRetry(s(), { ...base, retriesSoFar: 2 })).toEqual({ retry: true, delayMs: 10_000, sameRegion: true });
    expect(nextRetry(s(), { ...base, retriesSoFar: 3 })).toMatchObject({ retry: false, reason: 'maxRetries reached' });
    expect(nextRetry(s({ type: 'SINGLE_RETRY', maxRetries: 5 }), { ...base, retriesSoFar: 1 }).retry).toBe(false);
  });

  it('stops when the next wait would pass maxDurationSeconds, not when it reaches it', () => {
    const strategy = s({ maxDurationSeconds: 30 });
    expect(nextRetry(strategy, { retriesSoFar: 0, elapsedMs: 20_000, failureKind: 'OTHER' }).retry).toBe(true);
    expect(nextRetry(strategy, { retriesSoFar: 0, elapsedMs: 20_001, failureKind: 'OTHER' })).toMatchObject({ retry: false, reason: 'maxDurationSeconds reached' });
  });

  it('onlyOn NETWORK_ERROR retries network errors and timeouts only', () => {
    const strategy = s({ onlyOn: ['NETWORK_ERROR'], sameRegion: false });
    const at = (failureKind: 'NETWORK_ERROR' | 'TIMEOUT' | 'ASSERTION' | 'OTHER') => nextRetry(strategy, { retriesSoFar: 0, elapsedMs: 0, failureKind });
    expect(at('NETWORK_ERROR')).toEqual({ retry: true, delayMs: 10_000, sameRegion: false });
    expect(at('TIMEOUT').retry).toBe(true);
    expect(at('ASSERTION').retry).toBe(false);
    expect(at('OTHER').retry).toBe(false);
  });

  it('EXPONENTIAL with base 0 never waits and with base 1 always waits one second', () => {
    expect([1, 2, 5].map((n) => retryDelayMs(s({ type: 'EXPONENTIAL', baseBackoffSeconds: 0 }), n))).toEqual([0, 0, 0]);
    expect([1, 2, 5].map((n) => retryDelayMs(s({ type: 'EXPONENTIAL', baseBackoffSeconds: 1 }), n))).toEqual([1_000, 1_000, 1_000]);
    expect(retryDelayMs(s({ type: 'LINEAR', baseBackoffSeconds: 0 }), 4)).toBe(0);
  });

  it('the wait of the next retry follows the number of retries so far', () => {
    const state = { elapsedMs: 0, failureKind: 'OTHER' as const };
    expect(nextRetry(s({ type: 'LINEAR' }), { ...state, retriesSoFar: 2 })).toMatchObject({ retry: true, delayMs: 30_000 });
    expect(nextRetry(s({ type: 'EXPONENTIAL', baseBackoffSeconds: 3 }), { ...state, retriesSoFar: 1 })).toMatchObject({ retry: true, delayMs: 9_000 });
    expect(nextRetry(s({ type: 'SINGLE_RETRY', baseBackoffSeconds: 7 }), { ...state, retriesSoFar: 0 })).toMatchObject({ retry: true, delayMs: 7_000 });
  });

  it('maxRetries 1 and 10 at their edges', () => {
    const state = { elapsedMs: 0, failureKind: 'ASSERTION' as const };
    const one = s({ maxRetries: 1, baseBackoffSeconds: 0 });
    expect(nextRetry(one, { ...state, retriesSoFar: 0 }).retry).toBe(true);
    expect(nextRetry(one, { ...state, retriesSoFar: 1 }).retry).toBe(false);
    const ten = s({ maxRetries: 10, baseBackoffSeconds: 0 });
    expect(nextRetry(ten, { ...state, retriesSoFar: 9 }).retry).toBe(true);
    expect(nextRetry(ten, { ...state, retriesSoFar: 10 }).retry).toBe(false);
  });

  it('the duration limit counts the growing waits: EXPONENTIAL hits it exactly, then 1 ms over', () => {
    const strategy = s({ type: 'EXPONENTIAL', baseBackoffSeconds: 2, maxRetries: 10, maxDurationSeconds: 14 });
    // Waits 2 s, 4 s, 8 s: the third ends at 14 s exactly.
    expect(nextRetry(strategy, { retriesSoFar: 2, elapsedMs: 6_000, failureKind: 'OTHER' })).toMatchObject({ retry: true, delayMs: 8_000 });
    expect(nextRetry(strategy, { retriesSoFar: 2, elapsedMs: 6_001, failureKind: 'OTHER' }).retry).toBe(false);
    expect(nextRetry(s({ maxDurationSeconds: 0, baseBackoffSeconds: 0 }), { retriesSoFar: 0, elapsedMs: 0, failureKind: 'OTHER' }).retry).toBe(true);
    expect(nextRetry(s({ maxDurationSeconds: 0, baseBackoffSeconds: 1 }), { retriesSoFar: 0, elapsedMs: 0, failureKind: 'OTHER' }).retry).toBe(false);
  });

  it('without onlyOn every kind of failure is retried', () => {
    for (const failureKind of ['NETWORK_ERROR', 'TIMEOUT', 'ASSERTION', 'OTHER'] as const) {
      expect(nextRetry(s(), { retriesSoFar: 0, elapsedMs: 0, failureKind }).retry).toBe(true);
    }
    expect(nextRetry(s({ onlyOn: ['NETWORK_ERROR'] }), { retriesSoFar: 0, elapsedMs: 0, failureKind: 'ASSERTION' }))
      .toEqual({ retry: false, reason: 'retries only on network errors' });
  });

  it('no strategy, no retry', () => {
    expect(nextRetry(null, { retriesSoFar: 0, elapsedMs: 0, failureKind: 'NETWORK_ERROR' })).toEqual({ retry: false, reason: 'no retry strategy' });
  });

  it('the effective strategy: the group\'s own, else the check\'s, else doubleCheck\'s single retry', () => {
    const mine = s({ type: 'LINEAR' });
    const groups = s({ type: 'EXPONENTIAL' });
    expect(effectiveRetryStrategy({ retryStrategy: mine, doubleCheck: true }, { retryStrategy: groups })).toBe(groups);
    expect(effectiveRetryStrategy({ retryStrategy: mine, doubleCheck: true }, { retryStrategy: 'FALLBACK' })).toBe(mine);
    expect(effectiveRetryStrategy({ retryStrategy: mine, doubleCheck: false }, { retryStrategy: null })).toBe(mine);
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: true })).toBe(DOUBLE_CHECK_STRATEGY);
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: false }, null)).toBeNull();
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: true }, { retryStrategy: groups })).toBe(groups);
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: true }, {})).toBe(DOUBLE_CHECK_STRATEGY);
    expect(effectiveRetryStrategy({ retryStrategy: null, doubleCheck: false }, { retryStrategy: 'FALLBACK' })).toBeNull();
    expect(DOUBLE_CHECK_STRATEGY).toEqual({
      type: 'SINGLE_RETRY', baseBackoffSeconds: 0, maxRetries: 1, maxDurationSeconds: 600, sameRegion: false, onlyOn: [],
    });
  });
});
