/**
 * The status-page routes of the HTTP API through the real Express router: the pages with their cards,
 * and the services the cards show.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expect409, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, UUID_RE, MISSING_UUID, type Body, ok, created, deleted, ids, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newService } = resourceBuilders(() => h);

  describe('status pages', () => {
    it('POST /v1/status-pages answers 201 with the defaults and its cards\' services; GET by statusPageId and the list read it back', async () => {
      const api = await newService(h.a, 'API');
      const web = await newService(h.a, 'Web');
      const page = await created(h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'Acme-Status', cards: [{ name: 'Core', serviceIds: [api.id, web.id] }, { name: 'Empty' }] }));
      expect(page).toEqual({
        id: expect.stringMatching(UUID_RE),
        name: 'Acme',
        url: 'acme-status',
        description: null,
        customDomain: null,
        themeColors: { light: {}, dark: {} },
        logo: null,
        redirectTo: null,
        favicon: null,
        defaultTheme: 'AUTO',
        cards: [
          { id: expect.stringMatching(UUID_RE), name: 'Core', services: [api, web], created_at: T0, updated_at: null },
          { id: expect.stringMatching(UUID_RE), name: 'Empty', services: [], created_at: T0, updated_at: null },
        ],
        whiteLabel: false,
        isPrivate: false,
        created_at: T0,
        updated_at: null,
      });
      expect(await ok(h.a.get(`/api/v1/status-pages/${page.id}`))).toEqual(page);
      const second = await created(h.a.post('/api/v1/status-pages', {
        name: 'Second', url: 'second', description: 'd'.repeat(500), customDomain: 'status.example.com', defaultTheme: 'DARK',
        themeColors: { light: { bodyBackgroundColor: '#fff', linkFontColor: 'rgb(0, 0, 255)' }, dark: { bodyBackgroundColor: 'black' } },
        logo: 'https://cdn.example.com/l.png', redirectTo: 'https://example.com', favicon: 'https://cdn.example.com/f.ico', whiteLabel: true, isPrivate: true,
      }));
      expect(second).toMatchObject({
        description: 'd'.repeat(500), customDomain: 'status.example.com', defaultTheme: 'DARK', whiteLabel: true, isPrivate: true,
        themeColors: { light: { bodyBackgroundColor: '#fff', linkFontColor: 'rgb(0, 0, 255)' }, dark: { bodyBackgroundColor: 'black' } },
      });
      const list = await h.a.get('/api/v1/status-pages?limit=1&page=2').expect(200);
      expect(list.body).toEqual([second]);
      expect(list.headers['content-range']).toBe('1-1/2');
      expect(await ok(h.b.get('/api/v1/status-pages'))).toEqual([]);
    });

    it('POST refuses each constraint violation naming the field, and stores nothing', async () => {
      const theirService = await newService(h.b, 'Theirs');
      const base = { name: 'Acme', url: 'acme' };
      const cases: [Body, string[]][] = [
        [{}, ['name', 'url']],
        [{ ...base, url: 'Not A Subdomain!' }, ['url']],
        [{ ...base, description: 'd'.repeat(501) }, ['description']],
        [{ ...base, defaultTheme: 'SEPIA' }, ['defaultTheme']],
        [{ ...base, themeColors: { light: { bodyBackgroundColor: 'red;} body{display:none' } } }, ['themeColors.light.bodyBackgroundColor']],
        [{ ...base, logo: 'logo.png', redirectTo: 'ftp://example.com' }, ['logo', 'redirectTo']],
        [{ ...base, customDomain: 'https://status.example.com' }, ['customDomain']],
        [{ ...base, cards: [{ serviceIds: [] }] }, ['cards.0.name']],
        [{ ...base, cards: [{ name: 'Core', serviceIds: [theirService.id] }] }, ['cards.0.serviceIds']],
        [{ ...base, cards: [{ name: 'Core' }, { name: 'Ghost', serviceIds: [MISSING_UUID] }] }, ['cards.1.serviceIds']],
        [{ ...base, whiteLabel: 'yes' }, ['whiteLabel']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.post('/api/v1/status-pages', body), 'payload', ...keys);
      expect(await ok(h.a.get('/api/v1/status-pages'))).toEqual([]);
    });

    it('a status page url is unique across accounts: 409', async () => {
      await created(h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'acme' }));
      expect409(await h.b.post('/api/v1/status-pages', { name: 'Theirs', url: 'ACME' }));
      expect(await ok(h.b.get('/api/v1/status-pages'))).toEqual([]);
      const theirs = await created(h.b.post('/api/v1/status-pages', { name: 'Theirs', url: 'theirs' }));
      expect409(await h.b.put(`/api/v1/status-pages/${theirs.id}`, { url: 'acme' }));
      expect((await ok(h.b.get(`/api/v1/status-pages/${theirs.id}`))).url).toBe('theirs');
    });

    it('PUT /v1/status-pages/{statusPageId} changes the given fields, keeps card ids, and refuses bad values', async () => {
      const api = await newService(h.a, 'API');
      const web = await newService(h.a, 'Web');
      const page = await created(h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id] }] }));
      const path = `/api/v1/status-pages/${page.id}`;
      h.clock.advance(3_000);
      const t1 = new Date(T0_MS + 3_000).toISOString();
      const renamed = await ok(h.a.put(path, { name: 'Acme Inc', description: 'All systems' }));
      expect(renamed).toEqual({ ...page, name: 'Acme Inc', description: 'All systems', updated_at: t1 });
      const recarded = await ok(h.a.put(path, { cards: [{ name: 'Core services', serviceIds: [api.id, web.id] }, { name: 'New', serviceIds: [] }] }));
      expect(recarded.cards[0]).toEqual({ id: page.cards[0].id, name: 'Core services', services: [api, web], created_at: T0, updated_at: t1 });
      expect(recarded.cards[1]).toEqual({ id: expect.stringMatching(UUID_RE), name: 'New', services: [], created_at: t1, updated_at: null });
      expect(recarded.name).toBe('Acme Inc');

      const theirService = await newService(h.b, 'Theirs');
      expect400(await h.a.put(path, { name: '' }), 'payload', 'name');
      expect400(await h.a.put(path, { description: 'd'.repeat(501) }), 'payload', 'description');
      expect400(await h.a.put(path, { url: 'bad url' }), 'payload', 'url');
      expect400(await h.a.put(path, { defaultTheme: 'BLUE' }), 'payload', 'defaultTheme');
      expect400(await h.a.put(path, { cards: [{ name: 'x', serviceIds: [theirService.id] }] }), 'payload', 'cards.0.serviceIds');
      expect(await ok(h.a.get(path))).toEqual(recarded);
      expect404(await h.a.put(`/api/v1/status-pages/${MISSING_UUID}`, { name: 'x' }));
    });

    it('DELETE /v1/status-pages/{statusPageId} answers 204 and leaves the services', async () => {
      const api = await newService(h.a, 'API');
      const page = await created(h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id] }] }));
      await deleted(h.a.delete(`/api/v1/status-pages/${page.id}`));
      expect404(await h.a.get(`/api/v1/status-pages/${page.id}`));
      expect404(await h.a.delete(`/api/v1/status-pages/${page.id}`));
      expect(await ok(h.a.get('/api/v1/status-pages'))).toEqual([]);
      expect(await ok(h.a.get(`/api/v1/status-pages/services/${api.id}`))).toEqual(api);
      // The url is free again.
      await created(h.b.post('/api/v1/status-pages', { name: 'Theirs', url: 'acme' }));
    });

    it('401 and 403 on every status-page route; 404 for another account\'s page, which stays as it was', async () => {
      const page = await created(h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'acme' }));
      const path = `/api/v1/status-pages/${page.id}`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/status-pages'],
        ['get', path],
        ['post', '/api/v1/status-pages', { name: 'x', url: 'x' }],
        ['put', path, { name: 'x' }],
        ['delete', path],
      ]);
      await expectHiddenFromB(h, [
        ['get', path],
        ['put', path, { name: 'taken over' }],
        ['delete', path],
      ]);
      expect(await ok(h.a.get('/api/v1/status-pages'))).toEqual([page]);
    });
  });

  describe('status-page services', () => {
    it('POST /v1/status-pages/services answers 201; GET, PUT and DELETE by id', async () => {
      const service = await newService(h.a, '  Checkout API ');
      expect(service).toEqual({ id: expect.stringMatching(UUID_RE), accountId: h.a.accountId, name: 'Checkout API', created_at: T0, updated_at: null });
      const path = `/api/v1/status-pages/services/${service.id}`;
      expect(await ok(h.a.get(path))).toEqual(service);
      h.clock.advance(1_000);
      const renamed = await ok(h.a.put(path, { name: 'Payments API', accountId: h.b.accountId }));
      expect(renamed).toEqual({ ...service, name: 'Payments API', updated_at: new Date(T0_MS + 1_000).toISOString() });
      expect(await ok(h.a.get(path))).toEqual(renamed);
      await deleted(h.a.delete(path));
      expect404(await h.a.get(path));
      expect404(await h.a.put(path, { name: 'x' }));
      expect404(await h.a.delete(path));
    });

    it('POST and PUT refuse a missing, empty or too long name', async () => {
      const service = await newService(h.a, 'API');
      const path = `/api/v1/status-pages/services/${service.id}`;
      for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'n'.repeat(201) }, { name: 42 }]) {
        expect400(await h.a.post('/api/v1/status-pages/services', body), 'payload', 'name');
        expect400(await h.a.put(path, body), 'payload', 'name');
      }
      expect((await created(h.a.post('/api/v1/status-pages/services', { name: 'n'.repeat(200) }))).name).toHaveLength(200);
      expect(await ok(h.a.get(path))).toEqual(service);
      expect((await ok(h.a.get('/api/v1/status-pages/services'))).length).toBe(2);
    });

    it('GET /v1/status-pages/services is a cursor list: limit (default 20), nextId, and paginated=false for all', async () => {
      const made = [];
      for (let i = 0; i < 21; i++) made.push(await h.vigil.services.create(h.a.accountId, { name: `svc ${i}` }));
      const first = await ok(h.a.get('/api/v1/status-pages/services'));
      expect(first).toEqual({ length: 20, entries: made.slice(0, 20), nextId: made[19]!.id });
      expect(await ok(h.a.get(`/api/v1/status-pages/services?nextId=${first.nextId}`))).toEqual({ length: 1, entries: [made[20]], nextId: null });
      const five = await ok(h.a.get('/api/v1/status-pages/services?limit=5'));
      expect(five).toEqual({ length: 5, entries: made.slice(0, 5), nextId: made[4]!.id });
      expect(await ok(h.a.get(`/api/v1/status-pages/services?limit=5&nextId=${five.nextId}`))).toEqual({ length: 5, entries: made.slice(5, 10), nextId: made[9]!.id });
      expect(await ok(h.a.get('/api/v1/status-pages/services?limit=100'))).toEqual({ length: 21, entries: made, nextId: null });
      expect(await ok(h.a.get('/api/v1/status-pages/services?paginated=false&limit=2'))).toEqual({ length: 21, entries: made, nextId: null });
      expect(await ok(h.a.get('/api/v1/status-pages/services?paginated=true&limit=21'))).toEqual({ length: 21, entries: made, nextId: null });
      expect(await ok(h.a.get(`/api/v1/status-pages/services?nextId=${MISSING_UUID}`))).toEqual({ length: 0, entries: [], nextId: null });
      // Another account's cursor reads nothing of a's.
      expect(await ok(h.b.get(`/api/v1/status-pages/services?nextId=${made[0]!.id}`))).toEqual({ length: 0, entries: [], nextId: null });
      expect(await ok(h.b.get('/api/v1/status-pages/services?paginated=false'))).toEqual({ length: 0, entries: [], nextId: null });

      expect400(await h.a.get('/api/v1/status-pages/services?limit=0'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/status-pages/services?limit=101'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/status-pages/services?limit=ten'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/status-pages/services?paginated=maybe'), 'query', 'paginated');
      expect400(await h.a.get('/api/v1/status-pages/services?nextId='), 'query', 'nextId');
    });

    it('a status page shows a renamed service and drops a deleted one from its cards', async () => {
      const api = await newService(h.a, 'API');
      const web = await newService(h.a, 'Web');
      const page = await created(h.a.post('/api/v1/status-pages', { name: 'Acme', url: 'acme', cards: [{ name: 'Core', serviceIds: [api.id, web.id] }] }));
      const renamed = await ok(h.a.put(`/api/v1/status-pages/services/${api.id}`, { name: 'Public API' }));
      await deleted(h.a.delete(`/api/v1/status-pages/services/${web.id}`));
      expect((await ok(h.a.get(`/api/v1/status-pages/${page.id}`))).cards[0].services).toEqual([renamed]);
    });

    it('401 and 403 on every service route; 404 for another account\'s service, which stays as it was', async () => {
      const service = await newService(h.a, 'API');
      const path = `/api/v1/status-pages/services/${service.id}`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/status-pages/services'],
        ['post', '/api/v1/status-pages/services', { name: 'x' }],
        ['get', path],
        ['put', path, { name: 'x' }],
        ['delete', path],
      ]);
      await expectHiddenFromB(h, [
        ['get', path],
        ['put', path, { name: 'taken over' }],
        ['delete', path],
      ]);
      expect(await ok(h.a.get('/api/v1/status-pages/services'))).toEqual({ length: 1, entries: [service], nextId: null });
    });
  });
});
