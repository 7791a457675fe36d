import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/container.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';

async function setup() {
  const storage = memoryStorage();
  const clock = new FakeClock('2026-05-01T12:00:00.000Z');
  const vigil: Vigil = createVigil({ storage, secretKey: randomBytes(32), clock });
  const a = (await vigil.accounts.ensure()).id;
  const b = (await vigil.accounts.ensure()).id;
  return { vigil, storage, clock, a, b };
}


describe('dashboards', () => {
  it('customUrl is unique across accounts (409), generated when absent, changeable to a free one', async () => {
    const { vigil, a, b } = await setup();
    const d = await vigil.dashboards.create(a, { header: 'Ops', customUrl: 'acme-ops' });
    expect(d).toMatchObject({ header: 'Ops', customUrl: 'acme-ops', checksPerPage: 15, refreshRate: 60, keys: [] });
    expect(typeof d.dashboardId).toBe('string');
    expect(await code(vigil.dashboards.create(b, { header: 'Other', customUrl: 'ACME-OPS' }))).toBe('CONFLICT');
    const generated = await vigil.dashboards.create(b, { header: 'Other' });
    expect(generated.customUrl).toMatch(/^dashboard-[0-9a-f]{8}$/);
    expect(await code(vigil.dashboards.update(b, generated.id, { customUrl: 'acme-ops' }))).toBe('CONFLICT');
    expect((await vigil.dashboards.update(a, d.id, { customUrl: 'acme-ops', header: 'Ops 2' })).header).toBe('Ops 2');
    expect(await code(vigil.dashboards.get(b, d.id))).toBe('NOT_FOUND');
    expect(await code(vigil.dashboards.create(a, { header: 'x', checksPerPage: 21 }))).toBe('VALIDATION');
  });

  it('a private dashboard gets a key, sealed at rest, that opens it', async () => {
    const { vigil, a, storage } = await setup();
    const d = await vigil.dashboards.create(a, { header: 'Secret', isPrivate: true });
    expect(d.keys).toHaveLength(1);
    const raw = d.keys[0]!.rawKey;
    expect(d.keys[0]!.maskedKey).toBe(`${raw.slice(0, 4)}...${raw.slice(-4)}`);
    expect(JSON.stringify(await storage.raw.dump('dashboards'))).not.toContain(raw);
    const record = (await vigil.dashboards.findPublic(d.customUrl))!;
    expect(vigil.dashboards.verifyKey(record, raw)).toBe(true);
    expect(vigil.dashboards.verifyKey(record, `${raw}x`)).toBe(false);
    expect(vigil.dashboards.verifyKey(record, undefined)).toBe(false);
    const more = await vigil.dashboards.createKey(a, d.id);
    expect(more.keys).toHaveLength(2);
    const fewer = await vigil.dashboards.deleteKey(a, d.id, d.keys[0]!.id);
    expect(vigil.dashboards.verifyKey((await vigil.dashboards.findPublic(d.customUrl))!, raw)).toBe(false);
    expect(fewer.keys).toHaveLength(1);
  });
});

describe('incidents', () => {
  it('created with exactly one update on a dashboard of the account; RESOLVED sets stoppedAt, a new update reopens', async () => {
    const { vigil, a, b, clock } = await setup();
    const d = await vigil.dashboards.create(a, { header: 'Ops' });
    expect(await code(vigil.incidents.create(b, { name: 'x', dashboardId: d.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'd' }] }))).toBe('VALIDATION');
    const i = await vigil.incidents.create(a, { name: 'API down', dashboardId: d.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking' }] });
    expect(i).toMatchObject({ impact: 'MINOR', startedAt: '2026-05-01T12:00:00.000Z', stoppedAt: null });
    expect(i.incidentUpdates).toHaveLength(1);
    expect(i.incidentUpdates[0]).toMatchObject({ status: 'INVESTIGATING', incidentId: i.id });
    clock.advance(600_000);
    const resolved = await vigil.incidents.addUpdate(a, i.id, { status: 'RESOLVED', description: 'Fixed' });
    expect(resolved.stoppedAt).toBe('2026-05-01T12:10:00.000Z');
    expect(resolved.incidentUpdates.map((u) => u.status)).toEqual(['INVESTIGATING', 'RESOLVED']);
    const reopened = await vigil.incidents.addUpdate(a, i.id, { status: 'MONITORING', description: 'Again' });
    expect(reopened.stoppedAt).toBeNull();
    expect(await code(vigil.incidents.addUpdate(b, i.id, { status: 'RESOLVED', description: 'x' }))).toBe('NOT_FOUND');
    expect((await vigil.incidents.update(a, i.id, { impact: 'MAJOR' })).impact).toBe('MAJOR');
    await vigil.dashboards.delete(a, d.id);
    expect(await code(vigil.incidents.get(a, i.id))).toBe('NOT_FOUND');
  });
});

describe('status pages, services and their incidents', () => {
  it('cards hold services of the account; url is unique; answers resolve services', async () => {
    const { vigil, a, b } = await setup();
    const api = await vigil.services.create(a, { name: 'API' });
    expect(api).toMatchObject({ name: 'API', accountId: a, updated_at: null });
    const foreign = await vigil.services.create(b, { name: 'Theirs' });
    const page = await vigil.statusPages.create(a, { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id] }] });
    expect(page.cards[0]!.services.map((s) => s.name)).toEqual(['API']);
    expect(page.defaultTheme).toBe('AUTO');
    expect(await code(vigil.statusPages.create(b, { name: 'x', url: 'acme' }))).toBe('CONFLICT');
    const err = await vigil.statusPages.create(a, { name: 'x', url: 'x', cards: [{ name: 'c', serviceIds: [foreign.id] }] }).catch((e) => e);
    expect(err.keys).toEqual(['cards.0.serviceIds']);
    const renamed = await vigil.statusPages.update(a, page.id, { name: 'Acme Inc' });
    expect(renamed.cards[0]!.id).toBe(page.cards[0]!.id);
    expect((await vigil.statusPages.findPublic('ACME'))?.id).toBe(page.id);
  });

  it('services list by cursor, or all at once when paginated is false', async () => {
    const { vigil, a } = await setup();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await vigil.services.create(a, { name });
    const first = await vigil.services.list(a, { limit: '2' });
    expect(first.entries.map((s) => s.name)).toEqual(['a', 'b']);
    expect(first.length).toBe(2);
    const second = await vigil.services.list(a, { limit: '2', nextId: first.nextId! });
    expect(second.entries.map((s) => s.name)).toEqual(['c', 'd']);
    const last = await vigil.services.list(a, { limit: '2', nextId: second.nextId! });
    expect(last).toMatchObject({ length: 1, nextId: null });
    expect((await vigil.services.list(a, { paginated: 'false' })).length).toBe(5);
  });

  it('status-page incidents: newest first, updates newest first, duration grows', async () => {
    const { vigil, a, clock } = await setup();
    const api = await vigil.services.create(a, { name: 'API' });
    const first = await vigil.statusPageIncidents.create(a, { name: 'Slow', serviceIds: [api.id], incidentUpdate: { description: 'Slow answers' } });
    clock.advance(60_000);
    await vigil.statusPageIncidents.create(a, { name: 'Down', serviceIds: [api.id], incidentUpdate: { description: 'Down', notifySubscribers: true } });
    const updated = await vigil.statusPageIncidents.addUpdate(a, first.id, { description: 'Recovering' });
    expect(updated.incidentUpdates.map((u) => u.description)).toEqual(['Recovering', 'Slow answers']);
    const list = await vigil.statusPageIncidents.list(a, { limit: '1' });
    expect(list.entries.map((e) => e.name)).toEqual(['Down']);
    expect(list.entries[0]!.incidentUpdates[0]!.notifySubscribers).toBe(true);
    const next = await vigil.statusPageIncidents.list(a, { nextId: list.nextId! });
    expect(next.entries[0]).toMatchObject({ name: 'Slow', duration: 60_000 });
  });
});

describe('maintenance windows', () => {
  it('CRUD and their effect on a check now', async () => {
    const { vigil, a, b } = await setup();
    const w = await vigil.maintenanceWindows.create(a, {
      name: 'db upgrade', startsAt: '2026-05-01T11:00:00Z', endsAt: '2026-05-01T13:00:00Z', repeatUnit: 'DAY', tags: ['db'],
    });
    expect(w).toMatchObject({ repeatInterval: null, timezone: 'UTC', created_at: '2026-05-01T12:00:00.000Z' });
    const now = new Date('2026-05-01T12:00:00Z');
    expect(await vigil.maintenanceWindows.activeEffect(a, { tags: ['db'] }, now)).toEqual({ paused: true, silenced: true, windowIds: [w.id] });
    expect((await vigil.maintenanceWindows.activeEffect(b, { tags: ['db'] }, now)).paused).toBe(false);
    expect(await code(vigil.maintenanceWindows.update(a, w.id, { name: 'x' }))).toBe('VALIDATION');
    const moved = await vigil.maintenanceWindows.update(a, w.id, { name: 'db', startsAt: '2026-05-02T11:00:00Z', endsAt: '2026-05-02T13:00:00Z', repeatUnit: 'WEEK' });
    expect(moved.tags).toEqual(['db']);
    expect(await code(vigil.maintenanceWindows.delete(b, w.id))).toBe('NOT_FOUND');
    await vigil.maintenanceWindows.delete(a, w.id);
    expect((await vigil.maintenanceWindows.list(a, {})).total).toBe(0);
  });
});
