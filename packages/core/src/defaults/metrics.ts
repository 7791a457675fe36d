import type { Metrics } from '../ports/metrics.js';

const noop = () => undefined;
export const noopMetrics: Metrics = {
  counter: () => ({ inc: noop }),
  histogram: () => ({ observe: noop }),
  gauge: () => ({ set: noop }),
};

/** Buckets for durations in seconds, from 5 ms to 5 minutes. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
