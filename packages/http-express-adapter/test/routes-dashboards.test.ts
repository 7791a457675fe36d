/**
 * The dashboard routes of the HTTP API through the real Express router, with their access keys.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expect409, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, UUID_RE, MISSING_UUID, type Body, ok, created, deleted, ids, incidentBody, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newDashboard } = resourceBuilders(() => h);

  describe('dashboards', () => {
    it('POST /v1/dashboards answers 201 with the spec defaults; GET and the list read it back', async () => {
      const dashboard = await newDashboard(h.a, { customUrl: 'acme-status' });
      expect(dashboard).toEqual({
        id: expect.any(Number),
        dashboardId: expect.stringMatching(UUID_RE),
        header: 'Acme status',
        customUrl: 'acme-status',
        customDomain: null,
        logo: null,
        favicon: null,
        link: null,
        description: null,
        width: 'FULL',
        refreshRate: 60,
        paginate: true,
        paginationRate: 60,
        checksPerPage: 15,
        useTagsAndOperator: false,
        hideTags: false,
        enableIncidents: false,
        expandChecks: false,
        tags: [],
        showHeader: true,
        showCheckRunLinks: false,
        showGroupNames: true,
        customCSS: '',
        isPrivate: false,
        showP95: true,
        showP99: true,
        keys: [],
        created_at: T0,
        updated_at: null,
      });
      expect(await ok(h.a.get(`/api/v1/dashboards/${dashboard.id}`))).toEqual(dashboard);
      const second = await newDashboard(h.a, { header: 'Second' });
      expect(second.customUrl).toMatch(/^[a-z0-9-]+$/);
      expect(second.customUrl).not.toBe(dashboard.customUrl);
      const list = await h.a.get('/api/v1/dashboards?limit=1&page=2').expect(200);
      expect(list.body).toEqual([second]);
      expect(list.headers['content-range']).toBe('1-1/2');
      expect(await ok(h.b.get('/api/v1/dashboards'))).toEqual([]);
    });

    it('POST stores every given field and ignores unknown ones', async () => {
      const body = {
        header: 'Payments', customUrl: 'Pay-Status', customDomain: 'Status.Example.com', logo: 'https://cdn.example.com/logo.png',
        favicon: 'https://cdn.example.com/fav.ico', link: 'https://example.com', description: 'All payment systems', width: '960PX',
        refreshRate: 600, paginate: false, paginationRate: 300, checksPerPage: 20, useTagsAndOperator: true, hideTags: true,
        enableIncidents: true, expandChecks: true, tags: ['payments', 'prod'], showHeader: false, showCheckRunLinks: true,
        showGroupNames: false, customCSS: 'body { color: red }', isPrivate: false, showP95: false, showP99: false,
        accountId: h.b.accountId, keys: [{ id: 'x', rawKey: 'stolen' }], dashboardId: 'mine',
      };
      const dashboard = await newDashboard(h.a, body);
      const { accountId: _a, keys: _k, dashboardId: _d, ...stored } = body;
      expect(dashboard).toEqual({
        ...stored, customUrl: 'pay-status', customDomain: 'status.example.com',
        id: expect.any(Number), dashboardId: expect.stringMatching(UUID_RE), keys: [], created_at: T0, updated_at: null,
      });
      const bounds = await newDashboard(h.a, { customUrl: 'one', checksPerPage: 1, refreshRate: 300, paginationRate: 30 });
      expect(bounds).toMatchObject({ checksPerPage: 1, refreshRate: 300, paginationRate: 30 });
    });

    it('POST refuses each constraint violation naming the field, and stores nothing', async () => {
      const cases: [Body, string[]][] = [
        [{}, ['header']],
        [{ header: '   ' }, ['header']],
        [{ header: 'x', checksPerPage: 0 }, ['checksPerPage']],
        [{ header: 'x', checksPerPage: 21 }, ['checksPerPage']],
        [{ header: 'x', checksPerPage: 5.5 }, ['checksPerPage']],
        [{ header: 'x', width: '800PX' }, ['width']],
        [{ header: 'x', refreshRate: 120 }, ['refreshRate']],
        [{ header: 'x', paginationRate: 45 }, ['paginationRate']],
        [{ header: 'x', customUrl: 'not a subdomain!' }, ['customUrl']],
        [{ header: 'x', customDomain: 'https://status.example.com/' }, ['customDomain']],
        [{ header: 'x', logo: 'logo.png', favicon: 'ftp://cdn.example.com/f.ico', link: 'nope' }, ['logo', 'favicon', 'link']],
        [{ header: 'x', tags: ['ok', ''] }, ['tags.1']],
        [{ header: 'x', isPrivate: 'yes', showP95: 0 }, ['isPrivate', 'showP95']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.post('/api/v1/dashboards', body), 'payload', ...keys);
      expect(await ok(h.a.get('/api/v1/dashboards'))).toEqual([]);
    });

    it('customUrl is unique across all accounts: 409 on POST and PUT, for the same and another account', async () => {
      const mine = await newDashboard(h.a, { customUrl: 'acme-status' });
      const second = await newDashboard(h.a, { customUrl: 'acme-other' });
      expect409(await h.a.post('/api/v1/dashboards', { header: 'Copy', customUrl: 'acme-status' }));
      expect409(await h.b.post('/api/v1/dashboards', { header: 'Theirs', customUrl: 'acme-status' }));
      expect409(await h.b.post('/api/v1/dashboards', { header: 'Theirs', customUrl: 'ACME-Status' }));
      expect(await ok(h.b.get('/api/v1/dashboards'))).toEqual([]);
      expect(await ok(h.a.get('/api/v1/dashboards'))).toHaveLength(2);

      expect409(await h.a.put(`/api/v1/dashboards/${second.id}`, { customUrl: 'acme-status' }));
      const theirs = await newDashboard(h.b, { customUrl: 'b-status' });
      expect409(await h.b.put(`/api/v1/dashboards/${theirs.id}`, { customUrl: 'acme-status' }));
      expect409(await h.a.put(`/api/v1/dashboards/${second.id}`, { customUrl: 'B-STATUS' }));
      expect((await ok(h.a.get(`/api/v1/dashboards/${second.id}`))).customUrl).toBe('acme-other');
      expect((await ok(h.b.get(`/api/v1/dashboards/${theirs.id}`))).customUrl).toBe('b-status');
      // Its own customUrl is no conflict; a freed one can be taken.
      await ok(h.a.put(`/api/v1/dashboards/${mine.id}`, { customUrl: 'acme-status', header: 'Renamed' }));
      await ok(h.a.put(`/api/v1/dashboards/${mine.id}`, { customUrl: 'acme-new' }));
      expect((await created(h.b.post('/api/v1/dashboards', { header: 'Theirs', customUrl: 'acme-status' }))).customUrl).toBe('acme-status');
    });

    it('PUT /v1/dashboards/{id} changes the given fields, keeps the others, and refuses bad values', async () => {
      const dashboard = await newDashboard(h.a, { customUrl: 'acme-status', tags: ['prod'] });
      h.clock.advance(5_000);
      const updated = await ok(h.a.put(`/api/v1/dashboards/${dashboard.id}`, { header: 'Acme', checksPerPage: 20, width: '960PX', description: 'hello' }));
      expect(updated).toEqual({
        ...dashboard, header: 'Acme', checksPerPage: 20, width: '960PX', description: 'hello', updated_at: new Date(T0_MS + 5_000).toISOString(),
      });
      const cases: [Body, string[]][] = [
        [{ header: '' }, ['header']],
        [{ checksPerPage: 21 }, ['checksPerPage']],
        [{ checksPerPage: 0 }, ['checksPerPage']],
        [{ refreshRate: 30, paginationRate: 600 }, ['refreshRate', 'paginationRate']],
        [{ customUrl: '-bad-' }, ['customUrl']],
        [{ logo: 'javascript:alert(1)' }, ['logo']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.put(`/api/v1/dashboards/${dashboard.id}`, body), 'payload', ...keys);
      expect(await ok(h.a.get(`/api/v1/dashboards/${dashboard.id}`))).toEqual(updated);
      expect400(await h.a.put('/api/v1/dashboards/abc', { header: 'x' }), 'params', 'id');
      expect404(await h.a.put('/api/v1/dashboards/999999', { header: 'x' }));
    });

    it('POST /v1/dashboards/{id}/keys adds an access key, DELETE /v1/dashboards/{id}/keys/{keyId} removes it', async () => {
      const dashboard = await newDashboard(h.a, { isPrivate: true });
      expect(dashboard.keys).toHaveLength(1);
      const keyShape = {
        id: expect.stringMatching(UUID_RE), rawKey: expect.stringMatching(/^dk_/), maskedKey: expect.any(String), created_at: T0, updated_at: T0,
      };
      expect(dashboard.keys[0]).toEqual(keyShape);
      const withTwo = await created(h.a.post(`/api/v1/dashboards/${dashboard.id}/keys`));
      expect(withTwo.keys).toHaveLength(2);
      expect(withTwo.keys[0]).toEqual(dashboard.keys[0]);
      const added = withTwo.keys[1];
      expect(added).toEqual(keyShape);
      expect(added.rawKey).not.toBe(dashboard.keys[0].rawKey);
      expect(added.maskedKey).toBe(`${added.rawKey.slice(0, 4)}...${added.rawKey.slice(-4)}`);
      expect(await ok(h.a.get(`/api/v1/dashboards/${dashboard.id}`))).toEqual(withTwo);
      // The key is sealed at rest.
      expect(JSON.stringify(await h.vigil.storage.dashboards.get(h.a.accountId, dashboard.id))).not.toContain(added.rawKey);

      const removed = await h.a.delete(`/api/v1/dashboards/${dashboard.id}/keys/${dashboard.keys[0].id}`);
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
      expect((await ok(h.a.get(`/api/v1/dashboards/${dashboard.id}`))).keys).toEqual([added]);
      expect404(await h.a.delete(`/api/v1/dashboards/${dashboard.id}/keys/${dashboard.keys[0].id}`));
      expect404(await h.a.delete(`/api/v1/dashboards/${dashboard.id}/keys/${MISSING_UUID}`));
      expect404(await h.a.post('/api/v1/dashboards/999999/keys'));
      // A public dashboard made private gets its first key.
      const open = await newDashboard(h.a, { header: 'Open' });
      expect(open.keys).toEqual([]);
      const closed = await ok(h.a.put(`/api/v1/dashboards/${open.id}`, { isPrivate: true }));
      expect(closed.keys).toEqual([keyShape]);
      expect400(await h.a.post('/api/v1/dashboards/abc/keys'), 'params', 'id');
      expect400(await h.a.delete(`/api/v1/dashboards/abc/keys/${added.id}`), 'params', 'id');
      expect((await ok(h.a.get(`/api/v1/dashboards/${dashboard.id}`))).keys).toEqual([added]);
    });

    it('DELETE /v1/dashboards/{id} answers 204 and removes the dashboard with its incidents', async () => {
      const dashboard = await newDashboard(h.a);
      const keep = await newDashboard(h.a, { header: 'Keep' });
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id)));
      const other = await created(h.a.post('/api/v1/incidents', incidentBody(keep.id)));
      await deleted(h.a.delete(`/api/v1/dashboards/${dashboard.id}`));
      expect404(await h.a.get(`/api/v1/dashboards/${dashboard.id}`));
      expect404(await h.a.delete(`/api/v1/dashboards/${dashboard.id}`));
      expect404(await h.a.get(`/api/v1/incidents/${incident.id}`));
      expect(await ok(h.a.get(`/api/v1/incidents/${other.id}`))).toEqual(other);
      expect(ids(await ok(h.a.get('/api/v1/dashboards')))).toEqual([keep.id]);
      expect400(await h.a.delete('/api/v1/dashboards/-1'), 'params', 'id');
    });

    it('401 without credentials and 403 with another account\'s header on every dashboard route', async () => {
      const dashboard = await newDashboard(h.a, { isPrivate: true });
      const path = `/api/v1/dashboards/${dashboard.id}`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/dashboards'],
        ['get', path],
        ['post', '/api/v1/dashboards', { header: 'x' }],
        ['put', path, { header: 'x' }],
        ['delete', path],
        ['post', `${path}/keys`],
        ['delete', `${path}/keys/${dashboard.keys[0].id}`],
      ]);
      expect(await ok(h.a.get(path))).toEqual(dashboard);
    });

    it('404 for another account\'s dashboard on every route with its id; the dashboard stays as it was', async () => {
      const dashboard = await newDashboard(h.a, { isPrivate: true, customUrl: 'acme-status' });
      const path = `/api/v1/dashboards/${dashboard.id}`;
      await expectHiddenFromB(h, [
        ['get', path],
        ['put', path, { header: 'Taken over' }],
        ['post', `${path}/keys`],
        ['delete', `${path}/keys/${dashboard.keys[0].id}`],
        ['delete', path],
      ]);
      expect(await ok(h.a.get(path))).toEqual(dashboard);
    });
  });
});
