import type { Runner, RunResult } from '../ports/runner.js';
import type { ServiceDeps } from '../services/deps.js';
import { heartbeatDeadlineMs } from '../services/heartbeats.js';

/**
 * Vigil's own runner of HEARTBEAT checks: a run looks at the last ping. The check fails when no
 * ping arrived within period + grace (counted from its creation until the first ping).
 */
export function heartbeatRunner(deps: ServiceDeps): Runner {
  return {
    checkType: 'HEARTBEAT',
    async run(job): Promise<RunResult> {
      const check = job.check;
      if (check.checkType !== 'HEARTBEAT') throw new Error('heartbeatRunner runs HEARTBEAT checks only');
      const now = deps.clock.now().getTime();
      const last = await deps.storage.heartbeats.lastPing(job.accountId, check.id);
      const since = last ? Date.parse(last.at) : Date.parse(check.created_at);
      const silentMs = Math.max(0, now - since);
      const late = silentMs > heartbeatDeadlineMs(check);
      const minutes = Math.round(silentMs / 60_000);
      return {
        hasFailures: late,
        hasErrors: false,
        isDegraded: false,
        overMaxResponseTime: false,
        responseTime: 0,
        phases: {},
        errorMessage: late
          ? last
            ? `No ping for ${minutes} minutes (the last one at ${last.at}); expected within ${check.heartbeat.period} ${check.heartbeat.periodUnit} plus ${check.heartbeat.grace} ${check.heartbeat.graceUnit} of grace`
            : `No ping since the check was created ${minutes} minutes ago`
          : null,
        failureKind: late ? 'ASSERTION' : null,
        details: { lastPingAt: last?.at ?? null },
      };
    },
  };
}
