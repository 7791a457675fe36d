import { addToWallTime, fromWallTime, toWallTime } from './timezone.js';

export interface MaintenanceWindowInput {
  id: number;
  startsAt: string;
  endsAt: string;
  repeatUnit: 'DAY' | 'WEEK' | 'MONTH';
  /** Null means every single unit. */
  repeatInterval: number | null;
  repeatEndsAt: string | null;
  timezone?: string | null;
  tags: readonly string[];
  pauseAllChecks: boolean;
  silenceAlertsTags: readonly string[];
  silenceAllAlerts: boolean;
}

const UNIT_MS = { DAY: 86_400_000, WEEK: 7 * 86_400_000, MONTH: 28 * 86_400_000 } as const;

interface Occurrence {
  start: number;
  end: number;
}

/**
 * Occurrence k of a window: the first one moved on by k * repeatInterval units on the wall clock
 * of the window's zone, so a 02:00-04:00 window stays 02:00-04:00 local across a DST change.
 */
function occurrence(w: MaintenanceWindowInput, k: number): Occurrence {
  const zone = w.timezone || 'UTC';
  const step = k * (w.repeatInterval ?? 1);
  const start = Date.parse(w.startsAt);
  const end = Date.parse(w.endsAt);
  if (step === 0) return { start, end };
  return {
    start: fromWallTime(addToWallTime(toWallTime(start, zone), w.repeatUnit, step), zone),
    end: fromWallTime(addToWallTime(toWallTime(end, zone), w.repeatUnit, step), zone),
  };
}

/** The occurrence numbers that may hold `at`, or follow it closely: a few around an estimate. */
function candidateIndexes(w: MaintenanceWindowInput, at: number): number[] {
  const start = Date.parse(w.startsAt);
  const period = UNIT_MS[w.repeatUnit] * (w.repeatInterval ?? 1);
  const repeatEnds = w.repeatEndsAt === null ? null : Date.parse(w.repeatEndsAt);
  if (repeatEnds !== null && repeatEnds <= start) return [0];
  // Months are estimated with 28 days, so the estimate is never past the real index.
  const estimate = Math.floor((at - start) / period);
  const back = Math.ceil((Date.parse(w.endsAt) - start) / period) + 2;
  const out: number[] = [];
  for (let k = Math.max(0, estimate - back); k <= Math.max(0, estimate) + 2; k++) {
    if (k > 0 && repeatEnds !== null && occurrence(w, k).start > repeatEnds) break;
    out.push(k);
  }
  return out;
}

/** Active on [start, end) of any occurrence. */
export function isWindowActive(w: MaintenanceWindowInput, at: Date): boolean {
  const t = at.getTime();
  if (t < Date.parse(w.startsAt)) return false;
  return candidateIndexes(w, t).some((k) => {
    const o = occurrence(w, k);
    return o.start <= t && t < o.end;
  });
}

export function activeWindows<T extends MaintenanceWindowInput>(windows: readonly T[], at: Date): T[] {
  return windows.filter((w) => isWindowActive(w, at));
}

/** The next instant after `after` at which the window starts or stops; null when it never will. */
export function nextMaintenanceChange(w: MaintenanceWindowInput, after: Date): Date | null {
  const t = after.getTime();
  const from = Math.max(t, Date.parse(w.startsAt) - 1);
  let best: number | null = null;
  for (const k of candidateIndexes(w, from)) {
    const o = occurrence(w, k);
    for (const edge of [o.start, o.end]) {
      if (edge > t && (best === null || edge < best)) best = edge;
    }
  }
  return best === null ? null : new Date(best);
}

export interface MaintenanceTarget {
  tags: readonly string[];
  groupTags?: readonly string[];
}

export interface MaintenanceEffect {
  paused: boolean;
  silenced: boolean;
  windowIds: number[];
}

const intersects = (a: readonly string[], b: ReadonlySet<string>) => a.some((x) => b.has(x));

/**
 * What the active windows do to one check: paused when a window pauses all checks or names one of
 * the check's (or its group's) tags; silenced when paused, or a window silences all alerts or
 * names one of those tags in silenceAlertsTags.
 */
export function maintenanceEffect(windows: readonly MaintenanceWindowInput[], target: MaintenanceTarget, at: Date): MaintenanceEffect {
  const tags = new Set([...target.tags, ...(target.groupTags ?? [])]);
  const effect: MaintenanceEffect = { paused: false, silenced: false, windowIds: [] };
  for (const w of activeWindows(windows, at)) {
    const pauses = w.pauseAllChecks || intersects(w.tags, tags);
    const silences = pauses || w.silenceAllAlerts || intersects(w.silenceAlertsTags, tags);
    if (!pauses && !silences) continue;
    effect.paused ||= pauses;
    effect.silenced ||= silences;
    effect.windowIds.push(w.id);
  }
  return effect;
}
