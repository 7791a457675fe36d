/** Wall-clock time in an IANA zone, converted with Intl alone (no time-zone library). */
export interface WallTime {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

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

export function toWallTime(instant: number, zone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!,
    second: parts.second!, millisecond: ((instant % 1000) + 1000) % 1000,
  };
}

function wallAsUtc(w: WallTime): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);
}

/** The zone's offset from UTC at an instant, in milliseconds. */
export function zoneOffsetMs(instant: number, zone: string): number {
  return wallAsUtc(toWallTime(instant, zone)) - instant;
}

/**
 * The instant of a wall-clock time. An ambiguous time (clocks turned back) takes the earlier
 * instant; a time that does not exist (clocks turned forward) moves forward by the gap, as
 * Temporal's "compatible" disambiguation does.
 */
export function fromWallTime(w: WallTime, zone: string): number {
  const guess = wallAsUtc(w);
  const before = zoneOffsetMs(guess - 86_400_000, zone);
  const after = zoneOffsetMs(guess + 86_400_000, zone);
  const candidates = [guess - before, guess - after].filter((t) => wallAsUtc(toWallTime(t, zone)) === guess);
  if (candidates.length > 0) return Math.min(...candidates);
  return guess - before;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Adds whole days or months to a wall time; months clamp the day (Jan 31 + 1 month = Feb 28/29). */
export function addToWallTime(w: WallTime, unit: 'DAY' | 'WEEK' | 'MONTH', amount: number): WallTime {
  if (unit === 'MONTH') {
    const index = w.year * 12 + (w.month - 1) + amount;
    const year = Math.floor(index / 12);
    const month = (index % 12) + 1;
    return { ...w, year, month, day: Math.min(w.day, daysInMonth(year, month)) };
  }
  const days = unit === 'WEEK' ? amount * 7 : amount;
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}
