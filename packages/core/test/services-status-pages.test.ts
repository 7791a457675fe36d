import { describe, expect, it } from 'vitest';
import { ConflictError, ValidationError } from '../src/errors.js';
import { ServiceCatalog } from '../src/services/service-catalog.js';
import { StatusPageIncidentService } from '../src/services/status-page-incidents.js';
import { StatusPageService } from '../src/services/status-pages.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  return {
    storage,
    clock: deps.clock,
    pages: new StatusPageService(deps),
    services: new ServiceCatalog(deps),
    incidents: new StatusPageIncidentService(deps),
  };
}

async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof Error)) throw new Error('expected a rejection');
  return err;
}

const keys = async (p: Promise<unknown>) => ((await failure(p)) as ValidationError).keys;

describe('StatusPageService', () => {
  it('creates a page with the defaults; cards answer their services resolved', async () => {
    const { pages, services, storage } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const web = await services.create(ACCOUNT_A, { name: 'Web' });
    const page = await pages.create(ACCOUNT_A, { name: 'Acme', url: 'Acme', cards: [{ name: 'Core', serviceIds: [web.id, api.id] }, { name: 'Empty' }] });
    expect(page).toMatchObject({
      name: 'Acme', url: 'acme', description: null, customDomain: null, logo: null, redirectTo: null, favicon: null,
      defaultTheme: 'AUTO', whiteLabel: false, isPrivate: false, created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
    });
    expect(page).not.toHaveProperty('accountId');
    expect(page.cards.map((c) => [c.name, c.services.map((s) => s.name)])).toEqual([['Core', ['Web', 'API']], ['Empty', []]]);
    expect(page.cards[0]).toMatchObject({ id: expect.any(String), created_at: '2026-05-01T12:00:00.000Z', updated_at: null });
    expect(page.cards[0]).not.toHaveProperty('serviceIds');
    const stored = await storage.statusPages.get(ACCOUNT_A, page.id);
    expect(stored?.cards[0]?.serviceIds).toEqual([web.id, api.id]);
  });

  it('every card service must be a service of the account; a refused page stores nothing', async () => {
    const { pages, services, storage } = setup();
    const mine = await services.create(ACCOUNT_A, { name: 'API' });
    const theirs = await services.create(ACCOUNT_B, { name: 'Theirs' });
    expect(await keys(pages.create(ACCOUNT_A, { name: 'x', url: 'x', cards: [{ name: 'a', serviceIds: [mine.id] }, { name: 'b', serviceIds: [mine.id, theirs.id] }] })))
      .toEqual(['cards.1.serviceIds']);
    expect(await keys(pages.create(ACCOUNT_A, { name: 'x', url: 'x', cards: [{ name: 'a', serviceIds: ['unknown'] }] }))).toEqual(['cards.0.serviceIds']);
    expect(await keys(pages.create(ACCOUNT_A, { url: 'x' }))).toEqual(['name']);
    expect(await storage.raw.dump('status_pages')).toEqual([]);
  });

  it('url is unique across all accounts', async () => {
    const { pages, storage } = setup();
    await pages.create(ACCOUNT_A, { name: 'Acme', url: 'acme' });
    const err = await failure(pages.create(ACCOUNT_B, { name: 'Other', url: 'ACME' }));
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.message).toBe('url "acme" is already taken');
    expect((await storage.statusPages.list(ACCOUNT_B)).total).toBe(0);
  });

  it('update merges; cards keep their ids by position; a taken url is refused and changes nothing', async () => {
    const { pages, services, storage, clock } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const page = await pages.create(ACCOUNT_A, { name: 'Acme', url: 'acme', description: 'Ours', cards: [{ name: 'Core', serviceIds: [api.id] }] });
    await pages.create(ACCOUNT_B, { name: 'Other', url: 'taken' });
    clock.advance(1_000);
    const renamed = await pages.update(ACCOUNT_A, page.id, { name: 'Acme Inc' });
    expect(renamed).toMatchObject({ name: 'Acme Inc', url: 'acme', description: 'Ours', created_at: page.created_at, updated_at: '2026-05-01T12:00:01.000Z' });
    expect(renamed.cards).toEqual(page.cards);
    const recarded = await pages.update(ACCOUNT_A, page.id, { cards: [{ name: 'Core 2', serviceIds: [] }, { name: 'New', serviceIds: [api.id] }] });
    expect(recarded.cards[0]).toMatchObject({ id: page.cards[0]!.id, name: 'Core 2', services: [], created_at: page.cards[0]!.created_at, updated_at: '2026-05-01T12:00:01.000Z' });
    expect(recarded.cards[1]).toMatchObject({ name: 'New', updated_at: null });
    expect(recarded.cards[1]!.id).not.toBe(page.cards[0]!.id);
    expect((await pages.update(ACCOUNT_A, page.id, { url: 'ACME' })).url).toBe('acme');
    expect(await code(pages.update(ACCOUNT_A, page.id, { url: 'taken', name: 'changed' }))).toBe('CONFLICT');
    expect(await keys(pages.update(ACCOUNT_A, page.id, { defaultTheme: 'PINK' }))).toEqual(['defaultTheme']);
    expect(await storage.statusPages.get(ACCOUNT_A, page.id)).toMatchObject({ url: 'acme', name: 'Acme Inc', defaultTheme: 'AUTO' });
  });

  it('another account neither reads, changes nor deletes a page', async () => {
    const { pages, storage } = setup();
    const page = await pages.create(ACCOUNT_A, { name: 'Acme', url: 'acme' });
    expect(await code(pages.get(ACCOUNT_B, page.id))).toBe('NOT_FOUND');
    expect(await code(pages.update(ACCOUNT_B, page.id, { name: 'x' }))).toBe('NOT_FOUND');
    expect(await code(pages.delete(ACCOUNT_B, page.id))).toBe('NOT_FOUND');
    expect(await storage.statusPages.get(ACCOUNT_A, page.id)).toMatchObject({ name: 'Acme', updated_at: null });
    expect((await pages.list(ACCOUNT_B, {})).items).toEqual([]);
  });

  it('lists pages, deletes, and drops a deleted service from its cards', async () => {
    const { pages, services } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const page = await pages.create(ACCOUNT_A, { name: 'a', url: 'a', cards: [{ name: 'Core', serviceIds: [api.id] }] });
    await pages.create(ACCOUNT_A, { name: 'b', url: 'b' });
    expect((await pages.list(ACCOUNT_A, { limit: '1', page: '2' }))).toMatchObject({ total: 2, offset: 1, items: [{ name: 'b' }] });
    await services.delete(ACCOUNT_A, api.id);
    expect((await pages.get(ACCOUNT_A, page.id)).cards[0]!.services).toEqual([]);
    await pages.delete(ACCOUNT_A, page.id);
    expect((await failure(pages.get(ACCOUNT_A, page.id))).message).toBe('Status page not found');
  });

  it('findPublic finds a page of any account by url', async () => {
    const { pages } = setup();
    const page = await pages.create(ACCOUNT_B, { name: 'Acme', url: 'acme' });
    expect((await pages.findPublic('ACME'))?.id).toBe(page.id);
    expect(await pages.findPublic('nobody')).toBeNull();
  });

  it('a url may not have the form of an id, so no page can answer at another page\'s /s/{id}', async () => {
    const { pages, storage } = setup();
    const page = await pages.create(ACCOUNT_A, { name: 'Acme', url: 'acme' });
    expect(await keys(pages.create(ACCOUNT_B, { name: 'Fake', url: page.id }))).toEqual(['url']);
    expect(await keys(pages.update(ACCOUNT_A, page.id, { url: '0B5E6C4A-1F2D-4C3B-9A8E-7D6C5B4A3F2E' }))).toEqual(['url']);
    expect(await storage.raw.dump('status_pages')).toHaveLength(1);
  });
});

describe('ServiceCatalog', () => {
  it('creates, reads, renames and deletes services of the account', async () => {
    const { services, storage, clock } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    expect(api).toEqual({ id: expect.any(String), accountId: ACCOUNT_A, name: 'API', created_at: '2026-05-01T12:00:00.000Z', updated_at: null });
    expect(await services.get(ACCOUNT_A, api.id)).toEqual(api);
    clock.advance(1_000);
    expect(await services.update(ACCOUNT_A, api.id, { name: 'Public API' })).toMatchObject({ name: 'Public API', created_at: api.created_at, updated_at: '2026-05-01T12:00:01.000Z' });
    expect((await storage.services.get(ACCOUNT_A, api.id))?.name).toBe('Public API');
    await services.delete(ACCOUNT_A, api.id);
    expect((await failure(services.get(ACCOUNT_A, api.id))).message).toBe('Service not found');
  });

  it('name is required, 1..200 characters', async () => {
    const { services, storage } = setup();
    expect(await keys(services.create(ACCOUNT_A, {}))).toEqual(['name']);
    expect(await keys(services.create(ACCOUNT_A, { name: '' }))).toEqual(['name']);
    expect(await keys(services.create(ACCOUNT_A, { name: 'n'.repeat(201) }))).toEqual(['name']);
    expect(await storage.raw.dump('services')).toEqual([]);
    expect((await services.create(ACCOUNT_A, { name: 'n' })).name).toBe('n');
    expect((await services.create(ACCOUNT_A, { name: 'n'.repeat(200) })).name).toHaveLength(200);
  });

  it('another account neither reads, renames nor deletes a service', async () => {
    const { services, storage } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    expect(await code(services.get(ACCOUNT_B, api.id))).toBe('NOT_FOUND');
    expect(await code(services.update(ACCOUNT_B, api.id, { name: 'x' }))).toBe('NOT_FOUND');
    expect(await code(services.delete(ACCOUNT_B, api.id))).toBe('NOT_FOUND');
    expect((await storage.services.get(ACCOUNT_A, api.id))?.name).toBe('API');
    expect((await services.list(ACCOUNT_B, {})).entries).toEqual([]);
  });

  it('lists by cursor (limit default 20, 1..100), or all at once when paginated is false', async () => {
    const { services } = setup();
    const names = Array.from({ length: 23 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    for (const name of names) await services.create(ACCOUNT_A, { name });
    const first = await services.list(ACCOUNT_A, {});
    expect(first.length).toBe(20);
    expect(first.entries.map((s) => s.name)).toEqual(names.slice(0, 20));
    expect(first.nextId).toBe(first.entries[19]!.id);
    const rest = await services.list(ACCOUNT_A, { nextId: first.nextId! });
    expect(rest).toMatchObject({ length: 3, nextId: null });
    expect(rest.entries.map((s) => s.name)).toEqual(names.slice(20));
    expect((await services.list(ACCOUNT_A, { limit: '1' })).entries.map((s) => s.name)).toEqual(['s00']);
    expect((await services.list(ACCOUNT_A, { limit: '100' })).length).toBe(23);
    expect(await code(services.list(ACCOUNT_A, { limit: '0' }))).toBe('VALIDATION');
    expect(await code(services.list(ACCOUNT_A, { limit: '101' }))).toBe('VALIDATION');
    const all = await services.list(ACCOUNT_A, { paginated: 'false', limit: '1' });
    expect(all).toMatchObject({ length: 23, nextId: null });
    expect(await code(services.list(ACCOUNT_A, { paginated: 'maybe' }))).toBe('VALIDATION');
  });
});

describe('StatusPageIncidentService', () => {
  it('creates an entry with its services and first update; publicIncidentUpdateDate defaults to created_at', async () => {
    const { incidents, services, storage } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const entry = await incidents.create(ACCOUNT_A, { name: 'Slow', serviceIds: [api.id], incidentUpdate: { description: 'Slow answers' } });
    expect(entry).toEqual({
      name: 'Slow', id: expect.any(String), services: [api], created_at: '2026-05-01T12:00:00.000Z', duration: 0, updated_at: null,
      status: 'INVESTIGATING', stoppedAt: null,
      incidentUpdates: [{ description: 'Slow answers', id: expect.any(String), status: 'INVESTIGATING', created_at: '2026-05-01T12:00:00.000Z', publicIncidentUpdateDate: '2026-05-01T12:00:00.000Z', notifySubscribers: false }],
    });
    expect(await storage.statusPageIncidents.listUpdates(ACCOUNT_A, entry.id)).toHaveLength(1);
    const dated = await incidents.create(ACCOUNT_A, { name: 'Old', serviceIds: [api.id], incidentUpdate: { description: 'x', notifySubscribers: true, publicIncidentUpdateDate: '2026-04-30T08:00:00Z' } });
    expect(dated.incidentUpdates[0]).toMatchObject({ notifySubscribers: true, publicIncidentUpdateDate: '2026-04-30T08:00:00.000Z' });
  });

  it('serviceIds must be services of the account; a refused incident stores nothing', async () => {
    const { incidents, services, storage } = setup();
    const mine = await services.create(ACCOUNT_A, { name: 'API' });
    const theirs = await services.create(ACCOUNT_B, { name: 'Theirs' });
    const update = { description: 'x' };
    expect(await keys(incidents.create(ACCOUNT_A, { name: 'x', serviceIds: [mine.id, theirs.id], incidentUpdate: update }))).toEqual(['serviceIds.1']);
    expect(await keys(incidents.create(ACCOUNT_A, { name: 'x', serviceIds: [], incidentUpdate: update }))).toEqual(['serviceIds']);
    expect(await keys(incidents.create(ACCOUNT_A, { name: 'x', serviceIds: [mine.id], incidentUpdate: {} }))).toEqual(['incidentUpdate.description']);
    expect(await storage.raw.dump('status_page_incidents')).toEqual([]);
    expect(await storage.raw.dump('status_page_incident_updates')).toEqual([]);
  });

  it('addUpdate adds the newest update first and stamps updated_at; duration grows with the clock', async () => {
    const { incidents, services, clock } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const entry = await incidents.create(ACCOUNT_A, { name: 'Slow', serviceIds: [api.id], incidentUpdate: { description: 'Slow answers' } });
    clock.advance(90_000);
    const updated = await incidents.addUpdate(ACCOUNT_A, entry.id, { description: 'Recovering' });
    expect(updated.incidentUpdates.map((u) => u.description)).toEqual(['Recovering', 'Slow answers']);
    expect(updated).toMatchObject({ duration: 90_000, updated_at: '2026-05-01T12:01:30.000Z', created_at: '2026-05-01T12:00:00.000Z' });
    expect(await keys(incidents.addUpdate(ACCOUNT_A, entry.id, { description: '' }))).toEqual(['description']);
  });

  it('an update carries a status; RESOLVED stops the clock, a later status reopens; a bad status changes nothing', async () => {
    const { incidents, services, clock, storage } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const entry = await incidents.create(ACCOUNT_A, { name: 'Down', serviceIds: [api.id], incidentUpdate: { description: 'Down', status: 'IDENTIFIED' } });
    expect(entry).toMatchObject({ status: 'IDENTIFIED', stoppedAt: null });
    clock.advance(60_000);
    const kept = await incidents.addUpdate(ACCOUNT_A, entry.id, { description: 'Still looking' });
    expect(kept.incidentUpdates[0]).toMatchObject({ status: 'IDENTIFIED' });
    clock.advance(60_000);
    const resolved = await incidents.addUpdate(ACCOUNT_A, entry.id, { description: 'Fixed', status: 'RESOLVED' });
    expect(resolved).toMatchObject({ status: 'RESOLVED', stoppedAt: '2026-05-01T12:02:00.000Z', duration: 120_000 });
    clock.advance(600_000);
    expect((await incidents.list(ACCOUNT_A, {})).entries[0]).toMatchObject({ duration: 120_000 });
    const again = await incidents.addUpdate(ACCOUNT_A, entry.id, { description: 'Fixed, a note', status: 'RESOLVED' });
    expect(again.stoppedAt).toBe('2026-05-01T12:02:00.000Z');
    expect(await keys(incidents.addUpdate(ACCOUNT_A, entry.id, { description: 'x', status: 'GONE' }))).toEqual(['status']);
    expect(await storage.statusPageIncidents.listUpdates(ACCOUNT_A, entry.id)).toHaveLength(4);
    const reopened = await incidents.addUpdate(ACCOUNT_A, entry.id, { description: 'Back', status: 'INVESTIGATING' });
    expect(reopened).toMatchObject({ status: 'INVESTIGATING', stoppedAt: null });
  });

  it('another account can add no update', async () => {
    const { incidents, services, storage } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    const entry = await incidents.create(ACCOUNT_A, { name: 'Slow', serviceIds: [api.id], incidentUpdate: { description: 'x' } });
    expect(await code(incidents.addUpdate(ACCOUNT_B, entry.id, { description: 'y' }))).toBe('NOT_FOUND');
    expect(await storage.statusPageIncidents.listUpdates(ACCOUNT_A, entry.id)).toHaveLength(1);
    expect((await incidents.list(ACCOUNT_B, {})).entries).toEqual([]);
  });

  it('lists newest first by cursor; limit 1..100, default 20', async () => {
    const { incidents, services, clock } = setup();
    const api = await services.create(ACCOUNT_A, { name: 'API' });
    for (let i = 0; i < 22; i++) {
      await incidents.create(ACCOUNT_A, { name: `i${i}`, serviceIds: [api.id], incidentUpdate: { description: 'x' } });
      clock.advance(1_000);
    }
    const first = await incidents.list(ACCOUNT_A, undefined);
    expect(first.length).toBe(20);
    expect(first.entries[0]).toMatchObject({ name: 'i21', duration: 1_000 });
    const rest = await incidents.list(ACCOUNT_A, { nextId: first.nextId! });
    expect(rest).toMatchObject({ length: 2, nextId: null });
    expect(rest.entries.map((e) => e.name)).toEqual(['i1', 'i0']);
    expect((await incidents.list(ACCOUNT_A, { limit: '1' })).entries.map((e) => e.name)).toEqual(['i21']);
    expect((await incidents.list(ACCOUNT_A, { limit: '100' })).length).toBe(22);
    expect(await code(incidents.list(ACCOUNT_A, { limit: '0' }))).toBe('VALIDATION');
    expect(await code(incidents.list(ACCOUNT_A, { limit: '101' }))).toBe('VALIDATION');
  });
});
