// Every run reads its account's maintenance windows. A window whose repeats have ended stays in
// the table (the API lists it) but is never in force again: migration 019 records when each is
// over for good, and a run reads only the windows that may still be in force.
import { maintenanceWindowEndMs, type MaintenanceWindow } from '@vigil/core';
import { maintenanceWindowFixture } from '@vigil/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, type KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';

const ACCOUNT = '0a6c1f2e-5555-4a1b-8c1d-000000000001';

let storage: KnexStorage | null = null;
afterEach(async () => {
  await storage?.close();
  storage = null;
});

describe.each(STORES)('maintenance windows over for good, on %s', (kind) => {
  it('migration 019 records when each stored window is over, and a run reads those that may be in force', async () => {
    const s = (storage = await freshStore(kind, 'vigil_windows'));
    // The database as version 018 left it. The fixture: 01:00-03:00 UTC on 2026-05-02, every week.
    await migrate(s.knex, 'vigil_', '018_incident_closed');
    const windows: Record<string, Omit<MaintenanceWindow, 'id' | 'accountId'>> = {
      forEver: maintenanceWindowFixture({ repeatEndsAt: null }),
      once: maintenanceWindowFixture({ repeatEndsAt: '2026-05-02T01:00:00.000Z' }),
      fourWeeks: maintenanceWindowFixture({ repeatEndsAt: '2026-05-23T02:00:00.000Z' }),
      berlin: maintenanceWindowFixture({ timezone: 'Europe/Berlin', repeatUnit: 'DAY', repeatEndsAt: '2026-10-30T00:00:00.000Z' }),
    };
    for (const [name, w] of Object.entries(windows)) await s.knex('vigil_maintenance_windows').insert({ account_id: ACCOUNT, data: JSON.stringify({ ...w, name }) });
    await s.migrate();
    const ends = Object.fromEntries(((await s.knex('vigil_maintenance_windows').select('data', 'ends_ms')) as { data: string; ends_ms: unknown }[])
      .map((r) => [JSON.parse(r.data).name, r.ends_ms === null ? null : Number(r.ends_ms)]));
    expect(ends).toEqual(Object.fromEntries(Object.entries(windows).map(([name, w]) => [name, maintenanceWindowEndMs(w)])));
    // Berlin's 03:00-05:00 (CET from 25 October): the last starts on the 29th at 02:00 UTC.
    expect(ends).toMatchObject({ forEver: null, once: Date.parse('2026-05-02T03:00:00.000Z'), fourWeeks: Date.parse('2026-05-23T03:00:00.000Z'), berlin: Date.parse('2026-10-29T04:00:00.000Z') });
    const inForce = async (at: string) => (await s.maintenanceWindows.listInForce!(ACCOUNT, new Date(at))).map((w) => w.name);
    expect(await inForce('2026-05-10T00:00:00.000Z')).toEqual(['forEver', 'fourWeeks', 'berlin']);
    expect(await inForce('2026-11-01T00:00:00.000Z')).toEqual(['forEver']);
    // A window written after the migration carries its end too.
    const later = await s.maintenanceWindows.insert(ACCOUNT, maintenanceWindowFixture({ name: 'later', repeatEndsAt: '2026-11-07T01:00:00.000Z' }));
    expect(await inForce('2026-11-07T02:59:59.999Z')).toEqual(['forEver', 'later']);
    expect(await inForce('2026-11-07T03:00:00.000Z')).toEqual(['forEver']);
    const { accountId: _a, ...rest } = later;
    await s.maintenanceWindows.update(ACCOUNT, later.id, { ...rest, repeatEndsAt: null });
    expect(await inForce('2030-01-01T00:00:00.000Z')).toEqual(['forEver', 'later']);
  });
});
