import { heartbeatSeconds, type HeartbeatCheck } from '../model/check.js';
import { HeartbeatAvailabilityQuerySchema, type HeartbeatAvailability } from '../model/heartbeat-availability.js';
import { parse } from '../model/parse.js';
import { noopMetrics } from '../defaults/metrics.js';
import type { CounterMetric, MetricSpec } from '../ports/metrics.js';
import type { HeartbeatPing } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';
import { found, notFound, stringId } from './support.js';

const DAY = 86_400_000;

/** How long after one ping the next must arrive: period plus grace. */
export function heartbeatDeadlineMs(check: HeartbeatCheck): number {
  const h = check.heartbeat;
  return (heartbeatSeconds(h.period, h.periodUnit) + heartbeatSeconds(h.grace, h.graceUnit)) * 1000;
}

/** Percent of the window's expected periods that saw at least one ping. */
function coverage(pings: readonly HeartbeatPing[], from: number, to: number, periodMs: number): number {
  const slots = Math.max(1, Math.ceil((to - from) / periodMs));
  const hit = new Set(pings.map((p) => Math.floor((Date.parse(p.at) - from) / periodMs)).filter((i) => i >= 0 && i < slots));
  return Math.round((hit.size / slots) * 10_000) / 100;
}

export const HEARTBEAT_PINGS_METRIC = {
  name: 'vigil_heartbeat_pings_total',
  help: 'Heartbeat pings received, by result: recorded, or unknown (no heartbeat check has the token)',
  labelNames: ['result'],
} as const satisfies MetricSpec;

export class HeartbeatService {
  private readonly pings: CounterMetric;

  constructor(private readonly deps: ServiceDeps) {
    this.pings = (deps.metrics ?? noopMetrics).counter(HEARTBEAT_PINGS_METRIC);
  }

  /** GET|POST /ping/{token}: records a ping for the heartbeat check owning the token. */
  async ping(rawToken: unknown, source: string | null = null): Promise<{ checkId: string; at: string }> {
    const token = stringId(rawToken, 'token');
    const check = await this.deps.storage.checks.findByPingToken(token);
    if (!check || check.checkType !== 'HEARTBEAT') {
      this.pings.inc({ result: 'unknown' });
      throw notFound('Heartbeat');
    }
    const at = this.deps.clock.now().toISOString();
    await this.deps.storage.heartbeats.recordPing(check.accountId, { checkId: check.id, at, source });
    this.pings.inc({ result: 'recorded' });
    return { checkId: check.id, at };
  }

  private async heartbeatCheck(accountId: string, rawCheckId: unknown): Promise<HeartbeatCheck> {
    const check = found(await this.deps.storage.checks.get(accountId, stringId(rawCheckId, 'checkId')), 'Check');
    if (check.checkType !== 'HEARTBEAT') throw notFound('Heartbeat check');
    return check;
  }

  /** GET /v1/checks/heartbeats/{checkId}/availability. */
  async availability(accountId: string, rawCheckId: unknown, rawQuery: unknown): Promise<HeartbeatAvailability> {
    const check = await this.heartbeatCheck(accountId, rawCheckId);
    const q = parse(HeartbeatAvailabilityQuerySchema, rawQuery ?? {}, 'query');
    const now = this.deps.clock.now().getTime();
    const to = q.endTime ? Date.parse(q.endTime) : now;
    const from = q.startTime ? Date.parse(q.startTime) : to - DAY;
    if (Date.parse(check.created_at) > to) return null;
    const span = to - from;
    const period = heartbeatDeadlineMs(check);
    const current = await this.deps.storage.heartbeats.listPings(accountId, check.id, new Date(from), new Date(to));
    const previous = await this.deps.storage.heartbeats.listPings(accountId, check.id, new Date(from - span), new Date(from));
    return {
      successRatio: {
        previousPeriod: coverage(previous, from - span, from, period),
        currentPeriod: coverage(current, from, to, period),
      },
      totalEntitiesCurrentPeriod: current.length,
    };
  }

  /** Whether a heartbeat is overdue at `now` (for the engine). */
  async evaluate(accountId: string, checkId: string, now: Date): Promise<{ failing: boolean; lastPingAt: string | null; deadline: string }> {
    const check = await this.heartbeatCheck(accountId, checkId);
    const last = await this.deps.storage.heartbeats.lastPing(accountId, check.id);
    const since = Date.parse(last?.at ?? check.created_at);
    const deadline = new Date(since + heartbeatDeadlineMs(check));
    return { failing: now >= deadline, lastPingAt: last?.at ?? null, deadline: deadline.toISOString() };
  }
}
