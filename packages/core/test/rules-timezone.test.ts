import { describe, expect, it } from 'vitest';
import { addCalendar, fromLocalMs, monthsBetween, toLocalMs, zoneOffsetMs } from '../src/rules/timezone.js';

const utc = (iso: string) => Date.parse(`${iso}Z`);
const iso = (t: number) => new Date(t).toISOString();

describe('time zones', () => {
  it('reads the offset of a zone at an instant, to the millisecond', () => {
    expect(zoneOffsetMs(utc('2026-07-01T00:00:00.000'), 'Europe/Berlin')).toBe(2 * 3_600_000);
    expect(zoneOffsetMs(utc('2026-01-01T00:00:00.999'), 'Europe/Berlin')).toBe(3_600_000);
    expect(zoneOffsetMs(utc('2026-01-01T00:00:00.000'), 'America/New_York')).toBe(-5 * 3_600_000);
    expect(zoneOffsetMs(utc('2026-01-01T00:00:00.000'), 'Asia/Kolkata')).toBe(5.5 * 3_600_000);
    expect(toLocalMs(utc('2026-01-05T02:00:00.250'), 'Europe/Berlin')).toBe(utc('2026-01-05T03:00:00.250'));
    expect(toLocalMs(utc('1969-12-31T23:59:59.500'), 'UTC')).toBe(utc('1969-12-31T23:59:59.500'));
  });

  it('turns an ordinary wall time back into its instant', () => {
    expect(iso(fromLocalMs(utc('2026-01-05T03:00:00.250'), 'Europe/Berlin'))).toBe('2026-01-05T02:00:00.250Z');
    expect(iso(fromLocalMs(utc('2026-07-05T09:00:00'), 'America/New_York'))).toBe('2026-07-05T13:00:00.000Z');
  });

  it('a wall time inside the spring-forward gap takes the first instant after the gap', () => {
    // Berlin skips 02:00-03:00 on 29 March 2026; 03:00 CEST is 01:00Z.
    expect(iso(fromLocalMs(utc('2026-03-29T02:00:00'), 'Europe/Berlin'))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(fromLocalMs(utc('2026-03-29T02:59:59.999'), 'Europe/Berlin'))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(fromLocalMs(utc('2026-03-29T03:00:00'), 'Europe/Berlin'))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(fromLocalMs(utc('2026-03-29T01:59:59.999'), 'Europe/Berlin'))).toBe('2026-03-29T00:59:59.999Z');
    expect(iso(fromLocalMs(utc('2026-03-08T02:30:00'), 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
  });

  it('a wall time the fall-back repeats takes the first of its two instants', () => {
    expect(iso(fromLocalMs(utc('2026-10-25T02:30:00'), 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(fromLocalMs(utc('2026-10-25T03:00:00'), 'Europe/Berlin'))).toBe('2026-10-25T02:00:00.000Z');
    expect(iso(fromLocalMs(utc('2026-11-01T01:30:00'), 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
  });

  it('adds days, weeks and months on the wall clock, clamping the day of month', () => {
    expect(iso(addCalendar(utc('2026-12-31T02:30:00'), 'DAY', 1))).toBe('2027-01-01T02:30:00.000Z');
    expect(iso(addCalendar(utc('2026-12-31T02:30:00'), 'WEEK', 1))).toBe('2027-01-07T02:30:00.000Z');
    expect(iso(addCalendar(utc('2026-01-31T22:00:00'), 'MONTH', 1))).toBe('2026-02-28T22:00:00.000Z');
    expect(iso(addCalendar(utc('2028-01-31T22:00:00'), 'MONTH', 1))).toBe('2028-02-29T22:00:00.000Z');
    expect(iso(addCalendar(utc('2026-12-31T00:00:00'), 'MONTH', 2))).toBe('2027-02-28T00:00:00.000Z');
    expect(iso(addCalendar(utc('2026-01-31T00:00:00'), 'MONTH', 12))).toBe('2027-01-31T00:00:00.000Z');
    expect(monthsBetween(utc('2026-01-31T00:00:00'), utc('2027-03-01T00:00:00'))).toBe(14);
  });
});
