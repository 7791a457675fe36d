import { describe, expect, it } from 'vitest';
import { ConflictError, ValidationError } from '../src/errors.js';
import { DashboardService } from '../src/services/dashboards.js';
import { incidentFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

function setup() {
  const storage = memoryStorage();
  const deps = testDeps({ storage });
  return { deps, storage, clock: deps.clock, dashboards: new DashboardService(deps) };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => 'resolved', (err: unknown) => err);
}

describe('DashboardService.create', () => {
  it('stores the spec defaults, a numeric id, a uuid dashboardId and the clock time', async () => {
    const { dashboards, storage } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops', customUrl: 'acme-ops' });
    expect(d).toMatchObject({
      header: 'Ops', customUrl: 'acme-ops', width: 'FULL', refreshRate: 60, paginate: true, paginationRate: 60,
      checksPerPage: 15, useTagsAndOperator: false, hideTags: false, enableIncidents: false, expandChecks: false,
      tags: [], showHeader: true, showCheckRunLinks: false, showGroupNames: true, customCSS: '', isPrivate: false,
      showP95: true, showP99: true, keys: [], created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
    });
    expect(typeof d.id).toBe('number');
    expect(d.dashboardId).toMatch(/^[0-9a-f-]{36}$/);
    expect(d).not.toHaveProperty('accountId');
    const stored = await storage.dashboards.get(ACCOUNT_A, d.id);
    expect(stored).toMatchObject({ accountId: ACCOUNT_A, customUrl: 'acme-ops', dashboardId: d.dashboardId });
  });

  it('derives customUrl from the dashboardId when absent', async () => {
    const { dashboards } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops' });
    expect(d.customUrl).toBe(`dashboard-${d.dashboardId.slice(0, 8)}`);
  });

  it('requires header and stores nothing for a rejected body', async () => {
    const { dashboards, storage } = setup();
    const err = await rejection(dashboards.create(ACCOUNT_A, { customUrl: 'x' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).keys).toEqual(['header']);
    expect((err as ValidationError).source).toBe('payload');
    expect(await storage.raw.dump('dashboards')).toEqual([]);
  });

  it('checksPerPage takes 1..20 and refreshRate only 60, 300, 600', async () => {
    const { dashboards } = setup();
    expect(await code(dashboards.create(ACCOUNT_A, { header: 'x', checksPerPage: 0 }))).toBe('VALIDATION');
    expect((await dashboards.create(ACCOUNT_A, { header: 'x', checksPerPage: 1 })).checksPerPage).toBe(1);
    expect((await dashboards.create(ACCOUNT_A, { header: 'x', checksPerPage: 20 })).checksPerPage).toBe(20);
    expect(await code(dashboards.create(ACCOUNT_A, { header: 'x', checksPerPage: 21 }))).toBe('VALIDATION');
    expect(await code(dashboards.create(ACCOUNT_A, { header: 'x', refreshRate: 59 }))).toBe('VALIDATION');
    expect((await dashboards.create(ACCOUNT_A, { header: 'x', refreshRate: 600 })).refreshRate).toBe(600);
  });

  it('customUrl is unique across all accounts, whatever its case', async () => {
    const { dashboards, storage } = setup();
    await dashboards.create(ACCOUNT_A, { header: 'Ops', customUrl: 'acme' });
    const err = await rejection(dashboards.create(ACCOUNT_B, { header: 'Other', customUrl: 'ACME' }));
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toBe('customUrl "acme" is already taken');
    expect((await storage.dashboards.list(ACCOUNT_B)).total).toBe(0);
  });
});

describe('DashboardService.update', () => {
  it('merges the given fields onto the stored dashboard and stamps updated_at', async () => {
    const { dashboards, storage, clock } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops', customUrl: 'ops', tags: ['prod'], refreshRate: 300 });
    clock.advance(60_000);
    const u = await dashboards.update(ACCOUNT_A, d.id, { header: 'Ops 2' });
    expect(u).toMatchObject({ header: 'Ops 2', customUrl: 'ops', tags: ['prod'], refreshRate: 300, dashboardId: d.dashboardId });
    expect(u.created_at).toBe(d.created_at);
    expect(u.updated_at).toBe('2026-05-01T12:01:00.000Z');
    expect((await storage.dashboards.get(ACCOUNT_A, d.id))?.header).toBe('Ops 2');
  });

  it('keeps its own customUrl, takes a free one, refuses one another account holds', async () => {
    const { dashboards, storage } = setup();
    const mine = await dashboards.create(ACCOUNT_A, { header: 'Ops', customUrl: 'mine' });
    await dashboards.create(ACCOUNT_B, { header: 'Theirs', customUrl: 'theirs' });
    expect((await dashboards.update(ACCOUNT_A, mine.id, { customUrl: 'MINE' })).customUrl).toBe('mine');
    expect((await dashboards.update(ACCOUNT_A, mine.id, { customUrl: 'free' })).customUrl).toBe('free');
    expect(await code(dashboards.update(ACCOUNT_A, mine.id, { customUrl: 'theirs', header: 'changed' }))).toBe('CONFLICT');
    expect(await storage.dashboards.get(ACCOUNT_A, mine.id)).toMatchObject({ customUrl: 'free', header: 'Ops' });
  });

  it('refuses an invalid merged body and changes nothing', async () => {
    const { dashboards, storage } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops' });
    const err = await rejection(dashboards.update(ACCOUNT_A, d.id, { checksPerPage: 21, header: 'x' }));
    expect((err as ValidationError).keys).toEqual(['checksPerPage']);
    expect(await storage.dashboards.get(ACCOUNT_A, d.id)).toMatchObject({ header: 'Ops', checksPerPage: 15 });
  });

  it('making a dashboard private gives it its first key', async () => {
    const { dashboards } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops' });
    const u = await dashboards.update(ACCOUNT_A, d.id, { isPrivate: true });
    expect(u.keys).toHaveLength(1);
    expect((await dashboards.update(ACCOUNT_A, d.id, { header: 'again' })).keys.map((k) => k.id)).toEqual([u.keys[0]!.id]);
  });
});

describe('DashboardService reads and deletes', () => {
  it('another account reads, changes and deletes nothing', async () => {
    const { dashboards, storage } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops', isPrivate: true });
    expect(await code(dashboards.get(ACCOUNT_B, d.id))).toBe('NOT_FOUND');
    expect(await code(dashboards.update(ACCOUNT_B, d.id, { header: 'x' }))).toBe('NOT_FOUND');
    expect(await code(dashboards.delete(ACCOUNT_B, d.id))).toBe('NOT_FOUND');
    expect(await code(dashboards.createKey(ACCOUNT_B, d.id))).toBe('NOT_FOUND');
    expect(await code(dashboards.deleteKey(ACCOUNT_B, d.id, d.keys[0]!.id))).toBe('NOT_FOUND');
    const stored = await storage.dashboards.get(ACCOUNT_A, d.id);
    expect(stored).toMatchObject({ header: 'Ops', updated_at: null });
    expect(stored?.keys).toHaveLength(1);
    expect((await dashboards.list(ACCOUNT_B, {})).items).toEqual([]);
  });

  it('an unknown id is not found and a malformed one names the id param', async () => {
    const { dashboards } = setup();
    const err = (await rejection(dashboards.get(ACCOUNT_A, 999))) as Error;
    expect(err.message).toBe('Dashboard not found');
    const bad = (await rejection(dashboards.get(ACCOUNT_A, 'abc'))) as ValidationError;
    expect(bad.source).toBe('params');
    expect(bad.keys).toEqual(['id']);
    expect(await dashboards.get(ACCOUNT_A, String((await dashboards.create(ACCOUNT_A, { header: 'x' })).id))).toMatchObject({ header: 'x' });
  });

  it('lists a page with total and offset; limit takes 1..100', async () => {
    const { dashboards } = setup();
    for (const header of ['a', 'b', 'c']) await dashboards.create(ACCOUNT_A, { header });
    const page = await dashboards.list(ACCOUNT_A, { limit: '2', page: '2' });
    expect(page).toMatchObject({ total: 3, offset: 2 });
    expect(page.items.map((d) => d.header)).toEqual(['c']);
    expect((await dashboards.list(ACCOUNT_A, undefined)).items).toHaveLength(3);
    expect((await dashboards.list(ACCOUNT_A, { limit: '1' })).items).toHaveLength(1);
    expect((await dashboards.list(ACCOUNT_A, { limit: '100' })).items).toHaveLength(3);
    expect(await code(dashboards.list(ACCOUNT_A, { limit: '0' }))).toBe('VALIDATION');
    expect(await code(dashboards.list(ACCOUNT_A, { limit: '101' }))).toBe('VALIDATION');
    expect(await code(dashboards.list(ACCOUNT_A, { page: '0' }))).toBe('VALIDATION');
  });

  it('delete takes the incidents shown on the dashboard, and only those', async () => {
    const { dashboards, storage } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Ops' });
    const other = await dashboards.create(ACCOUNT_A, { header: 'Other' });
    const gone = await storage.incidents.insert(ACCOUNT_A, incidentFixture(d.id));
    const kept = await storage.incidents.insert(ACCOUNT_A, incidentFixture(other.id));
    await dashboards.delete(ACCOUNT_A, d.id);
    expect(await storage.dashboards.get(ACCOUNT_A, d.id)).toBeNull();
    expect(await storage.incidents.get(ACCOUNT_A, gone.id)).toBeNull();
    expect(await storage.incidents.get(ACCOUNT_A, kept.id)).not.toBeNull();
    expect(await code(dashboards.delete(ACCOUNT_A, d.id))).toBe('NOT_FOUND');
  });
});

describe('private dashboard keys', () => {
  it('a private dashboard gets one key, shown to its owner and sealed at rest', async () => {
    const { dashboards, storage, deps } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Secret', isPrivate: true });
    expect(d.keys).toHaveLength(1);
    const key = d.keys[0]!;
    expect(key.rawKey.length).toBeGreaterThan(8);
    expect(key.maskedKey).toBe(`${key.rawKey.slice(0, 4)}...${key.rawKey.slice(-4)}`);
    expect(key.updated_at).toBe(key.created_at);
    const rows = await storage.raw.dump('dashboards');
    expect(JSON.stringify(rows)).not.toContain(key.rawKey);
    const stored = (await storage.dashboards.get(ACCOUNT_A, d.id))!.keys[0]!;
    expect(deps.secretBox.isSealed(stored.encryptedKey)).toBe(true);
    expect(deps.secretBox.decrypt(stored.encryptedKey)).toBe(key.rawKey);
    expect((await dashboards.get(ACCOUNT_A, d.id)).keys[0]!.rawKey).toBe(key.rawKey);
  });

  it('createKey adds a key, deleteKey removes one; an unknown key is not found', async () => {
    const { dashboards, clock } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Secret', isPrivate: true });
    clock.advance(1_000);
    const more = await dashboards.createKey(ACCOUNT_A, d.id);
    expect(more.keys).toHaveLength(2);
    expect(more.keys[1]!.rawKey).not.toBe(more.keys[0]!.rawKey);
    expect(more.keys[1]!.created_at).toBe('2026-05-01T12:00:01.000Z');
    expect(more.updated_at).toBe('2026-05-01T12:00:01.000Z');
    const fewer = await dashboards.deleteKey(ACCOUNT_A, d.id, d.keys[0]!.id);
    expect(fewer.keys.map((k) => k.id)).toEqual([more.keys[1]!.id]);
    expect((await rejection(dashboards.deleteKey(ACCOUNT_A, d.id, d.keys[0]!.id)) as Error).message).toBe('Dashboard key not found');
  });

  it('verifyKey opens a private dashboard with any of its keys and nothing else', async () => {
    const { dashboards, storage } = setup();
    const d = await dashboards.create(ACCOUNT_A, { header: 'Secret', isPrivate: true });
    const second = (await dashboards.createKey(ACCOUNT_A, d.id)).keys[1]!.rawKey;
    const record = (await storage.dashboards.get(ACCOUNT_A, d.id))!;
    const raw = d.keys[0]!.rawKey;
    expect(dashboards.verifyKey(record, raw)).toBe(true);
    expect(dashboards.verifyKey(record, second)).toBe(true);
    expect(dashboards.verifyKey(record, `${raw}x`)).toBe(false);
    expect(dashboards.verifyKey(record, raw.slice(0, -1))).toBe(false);
    expect(dashboards.verifyKey(record, '')).toBe(false);
    expect(dashboards.verifyKey(record, null)).toBe(false);
    expect(dashboards.verifyKey(record, undefined)).toBe(false);
    const open = (await storage.dashboards.get(ACCOUNT_A, (await dashboards.create(ACCOUNT_A, { header: 'Open' })).id))!;
    expect(dashboards.verifyKey(open, undefined)).toBe(true);
  });
});

describe('DashboardService.findPublic and findByDomain', () => {
  it('find a dashboard of any account by customUrl, or by customDomain, never one by the other', async () => {
    const { dashboards } = setup();
    const d = await dashboards.create(ACCOUNT_B, { header: 'Ops', customUrl: 'acme', customDomain: 'status.acme.com' });
    expect((await dashboards.findPublic('ACME'))?.id).toBe(d.id);
    expect(await dashboards.findPublic('status.acme.com')).toBeNull();
    expect((await dashboards.findByDomain('Status.Acme.com'))?.id).toBe(d.id);
    expect(await dashboards.findByDomain('acme')).toBeNull();
    expect(await dashboards.findPublic('nobody')).toBeNull();
  });

  it('a customDomain is unique across accounts and needs a dot; a refused one changes nothing', async () => {
    const { dashboards, storage } = setup();
    const mine = await dashboards.create(ACCOUNT_A, { header: 'Mine', customDomain: 'status.acme.com' });
    await expect(dashboards.create(ACCOUNT_B, { header: 'Theirs', customDomain: 'STATUS.acme.com' })).rejects.toMatchObject({ code: 'CONFLICT' });
    const theirs = await dashboards.create(ACCOUNT_B, { header: 'Theirs' });
    await expect(dashboards.update(ACCOUNT_B, theirs.id, { customDomain: 'status.acme.com' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(dashboards.create(ACCOUNT_B, { header: 'Bare', customDomain: 'localhost' })).rejects.toMatchObject({ code: 'VALIDATION' });
    expect((await storage.dashboards.get(ACCOUNT_B, theirs.id))?.customDomain).toBeNull();
    expect((await dashboards.update(ACCOUNT_A, mine.id, { header: 'Mine again' })).customDomain).toBe('status.acme.com');
  });
});
