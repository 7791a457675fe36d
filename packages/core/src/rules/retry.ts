export interface RetryStrategyInput {
  type: 'FIXED' | 'LINEAR' | 'EXPONENTIAL' | 'SINGLE_RETRY';
  baseBackoffSeconds: number;
  maxRetries: number;
  maxDurationSeconds: number;
  sameRegion: boolean;
  onlyOn: readonly string[];
}

export type RetryFailureKind = 'NETWORK_ERROR' | 'ASSERTION' | 'TIMEOUT' | 'OTHER';

/** The wait before retry n (1, 2, ...): FIXED base, LINEAR base*n, EXPONENTIAL base^n seconds. */
export function retryDelayMs(strategy: RetryStrategyInput, n: number): number {
  const base = strategy.baseBackoffSeconds;
  switch (strategy.type) {
    case 'LINEAR':
      return base * n * 1000;
    case 'EXPONENTIAL':
      return base ** n * 1000;
    default:
      return base * 1000;
  }
}

export type RetryDecision =
  | { retry: false; reason: string }
  | { retry: true; delayMs: number; sameRegion: boolean };

/** Whether a failed attempt is retried, and after how long. */
export function nextRetry(
  strategy: RetryStrategyInput | null,
  state: { retriesSoFar: number; elapsedMs: number; failureKind: RetryFailureKind },
): RetryDecision {
  if (!strategy) return { retry: false, reason: 'no retry strategy' };
  const network = state.failureKind === 'NETWORK_ERROR' || state.failureKind === 'TIMEOUT';
  if (strategy.onlyOn.includes('NETWORK_ERROR') && !network) return { retry: false, reason: 'retries only on network errors' };
  const max = strategy.type === 'SINGLE_RETRY' ? 1 : strategy.maxRetries;
  if (state.retriesSoFar >= max) return { retry: false, reason: 'maxRetries reached' };
  const delayMs = retryDelayMs(strategy, state.retriesSoFar + 1);
  if (state.elapsedMs + delayMs > strategy.maxDurationSeconds * 1000) return { retry: false, reason: 'maxDurationSeconds reached' };
  return { retry: true, delayMs, sameRegion: strategy.sameRegion };
}

/** What doubleCheck (deprecated) means: one immediate retry, in another region. */
export const DOUBLE_CHECK_STRATEGY: RetryStrategyInput = Object.freeze({
  type: 'SINGLE_RETRY',
  baseBackoffSeconds: 0,
  maxRetries: 1,
  maxDurationSeconds: 600,
  sameRegion: false,
  onlyOn: [],
});

/**
 * The strategy a check runs with: a group's own strategy applies to its members; a group's
 * FALLBACK (or none) leaves the check's; a check with none and doubleCheck gets one retry.
 */
export function effectiveRetryStrategy(
  check: { retryStrategy: RetryStrategyInput | null; doubleCheck: boolean },
  group?: { retryStrategy?: RetryStrategyInput | 'FALLBACK' | null } | null,
): RetryStrategyInput | null {
  const fromGroup = group?.retryStrategy;
  if (fromGroup && fromGroup !== 'FALLBACK') return fromGroup;
  if (check.retryStrategy) return check.retryStrategy;
  return check.doubleCheck ? DOUBLE_CHECK_STRATEGY : null;
}
