/**
 * What a run's response time means for its verdict, one rule for every check type that has a
 * degradedResponseTime and a maxResponseTime (TCP and API checks, and a plugin's own types):
 *
 * - slower than maxResponseTime, the run fails (`overMaxResponseTime`);
 * - a run that passes, and is slower than degradedResponseTime (and not over maxResponseTime), is
 *   degraded. A run that fails is a failure and only that: never also degraded, however slow, so
 *   that a result, the check's status and its alerts say one thing (failing, degraded or passing).
 *
 * "Passes" is the final verdict, after shouldFail has turned it round. Both limits are exclusive:
 * a run of exactly the limit is within it. A limit that is null (or absent) does not apply.
 */
export interface ResponseTimeLimits {
  degradedResponseTime?: number | null;
  maxResponseTime?: number | null;
}

/** True when `responseTime` (ms) is over the check's maxResponseTime, which fails the run. */
export function isOverMaxResponseTime(responseTime: number, maxResponseTime: number | null | undefined): boolean {
  return maxResponseTime !== null && maxResponseTime !== undefined && responseTime > maxResponseTime;
}

/** Whether a run is degraded: it passed (no failure, no error) and was slower than degradedResponseTime, not than maxResponseTime. */
export function isDegradedRun(run: { hasFailures: boolean; hasErrors: boolean; responseTime: number }, limits: ResponseTimeLimits): boolean {
  if (run.hasFailures || run.hasErrors) return false;
  if (isOverMaxResponseTime(run.responseTime, limits.maxResponseTime)) return false;
  const degraded = limits.degradedResponseTime;
  return degraded !== null && degraded !== undefined && run.responseTime > degraded;
}
