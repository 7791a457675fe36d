import * as v from 'valibot';
import { ValidationError } from '../errors.js';
import { isIsoDateOrDateTime } from './primitives.js';

/** from/to of analytics and reporting: ISO 8601, or unix seconds (docs/decisions.md "dates"). */
export const WindowBoundSchema = v.pipe(
  v.union([v.string(), v.number()], 'must be an ISO 8601 date or unix seconds'),
  v.check(
    (x) => (typeof x === 'number' ? Number.isFinite(x) && x >= 0 : /^\d{1,12}$/.test(x) || isIsoDateOrDateTime(x)),
    'must be an ISO 8601 date or unix seconds',
  ),
  v.transform((x) => (typeof x === 'number' || /^\d+$/.test(x) ? new Date(Number(x) * 1000) : new Date(x)).toISOString()),
);

/** A list in a query string: repeated values or one comma-separated string. */
export function queryList<T extends v.GenericSchema<string>>(item: T) {
  return v.pipe(
    v.union([v.string(), v.array(v.string())]),
    v.transform((x) => (Array.isArray(x) ? x : [x]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean)),
    v.array(item),
  );
}

const DAY = 86_400_000;

function startOfUtcDay(t: Date): Date {
  return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
}

/** Monday 00:00 UTC of the week holding `t`. */
function startOfUtcWeek(t: Date): Date {
  const day = startOfUtcDay(t);
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * DAY);
}

function startOfUtcMonth(t: Date, monthOffset = 0): Date {
  return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + monthOffset, 1));
}

/** The window a quick range names at `now` (weeks start on Monday, all in UTC). */
export function quickRangeWindow(range: string, now: Date): { from: Date; to: Date } {
  switch (range) {
    case 'last7Days':
      return { from: new Date(now.getTime() - 7 * DAY), to: now };
    case 'last30Days':
      return { from: new Date(now.getTime() - 30 * DAY), to: now };
    case 'thisWeek':
      return { from: startOfUtcWeek(now), to: now };
    case 'lastWeek': {
      const to = startOfUtcWeek(now);
      return { from: new Date(to.getTime() - 7 * DAY), to };
    }
    case 'thisMonth':
      return { from: startOfUtcMonth(now), to: now };
    case 'lastMonth':
      return { from: startOfUtcMonth(now, -1), to: startOfUtcMonth(now) };
    default: // last24Hours / last24Hrs
      return { from: new Date(now.getTime() - DAY), to: now };
  }
}

/** from/to override the quick range (each on its own); `to` must not be before `from`. */
export function resolveTimeWindow(
  query: { from?: string | undefined; to?: string | undefined; quickRange: string },
  now: Date,
): { from: Date; to: Date } {
  const quick = quickRangeWindow(query.quickRange, now);
  const from = query.from ? new Date(query.from) : quick.from;
  const to = query.to ? new Date(query.to) : query.from ? now : quick.to;
  if (to < from) throw new ValidationError([{ path: 'to', message: 'must not be before from' }], 'query');
  return { from, to };
}
