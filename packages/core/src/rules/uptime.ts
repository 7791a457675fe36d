const DAY_MS = 86_400_000;

/** A span of time a service was down, in epoch milliseconds; `end` null while it still is. */
export interface DownSpan {
  start: number;
  end: number | null;
}

/** One UTC day of a service's history. */
export interface UptimeDay {
  /** The day, `YYYY-MM-DD` (UTC). */
  date: string;
  /** Percent of the day's observed time without a down span (0..100); null before the service existed. */
  uptime: number | null;
  /** Milliseconds of the day inside a down span. */
  downMs: number;
}

/**
 * The last `days` UTC days up to `now`, oldest first: how much of each day lay outside every down
 * span. Overlapping spans count once. A day counts from `since` (the service's creation) and only
 * up to `now`, so today's figure covers the hours so far.
 */
export function dailyUptime(spans: DownSpan[], options: { days: number; now: Date; since: number }): UptimeDay[] {
  const now = options.now.getTime();
  const firstDay = Math.floor(now / DAY_MS) - options.days + 1;
  const merged = mergeSpans(spans.map((s) => ({ start: s.start, end: Math.min(s.end ?? now, now) })).filter((s) => s.end > s.start));
  const out: UptimeDay[] = [];
  for (let d = firstDay; d < firstDay + options.days; d++) {
    const from = Math.max(d * DAY_MS, options.since);
    const to = Math.min((d + 1) * DAY_MS, now);
    const date = new Date(d * DAY_MS).toISOString().slice(0, 10);
    if (to <= from) {
      out.push({ date, uptime: null, downMs: 0 });
      continue;
    }
    let down = 0;
    for (const s of merged) down += Math.max(0, Math.min(s.end, to) - Math.max(s.start, from));
    out.push({ date, uptime: Math.round((1 - down / (to - from)) * 10_000) / 100, downMs: down });
  }
  return out;
}

/** The uptime over all observed days, weighted by each day's observed time; null without any. */
export function overallUptime(days: UptimeDay[], options: { now: Date; since: number }): number | null {
  let observed = 0;
  let down = 0;
  const now = options.now.getTime();
  for (const day of days) {
    if (day.uptime === null) continue;
    const start = Date.parse(`${day.date}T00:00:00.000Z`);
    observed += Math.min(start + DAY_MS, now) - Math.max(start, options.since);
    down += day.downMs;
  }
  return observed > 0 ? Math.round((1 - down / observed) * 100_000) / 1000 : null;
}

function mergeSpans(spans: { start: number; end: number }[]): { start: number; end: number }[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}
