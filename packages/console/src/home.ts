import type { Check, CheckGroup, CheckStatus, CheckStatusResponse, Vigil } from '@vigil/core';
import type { PastHours } from './past-hours.js';

const HOUR_MS = 3_600_000;

/** What a check is doing now: its runs' verdict, unless it does not run. */
export type CheckState = 'FAILING' | 'DEGRADED' | 'PENDING' | 'PASSING' | 'MAINTENANCE' | 'INACTIVE';

const LABELS: Record<CheckState, string> = {
  FAILING: 'Failing', DEGRADED: 'Degraded', PENDING: 'No runs yet', PASSING: 'Passing', MAINTENANCE: 'Paused by maintenance', INACTIVE: 'Inactive',
};
const ORDER: CheckState[] = ['FAILING', 'DEGRADED', 'PENDING', 'PASSING', 'MAINTENANCE', 'INACTIVE'];

/** The home page's state filter: a state, or `muted` (alerts off, whatever the state). */
export const STATE_FILTERS = [
  { value: 'failing', label: 'Failing' },
  { value: 'degraded', label: 'Degraded' },
  { value: 'passing', label: 'Passing' },
  { value: 'pending', label: 'No runs yet' },
  { value: 'muted', label: 'Muted' },
  { value: 'maintenance', label: 'Paused by maintenance' },
  { value: 'inactive', label: 'Inactive' },
] as const;

export interface HomeFilters {
  q?: string;
  tag?: string;
  type?: string;
  state?: string;
  group?: string;
}

export interface HomeRow {
  id: string;
  name: string;
  checkType: string;
  tags: string[];
  groupId: string;
  state: CheckState;
  muted: boolean;
  stateLabel: string;
  stateClass: string;
  lastRunAt: string | null;
  /** Percent of the last 24 hours' runs that passed; null without runs. */
  availability: number | null;
  /** Mean response time over the last 24 hours. */
  avg: number | null;
  /** Mean response time per hour of the last 24 hours, oldest first (null: no runs that hour). */
  spark: (number | null)[];
}

export interface HomeView {
  rows: HomeRow[];
  filtered: boolean;
  options: { tags: string[]; types: string[]; groups: { id: string; name: string }[]; states: typeof STATE_FILTERS };
}

type StateInputs = Pick<Check, 'activated' | 'muted'>;

/**
 * What a check is doing now, as the list and the check's page both show it: inactive (itself or
 * its group), paused by a maintenance window, or its runs' verdict; muted (itself or its group)
 * beside that.
 */
export function liveState(check: StateInputs, group: Pick<CheckGroup, 'activated' | 'muted'> | undefined, stored: CheckStatus | CheckStatusResponse | null | undefined, paused: boolean) {
  // A check gets a status when it is created; it has run once the status was written again.
  const status = stored && (stored.updated_at !== null || stored.lastCheckRunId !== null) ? stored : undefined;
  let state: CheckState;
  if (!check.activated || group?.activated === false) state = 'INACTIVE';
  else if (paused) state = 'MAINTENANCE';
  else if (!status) state = 'PENDING';
  else if (status.hasFailures || status.hasErrors) state = 'FAILING';
  else state = status.isDegraded ? 'DEGRADED' : 'PASSING';
  const muted = check.muted || group?.muted === true;
  return {
    state,
    muted,
    stateLabel: muted ? `${LABELS[state]} · muted` : LABELS[state],
    stateClass: state.toLowerCase(),
    lastRunAt: status ? (status.updated_at ?? status.created_at) : null,
  };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v.slice(0, 200) : undefined);

export function homeFilters(query: Record<string, unknown>): HomeFilters {
  return { q: text(query.q), tag: text(query.tag), type: text(query.type), state: text(query.state), group: text(query.group) };
}

function matches(row: HomeRow, f: HomeFilters): boolean {
  if (f.q && !row.name.toLowerCase().includes(f.q.toLowerCase())) return false;
  if (f.tag && !row.tags.includes(f.tag)) return false;
  if (f.type && row.checkType !== f.type) return false;
  if (f.group && row.groupId !== f.group) return false;
  if (f.state) return f.state === 'muted' ? row.muted : row.state === f.state.toUpperCase();
  return true;
}

/**
 * Every check of an account with its live state, last run, and the last 24 hours' availability
 * and hourly mean response time: five reads (checks, groups, statuses, maintenance windows, the
 * account's hourly figures, of which the ended hours are kept a minute), whatever the number of checks.
 */
export async function homeView(vigil: Vigil, pastHours: PastHours, accountId: string, filters: HomeFilters): Promise<HomeView> {
  const now = vigil.deps.clock.now();
  const to = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
  const from = new Date(to.getTime() - 24 * HOUR_MS);
  const [checks, groups, statuses, maintenance] = await Promise.all([
    vigil.storage.checks.listAll(accountId),
    vigil.storage.checkGroups.listAll(accountId),
    vigil.checkStatuses.list(accountId),
    vigil.maintenanceWindows.effectsAt(accountId, now),
  ]);
  const aggregates = await pastHours.rows(accountId, checks.map((c) => c.id), from, to);
  const groupById = new Map(groups.map((g) => [g.id, g]));
  const statusById = new Map(statuses.map((s) => [s.checkId, s]));
  const hoursById = new Map<string, { count: number; failures: number; spark: (number | null)[]; sum: number; runs: number }>();
  for (const r of aggregates) {
    let h = hoursById.get(r.checkId);
    if (!h) hoursById.set(r.checkId, (h = { count: 0, failures: 0, spark: Array<number | null>(24).fill(null), sum: 0, runs: 0 }));
    h.count += r.count;
    h.failures += r.failures;
    const slot = Math.floor((Date.parse(r.bucketStart) - from.getTime()) / HOUR_MS);
    const avg = r.values.avg ?? null;
    if (slot >= 0 && slot < 24 && avg !== null) {
      h.spark[slot] = Math.round(avg);
      h.sum += avg * r.count;
      h.runs += r.count;
    }
  }
  const rows = checks.map((c): HomeRow => {
    const group = c.groupId === null ? undefined : groupById.get(c.groupId);
    const stored = statusById.get(c.id);
    const h = hoursById.get(c.id);
    const effect = maintenance({ tags: c.tags, groupTags: group?.tags ?? [] });
    return {
      id: c.id,
      name: c.name,
      checkType: c.checkType,
      tags: c.tags,
      groupId: c.groupId === null ? '' : String(c.groupId),
      ...liveState(c, group, stored, effect.paused),
      availability: h && h.count > 0 ? Math.round(((h.count - h.failures) / h.count) * 10_000) / 100 : null,
      avg: h && h.runs > 0 ? Math.round(h.sum / h.runs) : null,
      spark: h?.spark ?? Array<number | null>(24).fill(null),
    };
  });
  rows.sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state) || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const filtered = Object.values(filters).some((v) => v !== undefined);
  return {
    rows: filtered ? rows.filter((r) => matches(r, filters)) : rows,
    filtered,
    options: {
      tags: [...new Set(checks.flatMap((c) => c.tags))].sort(),
      types: [...new Set(checks.map((c) => c.checkType))].sort(),
      groups: groups.map((g) => ({ id: String(g.id), name: g.name })).sort((a, b) => a.name.localeCompare(b.name)),
      states: STATE_FILTERS,
    },
  };
}
