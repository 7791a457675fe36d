import { isFinalSessionStatus, type CheckAlert, type CheckResultResponse, type CheckSessionResponse, type ResponseTimePoint, type Vigil } from '@vigil/core';
import { liveState } from './home.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The ranges of a check's chart: window and bucket width (each about a hundred points). */
export const RANGES = {
  '1h': { label: '1 hour', windowMs: HOUR, bucketMs: MINUTE },
  '24h': { label: '24 hours', windowMs: 24 * HOUR, bucketMs: 15 * MINUTE },
  '7d': { label: '7 days', windowMs: 7 * 24 * HOUR, bucketMs: HOUR },
  '30d': { label: '30 days', windowMs: 30 * 24 * HOUR, bucketMs: 6 * HOUR },
} as const;
export type RangeKey = keyof typeof RANGES;

export const rangeOf = (raw: unknown): RangeKey => (typeof raw === 'string' && Object.hasOwn(RANGES, raw) ? (raw as RangeKey) : '24h');

/** Results per page of the results list. */
export const RESULTS_PER_PAGE = 20;

export const pageOf = (raw: unknown): number => {
  const n = typeof raw === 'string' && /^[1-9][0-9]{0,4}$/.test(raw) ? Number(raw) : 1;
  return Math.min(n, 1_000);
};

const round = (n: number | null): number | null => (n === null ? null : Math.round(n));
const pct = (n: number | null): number | null => (n === null ? null : Math.round(n * 100) / 100);

/** A session's state as the page and the progress poll say it. */
export function sessionProgress(session: Pick<CheckSessionResponse, 'status' | 'sequences' | 'results'>): { text: string; final: boolean; status: string } {
  const final = isFinalSessionStatus(session.status);
  const done = session.sequences.filter((s) => isFinalSessionStatus(s.status)).length;
  const total = session.sequences.length;
  const word: Record<string, string> = { STARTED: 'Waiting to run', PROGRESS: 'Running', PASSED: 'Passed', FAILED: 'Failed', DEGRADED: 'Degraded', TIMED_OUT: 'Timed out', CANCELLED: 'Cancelled' };
  const label = word[session.status] ?? session.status;
  const text = final
    ? `Run finished: ${label.toLowerCase()} (${total} location${total === 1 ? '' : 's'}).`
    : `${label}: ${done} of ${total} location${total === 1 ? '' : 's'} done.`;
  return { text, final, status: session.status };
}

interface LogView {
  at: string | null;
  level: string | null;
  text: string;
}

/** Whatever shape a runner's log lines have, as a line of text with its level and time. */
function logLines(raw: unknown): LogView[] {
  if (!Array.isArray(raw)) return [];
  return raw.slice(0, 500).map((line): LogView => {
    if (typeof line === 'string') return { at: null, level: null, text: line };
    const l = (line ?? {}) as Record<string, unknown>;
    const text = typeof l.text === 'string' ? l.text : typeof l.message === 'string' ? l.message : JSON.stringify(line);
    const at = typeof l.at === 'number' ? `+${Math.round(l.at)} ms` : typeof l.at === 'string' ? l.at : null;
    return { at, level: typeof l.level === 'string' ? l.level : null, text };
  });
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** A result's stored artifacts: name, type, size and where the console serves each. */
export function artifactsOf(result: Pick<CheckResultResponse, 'details'>): { name: string; contentType: string; bytes: number; ref: string; image: boolean }[] {
  const raw = result.details?.artifacts;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((a) => {
    const r = (a ?? {}) as Record<string, unknown>;
    if (typeof r.ref !== 'string' || r.ref === '' || typeof r.name !== 'string' || typeof r.contentType !== 'string') return [];
    return [{ name: r.name, contentType: r.contentType, bytes: typeof r.bytes === 'number' ? r.bytes : 0, ref: r.ref, image: IMAGE_TYPES.has(r.contentType) }];
  });
}

function resultView(r: CheckResultResponse) {
  const details = r.details ?? {};
  const { assertions, logs, artifacts: _artifacts, ...rest } = details as Record<string, unknown>;
  const state = r.hasErrors || r.hasFailures ? 'failing' : r.isDegraded ? 'degraded' : 'passing';
  return {
    id: r.id,
    startedAt: r.startedAt,
    runLocation: r.runLocation,
    state,
    stateLabel: state === 'failing' ? (r.hasErrors ? 'Error' : 'Failed') : state === 'degraded' ? 'Degraded' : 'Passed',
    responseTime: r.responseTime,
    attempts: r.attempts,
    resultType: r.resultType,
    runSource: r.runSource,
    errorMessage: r.errorMessage,
    statusCode: r.statusCode,
    phases: Object.entries(r.phases).map(([name, ms]) => ({ name, ms })),
    assertions: Array.isArray(assertions)
      ? assertions.map((a) => {
        const x = (a ?? {}) as Record<string, unknown>;
        return { source: String(x.source ?? ''), property: String(x.property ?? ''), comparison: String(x.comparison ?? ''), target: String(x.target ?? ''), actual: x.actual === null || x.actual === undefined ? '–' : String(x.actual), passed: x.passed === true };
      })
      : [],
    logs: logLines(logs),
    artifacts: artifactsOf(r).map((a, index) => ({ ...a, index })),
    more: Object.keys(rest).length > 0 ? JSON.stringify(rest, null, 2) : null,
  };
}

function alertView(a: CheckAlert) {
  const p = a.payload as Record<string, unknown>;
  return {
    id: a.id,
    alertType: a.alertType,
    channelId: a.alertChannelId,
    channelType: a.channel?.type ?? null,
    // The channel's form in the console (null once the channel is gone).
    channelKey: a.channel ? `alert-channel-${a.channel.type.toLowerCase().replace(/_/g, '-')}` : null,
    created_at: a.created_at,
    state: a.state.toLowerCase().replace('_', '-'),
    stateLabel: a.state === 'DELIVERED' ? 'Delivered' : a.state === 'PENDING' ? 'Being sent' : 'Not delivered',
    reminder: p.isReminder === true,
    errorMessage: typeof p.errorMessage === 'string' ? p.errorMessage : null,
    runLocation: typeof p.runLocation === 'string' ? p.runLocation : null,
    log: a.log,
  };
}

/**
 * Everything a check's page shows, read for the signed-in account: the check (404 for another
 * account's, as for an unknown id), its status, the range's chart and figures, runs per location,
 * a page of results, its error groups and its alert history.
 */
export async function checkView(vigil: Vigil, accountId: string, checkId: string, options: { range: RangeKey; page: number }) {
  const check = await vigil.checks.get(accountId, checkId);
  const range = RANGES[options.range];
  const now = vigil.deps.clock.now().getTime();
  const to = new Date(Math.ceil((now + 1) / range.bucketMs) * range.bucketMs);
  const from = new Date(to.getTime() - range.windowMs);
  const [status, series, whole, byLocation, results, errorGroups, alerts] = await Promise.all([
    vigil.checkStatuses.get(accountId, check.id),
    vigil.analytics.responseTimes(accountId, check.id, { from, to, bucketMs: range.bucketMs }),
    vigil.analytics.responseTimes(accountId, check.id, { from, to, bucketMs: null }),
    vigil.analytics.responseTimes(accountId, check.id, { from, to, bucketMs: null, byLocation: true }),
    // Each run once, as it ended: a retried run's earlier attempts are inside it (its attempt count).
    vigil.checkResults.list(accountId, check.id, { limit: String(RESULTS_PER_PAGE), page: String(options.page), resultType: 'FINAL' }),
    vigil.errorGroups.listByCheck(accountId, check.id, { limit: '100' }),
    vigil.alertChannels.checkAlerts(accountId, check.id, { limit: '50' }),
  ]);
  const total: ResponseTimePoint | undefined = whole.points[0];
  // The same state as the check list shows: the group's switches and maintenance count.
  const group = check.groupId === null ? undefined : await vigil.storage.checkGroups.get(accountId, check.groupId) ?? undefined;
  const effect = await vigil.maintenanceWindows.activeEffect(accountId, { tags: check.tags, groupTags: group?.tags ?? [] }, new Date(now));
  const live = liveState(check, group, status, effect.paused);
  return {
    check: {
      id: check.id,
      name: check.name,
      checkType: check.checkType,
      activated: check.activated,
      muted: check.muted,
      frequency: check.frequency,
      locations: check.locations,
      tags: check.tags,
    },
    state: live.stateClass,
    stateLabel: live.stateLabel,
    lastRunAt: live.lastRunAt,
    figures: {
      runs: total?.runs ?? 0,
      failures: total?.failures ?? 0,
      availability: pct(total?.availability ?? null),
      p50: round(total?.p50 ?? null),
      p95: round(total?.p95 ?? null),
      p99: round(total?.p99 ?? null),
      approximate: whole.approximate || series.approximate,
    },
    chart: {
      // The window in epoch seconds: the x axis spans the whole range even with one point in it.
      from: Math.floor(from.getTime() / 1000),
      to: Math.floor(to.getTime() / 1000),
      t: series.points.map((p) => Date.parse(p.startedAt) / 1000),
      p50: series.points.map((p) => round(p.p50)),
      p95: series.points.map((p) => round(p.p95)),
      p99: series.points.map((p) => round(p.p99)),
    },
    locations: byLocation.points.map((p) => ({
      runLocation: p.runLocation ?? '–', runs: p.runs, failures: p.failures, availability: pct(p.availability), p50: round(p.p50), p95: round(p.p95),
    })),
    results: results.items.map(resultView),
    pages: {
      page: options.page,
      prev: options.page > 1 ? options.page - 1 : null,
      next: results.offset + results.items.length < results.total ? options.page + 1 : null,
      total: results.total,
    },
    errorGroups: errorGroups.map((g) => ({
      id: g.id,
      message: g.cleanedErrorMessage,
      firstSeen: g.firstSeen,
      lastSeen: g.lastSeen,
      archived: g.archivedUntilNextEvent || g.archivedForever,
    })),
    alerts: alerts.map(alertView),
  };
}
