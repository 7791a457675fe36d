import { describe, expect, it } from 'vitest';
import { activeWindows, isWindowActive, maintenanceEffect, nextMaintenanceChange, type MaintenanceWindowInput } from '../src/rules/maintenance.js';
import { addToWallTime, fromWallTime, toWallTime, zoneOffsetMs } from '../src/rules/timezone.js';

const w = (o: Partial<MaintenanceWindowInput> = {}): MaintenanceWindowInput => ({
  id: 1, startsAt: '2026-01-05T02:00:00.000Z', endsAt: '2026-01-05T04:00:00.000Z', repeatUnit: 'DAY', repeatInterval: null,
  repeatEndsAt: null, timezone: 'UTC', tags: [], pauseAllChecks: false, silenceAlertsTags: [], silenceAllAlerts: false, ...o,
});
const active = (win: MaintenanceWindowInput, iso: string) => isWindowActive(win, new Date(iso));

describe('maintenance windows: when active', () => {
  it('start inclusive, end exclusive, never before the first occurrence', () => {
    expect(active(w(), '2026-01-05T01:59:59.999Z')).toBe(false);
    expect(active(w(), '2026-01-05T02:00:00.000Z')).toBe(true);
    expect(active(w(), '2026-01-05T03:59:59.999Z')).toBe(true);
    expect(active(w(), '2026-01-05T04:00:00.000Z')).toBe(false);
    expect(active(w(), '2025-01-05T03:00:00.000Z')).toBe(false);
  });

  it('DAY repeats every day (interval null = 1) and every n days', () => {
    expect(active(w(), '2026-03-17T03:00:00Z')).toBe(true);
    expect(active(w(), '2031-03-17T03:00:00Z')).toBe(true);
    expect(active(w({ repeatInterval: 3 }), '2026-01-08T03:00:00Z')).toBe(true);
    expect(active(w({ repeatInterval: 3 }), '2026-01-07T03:00:00Z')).toBe(false);
  });

  it('WEEK and MONTH with intervals', () => {
    expect(active(w({ repeatUnit: 'WEEK' }), '2026-01-12T02:30:00Z')).toBe(true);
    expect(active(w({ repeatUnit: 'WEEK' }), '2026-01-13T02:30:00Z')).toBe(false);
    expect(active(w({ repeatUnit: 'WEEK', repeatInterval: 2 }), '2026-01-12T02:30:00Z')).toBe(false);
    expect(active(w({ repeatUnit: 'WEEK', repeatInterval: 2 }), '2026-01-19T02:30:00Z')).toBe(true);
    expect(active(w({ repeatUnit: 'MONTH' }), '2026-02-05T02:30:00Z')).toBe(true);
    expect(active(w({ repeatUnit: 'MONTH', repeatInterval: 6 }), '2026-07-05T02:30:00Z')).toBe(true);
    expect(active(w({ repeatUnit: 'MONTH', repeatInterval: 6 }), '2026-06-05T02:30:00Z')).toBe(false);
  });

  it('monthly on the 31st clamps to the month\'s last day', () => {
    const end = w({ repeatUnit: 'MONTH', startsAt: '2026-01-31T22:00:00Z', endsAt: '2026-01-31T23:00:00Z' });
    expect(active(end, '2026-02-28T22:30:00Z')).toBe(true);
    expect(active(end, '2026-04-30T22:30:00Z')).toBe(true);
    expect(active(end, '2026-03-31T22:30:00Z')).toBe(true);
  });

  it('repeatEndsAt stops repetition; one at or before startsAt leaves only the first occurrence', () => {
    const until = w({ repeatEndsAt: '2026-01-07T00:00:00Z' });
    expect(active(until, '2026-01-06T03:00:00Z')).toBe(true);
    expect(active(until, '2026-01-07T03:00:00Z')).toBe(false);
    const once = w({ repeatEndsAt: '2026-01-05T02:00:00Z' });
    expect(active(once, '2026-01-05T03:00:00Z')).toBe(true);
    expect(active(once, '2026-01-06T03:00:00Z')).toBe(false);
  });

  it('a Europe/Berlin 02:00-04:00 window stays at local time across both DST changes', () => {
    // 02:00-04:00 CET = 01:00-03:00 UTC in winter.
    const berlin = w({ startsAt: '2026-03-20T01:00:00Z', endsAt: '2026-03-20T03:00:00Z', timezone: 'Europe/Berlin' });
    expect(active(berlin, '2026-03-27T01:30:00Z')).toBe(true);
    // After 29 March, CEST: 02:00-04:00 local = 00:00-02:00 UTC.
    expect(active(berlin, '2026-03-30T00:30:00Z')).toBe(true);
    expect(active(berlin, '2026-03-30T02:30:00Z')).toBe(false);
    // After 25 October, back to CET.
    expect(active(berlin, '2026-10-26T02:30:00Z')).toBe(true);
    expect(active(berlin, '2026-10-26T00:30:00Z')).toBe(false);
  });

  it('America/New_York windows move with EDT', () => {
    const ny = w({ startsAt: '2026-01-05T14:00:00Z', endsAt: '2026-01-05T15:00:00Z', timezone: 'America/New_York' }); // 09:00 EST
    expect(active(ny, '2026-07-01T13:30:00Z')).toBe(true); // 09:30 EDT
    expect(active(ny, '2026-07-01T14:30:00Z')).toBe(false);
  });

  it('the next change is the next start or end', () => {
    expect(nextMaintenanceChange(w(), new Date('2026-01-01T00:00:00Z'))?.toISOString()).toBe('2026-01-05T02:00:00.000Z');
    expect(nextMaintenanceChange(w(), new Date('2026-01-05T02:00:00Z'))?.toISOString()).toBe('2026-01-05T04:00:00.000Z');
    expect(nextMaintenanceChange(w(), new Date('2026-01-05T04:00:00Z'))?.toISOString()).toBe('2026-01-06T02:00:00.000Z');
    const once = w({ repeatEndsAt: '2026-01-01T00:00:00Z' });
    expect(nextMaintenanceChange(once, new Date('2026-01-05T05:00:00Z'))).toBeNull();
  });
});

describe('maintenance windows: effect on a check', () => {
  const at = new Date('2026-01-05T03:00:00Z');

  it('pauses by pauseAllChecks or by the check\'s or group\'s tags; pausing also silences', () => {
    expect(maintenanceEffect([w({ pauseAllChecks: true })], { tags: [] }, at)).toEqual({ paused: true, silenced: true, windowIds: [1] });
    expect(maintenanceEffect([w({ tags: ['db'] })], { tags: ['db'] }, at).paused).toBe(true);
    expect(maintenanceEffect([w({ tags: ['db'] })], { tags: ['api'], groupTags: ['db'] }, at).paused).toBe(true);
    expect(maintenanceEffect([w({ tags: ['db'] })], { tags: ['api'] }, at)).toEqual({ paused: false, silenced: false, windowIds: [] });
  });

  it('silences by silenceAllAlerts or silenceAlertsTags without pausing', () => {
    expect(maintenanceEffect([w({ silenceAllAlerts: true })], { tags: [] }, at)).toEqual({ paused: false, silenced: true, windowIds: [1] });
    expect(maintenanceEffect([w({ silenceAlertsTags: ['api'] })], { tags: ['api'] }, at).silenced).toBe(true);
    expect(maintenanceEffect([w({ silenceAlertsTags: ['api'] })], { tags: ['web'] }, at).silenced).toBe(false);
  });

  it('only active windows count', () => {
    expect(maintenanceEffect([w({ pauseAllChecks: true })], { tags: [] }, new Date('2026-01-05T05:00:00Z')).paused).toBe(false);
    expect(activeWindows([w(), w({ id: 2, startsAt: '2026-01-05T05:00:00Z', endsAt: '2026-01-05T06:00:00Z' })], at).map((x) => x.id)).toEqual([1]);
  });
});

describe('time zones', () => {
  it('converts wall time both ways, with gaps moved forward and overlaps taking the first instant', () => {
    expect(zoneOffsetMs(Date.parse('2026-07-01T00:00:00Z'), 'Europe/Berlin')).toBe(2 * 3_600_000);
    const wall = toWallTime(Date.parse('2026-01-05T02:00:00Z'), 'Europe/Berlin');
    expect(wall).toMatchObject({ year: 2026, month: 1, day: 5, hour: 3, minute: 0 });
    expect(fromWallTime(wall, 'Europe/Berlin')).toBe(Date.parse('2026-01-05T02:00:00Z'));
    // 02:30 on 29 March 2026 does not exist in Berlin: it becomes 03:30 CEST.
    const gap = { year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0, millisecond: 0 };
    expect(new Date(fromWallTime(gap, 'Europe/Berlin')).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    // 02:30 on 25 October 2026 happens twice: the first is 02:30 CEST.
    const twice = { ...gap, month: 10, day: 25 };
    expect(new Date(fromWallTime(twice, 'Europe/Berlin')).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(addToWallTime({ ...gap, month: 12, day: 31 }, 'MONTH', 2)).toMatchObject({ year: 2027, month: 2, day: 28 });
    expect(addToWallTime({ ...gap, month: 12, day: 31 }, 'WEEK', 1)).toMatchObject({ year: 2027, month: 1, day: 7 });
  });
});
