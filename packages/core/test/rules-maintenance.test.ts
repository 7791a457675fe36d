import { describe, expect, it } from 'vitest';
import { activeWindows, isWindowActive, maintenanceEffect, maintenanceWindowEndMs, nextMaintenanceChange, type MaintenanceWindowInput } from '../src/rules/maintenance.js';

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

  it('interval > 1 at the edges of a later occurrence', () => {
    const every3 = w({ repeatInterval: 3 });
    expect(active(every3, '2026-01-08T01:59:59.999Z')).toBe(false);
    expect(active(every3, '2026-01-08T02:00:00.000Z')).toBe(true);
    expect(active(every3, '2026-01-08T04:00:00.000Z')).toBe(false);
    const fortnight = w({ repeatUnit: 'WEEK', repeatInterval: 2 });
    expect(active(fortnight, '2026-01-19T02:00:00.000Z')).toBe(true);
    expect(active(fortnight, '2026-01-19T03:59:59.999Z')).toBe(true);
    expect(active(fortnight, '2026-01-19T04:00:00.000Z')).toBe(false);
    const halfYear = w({ repeatUnit: 'MONTH', repeatInterval: 6 });
    expect(active(halfYear, '2026-07-05T01:59:59.999Z')).toBe(false);
    expect(active(halfYear, '2026-07-05T02:00:00.000Z')).toBe(true);
    expect(active(halfYear, '2026-07-05T04:00:00.000Z')).toBe(false);
  });

  it('finds occurrences years after the first without walking to them', () => {
    expect(active(w({ repeatUnit: 'MONTH' }), '2031-08-05T02:00:00Z')).toBe(true);
    expect(active(w({ repeatUnit: 'MONTH' }), '2031-08-04T02:00:00Z')).toBe(false);
    expect(active(w({ repeatUnit: 'MONTH', repeatInterval: 5 }), '2031-01-05T03:00:00Z')).toBe(true);
    expect(active(w({ repeatUnit: 'WEEK' }), '2030-12-30T03:00:00Z')).toBe(true);
    expect(nextMaintenanceChange(w({ repeatUnit: 'MONTH' }), new Date('2031-08-05T04:00:00Z'))?.toISOString()).toBe('2031-09-05T02:00:00.000Z');
  });

  it('a window longer than its period is active through the overlap', () => {
    const long = w({ endsAt: '2026-01-07T03:00:00Z' }); // 49 h, repeating daily
    expect(active(long, '2026-01-20T01:00:00Z')).toBe(true);
    const twoDaysEvery3 = w({ endsAt: '2026-01-07T02:00:00Z', repeatInterval: 3 });
    expect(active(twoDaysEvery3, '2026-01-10T01:59:59.999Z')).toBe(true);
    expect(active(twoDaysEvery3, '2026-01-10T02:00:00.000Z')).toBe(false);
    expect(active(twoDaysEvery3, '2026-01-11T02:00:00.000Z')).toBe(true);
  });

  it('an occurrence starting exactly at repeatEndsAt still happens; a later one does not', () => {
    const until = w({ repeatEndsAt: '2026-01-07T02:00:00.000Z' });
    expect(active(until, '2026-01-07T02:00:00.000Z')).toBe(true);
    expect(active(until, '2026-01-08T02:00:00.000Z')).toBe(false);
    const justBefore = w({ repeatEndsAt: '2026-01-07T01:59:59.999Z' });
    expect(active(justBefore, '2026-01-07T02:00:00.000Z')).toBe(false);
    expect(nextMaintenanceChange(justBefore, new Date('2026-01-06T04:00:00Z'))).toBeNull();
  });

  it('on the DST days themselves: a missing start moves past the gap, a repeated one takes the first', () => {
    const berlin = w({ startsAt: '2026-03-20T01:00:00Z', endsAt: '2026-03-20T03:00:00Z', timezone: 'Europe/Berlin' });
    // 29 March: 02:00 local does not exist, the window opens at 03:00 CEST (01:00Z) and closes at 04:00 CEST.
    expect(active(berlin, '2026-03-29T00:59:59.999Z')).toBe(false);
    expect(active(berlin, '2026-03-29T01:00:00.000Z')).toBe(true);
    expect(active(berlin, '2026-03-29T02:00:00.000Z')).toBe(false);
    // 25 October: 02:00 local happens twice, the window opens at the first (CEST, 00:00Z) and closes at 04:00 CET.
    expect(active(berlin, '2026-10-24T23:59:59.999Z')).toBe(false);
    expect(active(berlin, '2026-10-25T00:00:00.000Z')).toBe(true);
    expect(active(berlin, '2026-10-25T02:59:59.999Z')).toBe(true);
    expect(active(berlin, '2026-10-25T03:00:00.000Z')).toBe(false);
    expect(nextMaintenanceChange(berlin, new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
  });

  it('America/New_York across its March and November changes', () => {
    const ny = w({ startsAt: '2026-03-01T06:30:00Z', endsAt: '2026-03-01T07:30:00Z', timezone: 'America/New_York' }); // 01:30-02:30 EST
    expect(active(ny, '2026-03-07T06:30:00Z')).toBe(true);
    // 8 March: 02:00-03:00 does not exist; 01:30 EST opens, 02:30 local becomes 03:00 EDT (07:00Z).
    expect(active(ny, '2026-03-08T06:30:00Z')).toBe(true);
    expect(active(ny, '2026-03-08T06:59:59.999Z')).toBe(true);
    expect(active(ny, '2026-03-08T07:00:00Z')).toBe(false);
    expect(active(ny, '2026-03-09T05:30:00Z')).toBe(true); // 01:30 EDT
    // 1 November: 01:30 happens twice; the window runs from the first 01:30 (EDT) to 02:30 EST.
    expect(active(ny, '2026-11-01T05:30:00Z')).toBe(true);
    expect(active(ny, '2026-11-01T07:29:59.999Z')).toBe(true);
    expect(active(ny, '2026-11-01T07:30:00Z')).toBe(false);
  });

  it('a repeat end at or before the start leaves the first occurrence only', () => {
    const before = w({ repeatEndsAt: '2025-12-01T00:00:00Z', repeatUnit: 'WEEK' });
    expect(active(before, '2026-01-05T02:00:00Z')).toBe(true);
    expect(active(before, '2026-01-12T02:00:00Z')).toBe(false);
  });

  it('the next change is the next start or end', () => {
    expect(nextMaintenanceChange(w(), new Date('2026-01-01T00:00:00Z'))?.toISOString()).toBe('2026-01-05T02:00:00.000Z');
    expect(nextMaintenanceChange(w(), new Date('2026-01-05T02:00:00Z'))?.toISOString()).toBe('2026-01-05T04:00:00.000Z');
    expect(nextMaintenanceChange(w(), new Date('2026-01-05T04:00:00Z'))?.toISOString()).toBe('2026-01-06T02:00:00.000Z');
    const once = w({ repeatEndsAt: '2026-01-01T00:00:00Z' });
    expect(nextMaintenanceChange(once, new Date('2026-01-05T05:00:00Z'))).toBeNull();
  });
});

describe('maintenance windows: when over for good', () => {
  const endOf = (win: MaintenanceWindowInput) => maintenanceWindowEndMs(win);
  /** In force just before its end, and at no occurrence from its end on (each hour of the next 400 days). */
  const endsThere = (win: MaintenanceWindowInput) => {
    const end = endOf(win)!;
    expect(isWindowActive(win, new Date(end - 1))).toBe(true);
    for (let t = end; t < end + 400 * 86_400_000; t += 3_600_000) expect(isWindowActive(win, new Date(t)), new Date(t).toISOString()).toBe(false);
    expect(nextMaintenanceChange(win, new Date(end))).toBeNull();
  };

  it('never for a window that repeats for ever', () => {
    expect(endOf(w())).toBeNull();
    expect(endOf(w({ repeatUnit: 'MONTH', repeatInterval: 3 }))).toBeNull();
  });

  it('at its end when it does not repeat (a repeat end at or before its start)', () => {
    expect(endOf(w({ repeatEndsAt: '2026-01-05T02:00:00.000Z' }))).toBe(Date.parse('2026-01-05T04:00:00.000Z'));
    expect(endOf(w({ repeatEndsAt: '2025-12-31T00:00:00.000Z' }))).toBe(Date.parse('2026-01-05T04:00:00.000Z'));
    endsThere(w({ repeatEndsAt: '2026-01-05T02:00:00.000Z' }));
  });

  it('at the end of the last occurrence to start by its repeat end', () => {
    expect(endOf(w({ repeatEndsAt: '2026-01-10T03:00:00.000Z' }))).toBe(Date.parse('2026-01-10T04:00:00.000Z'));
    // An occurrence that starts exactly at the repeat end still happens.
    expect(endOf(w({ repeatEndsAt: '2026-01-10T02:00:00.000Z' }))).toBe(Date.parse('2026-01-10T04:00:00.000Z'));
    expect(endOf(w({ repeatEndsAt: '2026-01-10T01:59:59.999Z' }))).toBe(Date.parse('2026-01-09T04:00:00.000Z'));
    endsThere(w({ repeatEndsAt: '2026-01-10T03:00:00.000Z' }));
    endsThere(w({ repeatUnit: 'WEEK', repeatInterval: 2, repeatEndsAt: '2026-03-01T00:00:00.000Z' }));
    endsThere(w({ repeatUnit: 'MONTH', startsAt: '2026-01-31T22:00:00.000Z', endsAt: '2026-02-01T01:00:00.000Z', repeatEndsAt: '2026-06-15T00:00:00.000Z' }));
  });

  it('on the wall clock of its zone across a DST change, and for a window longer than its period', () => {
    const berlin = w({ startsAt: '2026-01-05T01:00:00.000Z', endsAt: '2026-01-05T03:00:00.000Z', timezone: 'Europe/Berlin', repeatEndsAt: '2026-04-01T12:00:00.000Z' });
    // 02:00-04:00 in Berlin on 2026-04-01 is 00:00-02:00 UTC (summer time).
    expect(endOf(berlin)).toBe(Date.parse('2026-04-01T02:00:00.000Z'));
    endsThere(berlin);
    endsThere(w({ endsAt: '2026-01-06T14:00:00.000Z', repeatEndsAt: '2026-01-20T00:00:00.000Z' }));
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
