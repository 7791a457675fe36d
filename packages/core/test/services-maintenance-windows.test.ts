import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { MaintenanceWindowService } from '../src/services/maintenance-windows.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  return { storage, clock: deps.clock, windows: new MaintenanceWindowService(deps) };
}

const body = (extra: object = {}) => ({
  name: 'db upgrade',
  startsAt: '2026-05-01T11:00:00Z',
  endsAt: '2026-05-01T13:00:00Z',
  repeatUnit: 'DAY',
  ...extra,
});

async function keysOfRejection(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof ValidationError)) throw new Error('expected a ValidationError');
  return err.keys;
}

describe('MaintenanceWindowService CRUD', () => {
  it('creates a window with the defaults and the clock time', async () => {
    const { windows, storage } = setup();
    const w = await windows.create(ACCOUNT_A, body());
    expect(w).toEqual({
      id: expect.any(Number), name: 'db upgrade', startsAt: '2026-05-01T11:00:00.000Z', endsAt: '2026-05-01T13:00:00.000Z',
      repeatUnit: 'DAY', tags: [], repeatInterval: null, repeatEndsAt: null, pauseAllChecks: false, silenceAlertsTags: [],
      silenceAllAlerts: false, timezone: 'UTC', created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
    });
    expect(await storage.maintenanceWindows.get(ACCOUNT_A, w.id)).toMatchObject({ accountId: ACCOUNT_A, name: 'db upgrade' });
  });

  it('requires name, startsAt, endsAt and repeatUnit and stores nothing when refused', async () => {
    const { windows, storage } = setup();
    expect(await keysOfRejection(windows.create(ACCOUNT_A, {}))).toEqual(['name', 'startsAt', 'endsAt', 'repeatUnit']);
    expect(await keysOfRejection(windows.create(ACCOUNT_A, body({ endsAt: '2026-05-01T11:00:00Z' })))).toEqual(['endsAt']);
    expect(await storage.raw.dump('maintenance_windows')).toEqual([]);
  });

  it('name takes up to 200 characters, repeatInterval 1..365', async () => {
    const { windows } = setup();
    expect((await windows.create(ACCOUNT_A, body({ name: 'n'.repeat(200) }))).name).toHaveLength(200);
    expect(await keysOfRejection(windows.create(ACCOUNT_A, body({ name: 'n'.repeat(201) })))).toEqual(['name']);
    expect(await keysOfRejection(windows.create(ACCOUNT_A, body({ repeatInterval: 0 })))).toEqual(['repeatInterval']);
    expect((await windows.create(ACCOUNT_A, body({ repeatInterval: 1 }))).repeatInterval).toBe(1);
    expect((await windows.create(ACCOUNT_A, body({ repeatInterval: 365 }))).repeatInterval).toBe(365);
    expect(await keysOfRejection(windows.create(ACCOUNT_A, body({ repeatInterval: 366 })))).toEqual(['repeatInterval']);
  });

  it('PUT requires the four fields and merges the rest onto the stored window', async () => {
    const { windows, storage, clock } = setup();
    const w = await windows.create(ACCOUNT_A, body({ tags: ['db'], silenceAllAlerts: true }));
    expect(await keysOfRejection(windows.update(ACCOUNT_A, w.id, { name: 'x' }))).toEqual(['startsAt', 'endsAt', 'repeatUnit']);
    clock.advance(5_000);
    const moved = await windows.update(ACCOUNT_A, w.id, body({ startsAt: '2026-05-02T11:00:00Z', endsAt: '2026-05-02T13:00:00Z', repeatUnit: 'WEEK' }));
    expect(moved).toMatchObject({ tags: ['db'], silenceAllAlerts: true, repeatUnit: 'WEEK', startsAt: '2026-05-02T11:00:00.000Z', created_at: w.created_at, updated_at: '2026-05-01T12:00:05.000Z' });
    expect(await keysOfRejection(windows.update(ACCOUNT_A, w.id, body({ endsAt: '2026-05-01T10:00:00Z' })))).toEqual(['endsAt']);
    expect(await storage.maintenanceWindows.get(ACCOUNT_A, w.id)).toMatchObject({ repeatUnit: 'WEEK', endsAt: '2026-05-02T13:00:00.000Z' });
  });

  it('another account neither reads, changes nor deletes a window', async () => {
    const { windows, storage } = setup();
    const w = await windows.create(ACCOUNT_A, body());
    expect(await code(windows.get(ACCOUNT_B, w.id))).toBe('NOT_FOUND');
    expect(await code(windows.update(ACCOUNT_B, w.id, body({ name: 'x' })))).toBe('NOT_FOUND');
    expect(await code(windows.delete(ACCOUNT_B, w.id))).toBe('NOT_FOUND');
    expect(await storage.maintenanceWindows.get(ACCOUNT_A, w.id)).toMatchObject({ name: 'db upgrade', updated_at: null });
    expect((await windows.list(ACCOUNT_B, {})).total).toBe(0);
  });

  it('a malformed id names the id param', async () => {
    const { windows } = setup();
    const err = await windows.get(ACCOUNT_A, 'abc').catch((e: ValidationError) => e);
    expect(err).toMatchObject({ source: 'params', keys: ['id'] });
    expect(await code(windows.delete(ACCOUNT_A, '0'))).toBe('VALIDATION');
  });

  it('lists pages and deletes', async () => {
    const { windows } = setup();
    const ids = [];
    for (const name of ['a', 'b', 'c']) ids.push((await windows.create(ACCOUNT_A, body({ name }))).id);
    expect((await windows.list(ACCOUNT_A, { limit: '2', page: '2' })).items.map((w) => w.name)).toEqual(['c']);
    await windows.delete(ACCOUNT_A, ids[0]);
    expect((await windows.list(ACCOUNT_A, {})).items.map((w) => w.name)).toEqual(['b', 'c']);
    expect(await code(windows.get(ACCOUNT_A, ids[0]))).toBe('NOT_FOUND');
  });
});

describe('MaintenanceWindowService.activeEffect', () => {
  it('pauses checks whose own or group tags a window names, while it is active', async () => {
    const { windows } = setup();
    const w = await windows.create(ACCOUNT_A, body({ tags: ['db'] }));
    const during = new Date('2026-05-01T12:00:00Z');
    expect(await windows.activeEffect(ACCOUNT_A, { tags: ['db'] }, during)).toEqual({ paused: true, silenced: true, windowIds: [w.id] });
    expect(await windows.activeEffect(ACCOUNT_A, { tags: [], groupTags: ['db'] }, during)).toMatchObject({ paused: true });
    expect(await windows.activeEffect(ACCOUNT_A, { tags: ['web'] }, during)).toEqual({ paused: false, silenced: false, windowIds: [] });
    expect((await windows.activeEffect(ACCOUNT_A, { tags: ['db'] }, new Date('2026-05-01T13:00:00Z'))).paused).toBe(false);
    expect((await windows.activeEffect(ACCOUNT_A, { tags: ['db'] }, new Date('2026-05-02T11:30:00Z'))).paused).toBe(true);
  });

  it('silences by silenceAlertsTags or silenceAllAlerts without pausing; other accounts\' windows do not count', async () => {
    const { windows } = setup();
    await windows.create(ACCOUNT_A, body({ silenceAlertsTags: ['web'] }));
    const during = new Date('2026-05-01T12:00:00Z');
    expect(await windows.activeEffect(ACCOUNT_A, { tags: ['web'] }, during)).toMatchObject({ paused: false, silenced: true });
    await windows.create(ACCOUNT_B, body({ pauseAllChecks: true }));
    expect(await windows.activeEffect(ACCOUNT_A, { tags: ['api'] }, during)).toMatchObject({ paused: false, silenced: false });
    expect(await windows.activeEffect(ACCOUNT_B, { tags: ['api'] }, during)).toMatchObject({ paused: true, silenced: true });
  });

  it.each([['the windows that may be in force', true], ['every window', false]])('reads %s from a store that can tell them', async (_what, inForce) => {
    const { windows, storage } = setup();
    // A deploy's one-off windows pile up; every run asks for the effect.
    for (let day = 1; day <= 20; day++) await windows.create(ACCOUNT_A, body({ startsAt: `2026-04-${String(day).padStart(2, '0')}T11:00:00Z`, endsAt: `2026-04-${String(day).padStart(2, '0')}T13:00:00Z`, repeatEndsAt: `2026-04-${String(day).padStart(2, '0')}T11:00:00Z`, pauseAllChecks: true }));
    const weekly = await windows.create(ACCOUNT_A, body({ repeatUnit: 'WEEK', tags: ['db'] }));
    const listAll = storage.maintenanceWindows.listAll;
    if (inForce) storage.maintenanceWindows.listAll = () => Promise.reject(new Error('every window of the account was read'));
    else delete storage.maintenanceWindows.listInForce;
    expect(await windows.activeEffect(ACCOUNT_A, { tags: ['db'] }, new Date('2026-05-08T12:00:00Z'))).toEqual({ paused: true, silenced: true, windowIds: [weekly.id] });
    expect(await windows.activeEffect(ACCOUNT_A, { tags: ['web'] }, new Date('2026-05-08T12:00:00Z'))).toEqual({ paused: false, silenced: false, windowIds: [] });
    expect((await windows.effectsAt(ACCOUNT_A, new Date('2026-04-20T12:00:00Z')))({ tags: [] })).toMatchObject({ paused: true });
    storage.maintenanceWindows.listAll = listAll;
  });
});
