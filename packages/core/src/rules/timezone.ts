/**
 * Wall-clock time in an IANA zone, converted with Intl alone (no time-zone library). A wall time
 * is held as "local milliseconds": the wall clock's fields read as if they were UTC, so calendar
 * arithmetic on it is plain UTC arithmetic.
 */
export type CalendarUnit = 'DAY' | 'WEEK' | 'MONTH';

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric',
      hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The zone's offset from UTC at an instant, in milliseconds (east positive). */
export function zoneOffsetMs(instant: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const wholeSecond = instant - (((instant % 1000) + 1000) % 1000);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - wholeSecond;
}

/** The wall clock of the zone at an instant, as local milliseconds. */
export function toLocalMs(instant: number, zone: string): number {
  return instant + zoneOffsetMs(instant, zone);
}

/**
 * The instant a wall-clock time names. An ambiguous one (clocks turned back) takes the earlier
 * instant; one that does not exist (clocks turned forward) takes the first instant after the gap.
 */
export function fromLocalMs(local: number, zone: string): number {
  // Offsets a day either side bracket any transition near this wall time.
  const before = local - zoneOffsetMs(local - DAY_MS, zone);
  const after = local - zoneOffsetMs(local + DAY_MS, zone);
  const exact = [before, after].filter((t) => toLocalMs(t, zone) === local);
  if (exact.length > 0) return Math.min(...exact);
  // In a gap the wall clock at `after` is still short of `local` and at `before` already past it;
  // the transition is the first instant whose wall clock is past it.
  let lo = Math.min(before, after);
  let hi = Math.max(before, after);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (toLocalMs(mid, zone) > local) hi = mid;
    else lo = mid;
  }
  return hi;
}

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

/** Adds whole days, weeks or months to a wall time; months clamp the day (Jan 31 + 1 month = Feb 28/29). */
export function addCalendar(local: number, unit: CalendarUnit, amount: number): number {
  if (unit !== 'MONTH') return local + amount * (unit === 'WEEK' ? 7 : 1) * DAY_MS;
  const d = new Date(local);
  const index = d.getUTCFullYear() * 12 + d.getUTCMonth() + amount;
  const year = Math.floor(index / 12);
  const month = index - year * 12;
  const timeOfDay = local - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Date.UTC(year, month, Math.min(d.getUTCDate(), daysInMonth(year, month))) + timeOfDay;
}

/** Whole calendar months from one wall time's month to another's (the day of month ignored). */
export function monthsBetween(fromLocal: number, toLocal: number): number {
  const a = new Date(fromLocal);
  const b = new Date(toLocal);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + (b.getUTCMonth() - a.getUTCMonth());
}
