import { describe, expect, it } from 'vitest';
import { ValidationError } from '../src/errors.js';
import { DashboardService } from '../src/services/dashboards.js';
import { IncidentService } from '../src/services/incidents.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

async function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  const dashboard = await new DashboardService(deps).create(ACCOUNT_A, { header: 'Ops' });
  const foreign = await new DashboardService(deps).create(ACCOUNT_B, { header: 'Theirs' });
  return { storage, clock: deps.clock, incidents: new IncidentService(deps), dashboardId: dashboard.id, foreignId: foreign.id };
}

const body = (dashboardId: number, extra: object = {}) => ({
  name: 'API down',
  dashboardId,
  incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into it' }],
  ...extra,
});

async function keysOfRejection(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof ValidationError)) throw new Error('expected a ValidationError');
  return err.keys;
}

describe('IncidentService.create', () => {
  it('stores the incident with one update; startedAt defaults to now, impact to MINOR', async () => {
    const { incidents, storage, dashboardId } = await setup();
    const i = await incidents.create(ACCOUNT_A, body(dashboardId));
    expect(i).toMatchObject({
      name: 'API down', impact: 'MINOR', dashboardId, startedAt: '2026-05-01T12:00:00.000Z', stoppedAt: null,
      created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
    });
    expect(i).not.toHaveProperty('accountId');
    expect(i.incidentUpdates).toEqual([
      { id: expect.any(String), incidentId: i.id, status: 'INVESTIGATING', description: 'Looking into it', created_at: '2026-05-01T12:00:00.000Z', updated_at: null },
    ]);
    expect(await storage.incidents.get(ACCOUNT_A, i.id)).toMatchObject({ accountId: ACCOUNT_A, name: 'API down' });
    expect(await storage.incidents.listUpdates(ACCOUNT_A, i.id)).toHaveLength(1);
  });

  it('keeps a given startedAt; a RESOLVED first update stops it now unless stoppedAt is given', async () => {
    const { incidents, dashboardId } = await setup();
    const past = await incidents.create(ACCOUNT_A, body(dashboardId, { startedAt: '2026-05-01T10:00:00Z', impact: 'MAJOR' }));
    expect(past).toMatchObject({ startedAt: '2026-05-01T10:00:00.000Z', impact: 'MAJOR', stoppedAt: null });
    const resolved = await incidents.create(ACCOUNT_A, body(dashboardId, { incidentUpdates: [{ status: 'RESOLVED', description: 'Done' }] }));
    expect(resolved.stoppedAt).toBe('2026-05-01T12:00:00.000Z');
    const given = await incidents.create(ACCOUNT_A, body(dashboardId, {
      startedAt: '2026-05-01T09:00:00Z', stoppedAt: '2026-05-01T11:00:00Z', incidentUpdates: [{ status: 'RESOLVED', description: 'Done' }],
    }));
    expect(given).toMatchObject({ startedAt: '2026-05-01T09:00:00.000Z', stoppedAt: '2026-05-01T11:00:00.000Z' });
  });

  it('the dashboard must be one of the account: another account\'s names dashboardId and stores nothing', async () => {
    const { incidents, storage, foreignId } = await setup();
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(foreignId)))).toEqual(['dashboardId']);
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(9999)))).toEqual(['dashboardId']);
    expect(await storage.raw.dump('incidents')).toEqual([]);
    expect(await storage.raw.dump('incident_updates')).toEqual([]);
  });

  it('takes exactly one update on create', async () => {
    const { incidents, dashboardId } = await setup();
    const update = { status: 'INVESTIGATING', description: 'x' };
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(dashboardId, { incidentUpdates: [] })))).toEqual(['incidentUpdates']);
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(dashboardId, { incidentUpdates: [update, update] })))).toEqual(['incidentUpdates']);
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(dashboardId, { incidentUpdates: [{ status: 'FIXED', description: 'x' }] }))))
      .toEqual(['incidentUpdates.0.status']);
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, { dashboardId }))).toEqual(['name', 'incidentUpdates']);
  });

  it('refuses a stoppedAt before startedAt', async () => {
    const { incidents, storage, dashboardId } = await setup();
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(dashboardId, { startedAt: '2026-05-01T10:00:00Z', stoppedAt: '2026-05-01T09:59:59Z' }))))
      .toEqual(['stoppedAt']);
    expect(await keysOfRejection(incidents.create(ACCOUNT_A, body(dashboardId, { stoppedAt: '2026-05-01T11:00:00Z' })))).toEqual(['stoppedAt']);
    expect(await storage.raw.dump('incidents')).toEqual([]);
    const same = await incidents.create(ACCOUNT_A, body(dashboardId, { startedAt: '2026-05-01T10:00:00Z', stoppedAt: '2026-05-01T10:00:00Z' }));
    expect(same.stoppedAt).toBe('2026-05-01T10:00:00.000Z');
  });
});

describe('IncidentService updates', () => {
  it('RESOLVED sets stoppedAt, a later update reopens; updates read oldest first', async () => {
    const { incidents, storage, clock, dashboardId } = await setup();
    const i = await incidents.create(ACCOUNT_A, body(dashboardId));
    clock.advance(600_000);
    const resolved = await incidents.addUpdate(ACCOUNT_A, i.id, { status: 'RESOLVED', description: 'Fixed' });
    expect(resolved).toMatchObject({ startedAt: i.startedAt, stoppedAt: '2026-05-01T12:10:00.000Z', updated_at: '2026-05-01T12:10:00.000Z' });
    clock.advance(60_000);
    const reopened = await incidents.addUpdate(ACCOUNT_A, i.id, { status: 'MONITORING', description: 'Again' });
    expect(reopened.stoppedAt).toBeNull();
    expect(reopened.incidentUpdates.map((u) => u.status)).toEqual(['INVESTIGATING', 'RESOLVED', 'MONITORING']);
    expect((await incidents.get(ACCOUNT_A, i.id)).incidentUpdates.map((u) => u.created_at)).toEqual([
      '2026-05-01T12:00:00.000Z', '2026-05-01T12:10:00.000Z', '2026-05-01T12:11:00.000Z',
    ]);
    expect((await storage.incidents.get(ACCOUNT_A, i.id))?.stoppedAt).toBeNull();
  });

  it('a rejected update body stores no update', async () => {
    const { incidents, storage, dashboardId } = await setup();
    const i = await incidents.create(ACCOUNT_A, body(dashboardId));
    expect(await keysOfRejection(incidents.addUpdate(ACCOUNT_A, i.id, { status: 'DONE', description: '' }))).toEqual(['status', 'description']);
    expect(await storage.incidents.listUpdates(ACCOUNT_A, i.id)).toHaveLength(1);
  });

  it('update merges name, impact and times; the updates stay', async () => {
    const { incidents, storage, clock, dashboardId } = await setup();
    const i = await incidents.create(ACCOUNT_A, body(dashboardId));
    clock.advance(1_000);
    const u = await incidents.update(ACCOUNT_A, i.id, { impact: 'MAJOR', stoppedAt: '2026-05-01T13:00:00Z' });
    expect(u).toMatchObject({ name: 'API down', impact: 'MAJOR', startedAt: i.startedAt, stoppedAt: '2026-05-01T13:00:00.000Z', created_at: i.created_at, updated_at: '2026-05-01T12:00:01.000Z' });
    expect(u.incidentUpdates).toHaveLength(1);
    expect((await incidents.update(ACCOUNT_A, i.id, { stoppedAt: null, name: 'Renamed' }))).toMatchObject({ stoppedAt: null, name: 'Renamed' });
    expect(await keysOfRejection(incidents.update(ACCOUNT_A, i.id, { impact: 'HUGE' }))).toEqual(['impact']);
    expect(await keysOfRejection(incidents.update(ACCOUNT_A, i.id, { stoppedAt: '2026-05-01T11:00:00Z' }))).toEqual(['stoppedAt']);
    expect(await storage.incidents.get(ACCOUNT_A, i.id)).toMatchObject({ impact: 'MAJOR', name: 'Renamed', stoppedAt: null });
  });
});

describe('IncidentService reads and deletes', () => {
  it('another account neither reads nor changes an incident', async () => {
    const { incidents, storage, dashboardId } = await setup();
    const i = await incidents.create(ACCOUNT_A, body(dashboardId));
    expect(await code(incidents.get(ACCOUNT_B, i.id))).toBe('NOT_FOUND');
    expect(await code(incidents.update(ACCOUNT_B, i.id, { name: 'x' }))).toBe('NOT_FOUND');
    expect(await code(incidents.addUpdate(ACCOUNT_B, i.id, { status: 'RESOLVED', description: 'x' }))).toBe('NOT_FOUND');
    expect(await code(incidents.delete(ACCOUNT_B, i.id))).toBe('NOT_FOUND');
    expect(await storage.incidents.get(ACCOUNT_A, i.id)).toMatchObject({ name: 'API down', stoppedAt: null, updated_at: null });
    expect(await storage.incidents.listUpdates(ACCOUNT_A, i.id)).toHaveLength(1);
    expect((await incidents.list(ACCOUNT_B, {})).total).toBe(0);
  });

  it('lists pages of incidents with their updates', async () => {
    const { incidents, dashboardId } = await setup();
    for (const name of ['a', 'b', 'c']) await incidents.create(ACCOUNT_A, body(dashboardId, { name }));
    const page = await incidents.list(ACCOUNT_A, { limit: 2 });
    expect(page).toMatchObject({ total: 3, offset: 0 });
    expect(page.items.map((i) => [i.name, i.incidentUpdates.length])).toEqual([['a', 1], ['b', 1]]);
    expect((await incidents.list(ACCOUNT_A, { limit: 2, page: 2 })).items.map((i) => i.name)).toEqual(['c']);
    expect(await code(incidents.list(ACCOUNT_A, { limit: 101 }))).toBe('VALIDATION');
  });

  it('delete removes the incident and its updates', async () => {
    const { incidents, storage, dashboardId } = await setup();
    const i = await incidents.create(ACCOUNT_A, body(dashboardId));
    await incidents.delete(ACCOUNT_A, i.id);
    expect(await code(incidents.get(ACCOUNT_A, i.id))).toBe('NOT_FOUND');
    expect(await storage.raw.dump('incident_updates')).toEqual([]);
    expect(await code(incidents.delete(ACCOUNT_A, i.id))).toBe('NOT_FOUND');
    expect((await incidents.get(ACCOUNT_A, 'unknown').catch((e: Error) => e.message))).toBe('Incident not found');
  });
});
