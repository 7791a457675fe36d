import { describe, expect, it } from 'vitest';
import { dailyUptime, overallUptime, type DownSpan, type UptimeDay } from '../src/rules/uptime.js';

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const span = (start: string, end: string | null): DownSpan => ({ start: at(start), end: end === null ? null : at(end) });

/** Noon of 2026-05-03 (UTC); the service has existed since well before the days asked for. */
const NOW = new Date('2026-05-03T12:00:00.000Z');
const LONG_AGO = at('2026-01-01T00:00:00.000Z');

const byDate = (days: UptimeDay[]) => Object.fromEntries(days.map((d) => [d.date, d]));

describe('dailyUptime', () => {
  it('a past day without any down span is 100 with 0 ms down', () => {
    const days = dailyUptime([], { days: 2, now: NOW, since: LONG_AGO });
    expect(days).toEqual([
      { date: '2026-05-02', uptime: 100, downMs: 0 },
      // today: 12 h observed, none down
      { date: '2026-05-03', uptime: 100, downMs: 0 },
    ]);
  });

  it('a 2-hour span inside one day gives 91.67 for that day only', () => {
    const days = dailyUptime([span('2026-05-02T06:00:00Z', '2026-05-02T08:00:00Z')], { days: 3, now: NOW, since: LONG_AGO });
    expect(days).toEqual([
      { date: '2026-05-01', uptime: 100, downMs: 0 },
      // 22 h up of 24 h = 0.916666… -> 91.67
      { date: '2026-05-02', uptime: 91.67, downMs: 2 * HOUR },
      { date: '2026-05-03', uptime: 100, downMs: 0 },
    ]);
  });

  it('a span crossing midnight is split over the two days', () => {
    const days = byDate(dailyUptime([span('2026-05-01T22:00:00Z', '2026-05-02T03:00:00Z')], { days: 3, now: NOW, since: LONG_AGO }));
    // 22:00-24:00 on May 1: 2 h of 24 h down -> 22/24 = 91.67
    expect(days['2026-05-01']).toEqual({ date: '2026-05-01', uptime: 91.67, downMs: 2 * HOUR });
    // 00:00-03:00 on May 2: 3 h of 24 h down -> 21/24 = 87.5
    expect(days['2026-05-02']).toEqual({ date: '2026-05-02', uptime: 87.5, downMs: 3 * HOUR });
    expect(days['2026-05-03']).toEqual({ date: '2026-05-03', uptime: 100, downMs: 0 });
  });

  it('overlapping spans count once, whatever their order', () => {
    const spans = [
      span('2026-05-02T07:00:00Z', '2026-05-02T09:00:00Z'),
      span('2026-05-02T07:30:00Z', '2026-05-02T07:45:00Z'),
      span('2026-05-02T06:00:00Z', '2026-05-02T08:00:00Z'),
    ];
    const day = byDate(dailyUptime(spans, { days: 2, now: NOW, since: LONG_AGO }))['2026-05-02'];
    // union 06:00-09:00 = 3 h (not 2 + 2 + 0.25 = 4.25 h) -> 21/24 = 87.5
    expect(day).toEqual({ date: '2026-05-02', uptime: 87.5, downMs: 3 * HOUR });
  });

  it('an open span (end null) runs to now', () => {
    const today = dailyUptime([span('2026-05-03T09:00:00Z', null)], { days: 1, now: NOW, since: LONG_AGO });
    // 09:00-12:00 down of the 12 h so far -> 9/12 = 75
    expect(today).toEqual([{ date: '2026-05-03', uptime: 75, downMs: 3 * HOUR }]);

    const sinceYesterday = dailyUptime([span('2026-05-02T18:00:00Z', null)], { days: 2, now: NOW, since: LONG_AGO });
    expect(sinceYesterday).toEqual([
      // 18:00-24:00: 6 h of 24 h -> 18/24 = 75
      { date: '2026-05-02', uptime: 75, downMs: 6 * HOUR },
      // down all of today's 12 h so far -> 0
      { date: '2026-05-03', uptime: 0, downMs: 12 * HOUR },
    ]);
  });

  it('a span ending after now counts only up to now', () => {
    const today = dailyUptime([span('2026-05-03T10:00:00Z', '2026-05-03T20:00:00Z')], { days: 1, now: NOW, since: LONG_AGO });
    // 10:00-12:00 (not to 20:00): 2 h of 12 h -> 10/12 = 0.8333… -> 83.33
    expect(today).toEqual([{ date: '2026-05-03', uptime: 83.33, downMs: 2 * HOUR }]);
  });

  it('today counts only up to now: 1 hour down in the first 2 hours is 50%', () => {
    const now = new Date('2026-05-03T02:00:00.000Z');
    const days = dailyUptime([span('2026-05-03T00:00:00Z', '2026-05-03T01:00:00Z')], { days: 1, now, since: LONG_AGO });
    // 1 h down of the 2 h observed (not of 24 h, which would be 95.83)
    expect(days).toEqual([{ date: '2026-05-03', uptime: 50, downMs: HOUR }]);
  });

  it('days before since are null; the day since falls in counts from since', () => {
    const since = at('2026-05-02T18:00:00Z');
    const spans = [span('2026-05-01T10:00:00Z', '2026-05-01T11:00:00Z'), span('2026-05-02T15:00:00Z', '2026-05-02T21:00:00Z')];
    const days = dailyUptime(spans, { days: 3, now: NOW, since });
    expect(days).toEqual([
      // before the service existed: no data, even with a span on that day
      { date: '2026-05-01', uptime: null, downMs: 0 },
      // observed 18:00-24:00 = 6 h; down 18:00-21:00 = 3 h (15:00-18:00 is before since) -> 3/6 = 50
      { date: '2026-05-02', uptime: 50, downMs: 3 * HOUR },
      { date: '2026-05-03', uptime: 100, downMs: 0 },
    ]);
  });

  it('a service created after now has no day with data', () => {
    const days = dailyUptime([], { days: 2, now: NOW, since: at('2026-05-03T12:00:01Z') });
    expect(days.map((d) => d.uptime)).toEqual([null, null]);
  });

  it('days sets how many days; oldest first as YYYY-MM-DD UTC dates, across month and year ends', () => {
    expect(dailyUptime([], { days: 5, now: NOW, since: LONG_AGO }).map((d) => d.date)).toEqual([
      '2026-04-29', '2026-04-30', '2026-05-01', '2026-05-02', '2026-05-03',
    ]);
    expect(dailyUptime([], { days: 1, now: NOW, since: LONG_AGO }).map((d) => d.date)).toEqual(['2026-05-03']);
    // 00:30 UTC on Jan 1 is still Dec 31 west of Greenwich; the dates are UTC days.
    const newYear = new Date('2026-01-01T00:30:00.000Z');
    expect(dailyUptime([], { days: 3, now: newYear, since: at('2025-01-01T00:00:00Z') }).map((d) => d.date)).toEqual([
      '2025-12-30', '2025-12-31', '2026-01-01',
    ]);
    expect(dailyUptime([], { days: 90, now: NOW, since: LONG_AGO })).toHaveLength(90);
  });
});

describe('overallUptime', () => {
  it('weights each day by its observed time, skipping days without data', () => {
    const since = at('2026-05-02T18:00:00Z');
    const days: UptimeDay[] = [
      { date: '2026-05-01', uptime: null, downMs: 0 },
      // observed 18:00-24:00 = 6 h, 3 h down
      { date: '2026-05-02', uptime: 50, downMs: 3 * HOUR },
      // observed 00:00-12:00 = 12 h, none down
      { date: '2026-05-03', uptime: 100, downMs: 0 },
    ];
    // 3 h down of 6 + 12 = 18 h observed -> 1 - 3/18 = 0.833333… -> 83.333 (the plain mean of 50 and 100 would be 75)
    expect(overallUptime(days, { now: NOW, since })).toBe(83.333);
  });

  it('full days weigh 24 h each', () => {
    const days: UptimeDay[] = [
      { date: '2026-05-01', uptime: 91.67, downMs: 2 * HOUR },
      { date: '2026-05-02', uptime: 100, downMs: 0 },
      { date: '2026-05-03', uptime: 100, downMs: 0 },
    ];
    // 2 h down of 24 + 24 + 12 = 60 h -> 1 - 2/60 = 0.966666… -> 96.667
    expect(overallUptime(days, { now: NOW, since: LONG_AGO })).toBe(96.667);
  });

  it('is null without any observed day', () => {
    expect(overallUptime([], { now: NOW, since: LONG_AGO })).toBeNull();
    const noData: UptimeDay[] = [
      { date: '2026-05-02', uptime: null, downMs: 0 },
      { date: '2026-05-03', uptime: null, downMs: 0 },
    ];
    expect(overallUptime(noData, { now: NOW, since: at('2026-05-04T00:00:00Z') })).toBeNull();
  });
});
