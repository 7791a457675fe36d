import { addCalendar, fromLocalMs, monthsBetween, toLocalMs } from './timezone.js';

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

const DAY_MS = 86_400_000;
// The shortest a unit can be on the wall clock; months are estimated from calendar months.
const SHORTEST_UNIT_MS = { DAY: DAY_MS, WEEK: 7 * DAY_MS, MONTH: 28 * DAY_MS } as const;

interface Occurrence {
  start: number;
  end: number;
}

/** A window with its instants parsed and its first occurrence on the wall clock of its zone. */
interface Series {
  window: MaintenanceWindowInput;
  zone: string;
  start: number;
  end: number;
  startLocal: number;
  durationLocal: number;
  interval: number;
  repeatEnds: number | null;
}

function series(w: MaintenanceWindowInput): Series {
  const zone = w.timezone || 'UTC';
  const start = Date.parse(w.startsAt);
  const end = Date.parse(w.endsAt);
  const startLocal = toLocalMs(start, zone);
  const repeatEnds = w.repeatEndsAt === null ? null : Date.parse(w.repeatEndsAt);
  return {
    window: w, zone, start, end, startLocal,
    durationLocal: toLocalMs(end, zone) - startLocal,
    interval: w.repeatInterval ?? 1,
    // A repeat end at or before the start leaves only the first occurrence.
    repeatEnds: repeatEnds !== null && repeatEnds <= start ? start : repeatEnds,
  };
}

/**
 * Occurrence k: the first one moved on by k * repeatInterval units on the wall clock of the
 * window's zone, lasting as long on that wall clock, so 02:00-04:00 stays 02:00-04:00 local
 * across a DST change.
 */
function occurrence(s: Series, k: number): Occurrence {
  if (k === 0) return { start: s.start, end: s.end };
  const startLocal = addCalendar(s.startLocal, s.window.repeatUnit, k * s.interval);
  return { start: fromLocalMs(startLocal, s.zone), end: fromLocalMs(startLocal + s.durationLocal, s.zone) };
}

/**
 * The occurrences that may hold `at` or follow it next: a few around an index computed from the
 * wall clock, never a walk from the first occurrence.
 */
function nearbyOccurrences(s: Series, at: number): Occurrence[] {
  const atLocal = toLocalMs(at, s.zone);
  const estimate = s.window.repeatUnit === 'MONTH'
    ? Math.floor(monthsBetween(s.startLocal, atLocal) / s.interval)
    : Math.floor((atLocal - s.startLocal) / (SHORTEST_UNIT_MS[s.window.repeatUnit] * s.interval));
  // Occurrences that began earlier may still be running when a window outlasts its period.
  const back = Math.ceil(s.durationLocal / (SHORTEST_UNIT_MS[s.window.repeatUnit] * s.interval)) + 1;
  const out: Occurrence[] = [];
  for (let k = Math.max(0, estimate - back); k <= Math.max(0, estimate + 2); k++) {
    const o = occurrence(s, k);
    if (k > 0 && s.repeatEnds !== null && o.start > s.repeatEnds) break;
    out.push(o);
  }
  return out;
}

/** Active on [start, end) of any occurrence. */
export function isWindowActive(w: MaintenanceWindowInput, at: Date): boolean {
  const s = series(w);
  const t = at.getTime();
  if (t < s.start) return false;
  return nearbyOccurrences(s, t).some((o) => o.start <= t && t < o.end);
}

/**
 * The instant from which a window is never in force again: the end of its last occurrence (the
 * last to start at or before repeatEndsAt); null for a window that repeats for ever.
 */
export function maintenanceWindowEndMs(w: Pick<MaintenanceWindowInput, 'startsAt' | 'endsAt' | 'repeatUnit' | 'repeatInterval' | 'repeatEndsAt' | 'timezone'>): number | null {
  if (w.repeatEndsAt === null || w.repeatEndsAt === undefined) return null;
  const s = series({ ...w, id: 0, tags: [], pauseAllChecks: false, silenceAlertsTags: [], silenceAllAlerts: false });
  return Math.max(s.end, ...nearbyOccurrences(s, s.repeatEnds!).map((o) => o.end));
}

export function activeWindows<T extends MaintenanceWindowInput>(windows: readonly T[], at: Date): T[] {
  return windows.filter((w) => isWindowActive(w, at));
}

/** The next instant after `after` at which the window starts or stops; null when it never will. */
export function nextMaintenanceChange(w: MaintenanceWindowInput, after: Date): Date | null {
  const s = series(w);
  const t = after.getTime();
  let best: number | null = null;
  for (const o of nearbyOccurrences(s, Math.max(t, s.start))) {
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
    if (!silences) continue;
    effect.paused ||= pauses;
    effect.silenced ||= silences;
    effect.windowIds.push(w.id);
  }
  return effect;
}
