/**
 * The incident routes of the HTTP API (a dashboard's incidents and their updates) through the real
 * Express router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, UUID_RE, MISSING_UUID, type Body, ok, created, deleted, incidentBody, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newDashboard } = resourceBuilders(() => h);

  describe('incidents', () => {
    it('POST /v1/incidents answers 201 with its one update; GET and the list read it back', async () => {
      const dashboard = await newDashboard();
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id)));
      expect(incident).toEqual({
        id: expect.stringMatching(UUID_RE),
        name: 'API outage',
        impact: 'MINOR',
        dashboardId: dashboard.id,
        startedAt: T0,
        stoppedAt: null,
        created_at: T0,
        updated_at: null,
        incidentUpdates: [{
          id: expect.stringMatching(UUID_RE), incidentId: incident.id, status: 'INVESTIGATING',
          description: 'Looking into elevated errors', created_at: T0, updated_at: null,
        }],
      });
      expect(await ok(h.a.get(`/api/v1/incidents/${incident.id}`))).toEqual(incident);
      const major = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id, {
        name: 'Planned', impact: 'MAINTENANCE', startedAt: '2026-05-01T11:00:00Z', incidentUpdates: [{ status: 'MAINTENANCE', description: 'db move' }],
      })));
      expect(major).toMatchObject({ impact: 'MAINTENANCE', startedAt: '2026-05-01T11:00:00.000Z', stoppedAt: null });
      const list = await h.a.get('/api/v1/incidents?limit=1').expect(200);
      expect(list.body).toEqual([incident]);
      expect(list.headers['content-range']).toBe('0-0/2');
      expect(await ok(h.b.get('/api/v1/incidents'))).toEqual([]);
    });

    it('POST with a first update RESOLVED sets stoppedAt', async () => {
      const dashboard = await newDashboard();
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id, {
        impact: 'MAJOR', incidentUpdates: [{ status: 'RESOLVED', description: 'already fixed' }],
      })));
      expect(incident).toMatchObject({ impact: 'MAJOR', startedAt: T0, stoppedAt: T0 });
    });

    it('POST refuses each constraint violation naming the field (exactly one update), and stores nothing', async () => {
      const dashboard = await newDashboard();
      const theirs = await newDashboard(h.b);
      const update = { status: 'INVESTIGATING', description: 'x' };
      const cases: [Body, string[]][] = [
        [{}, ['name', 'dashboardId', 'incidentUpdates']],
        [incidentBody(dashboard.id, { incidentUpdates: [] }), ['incidentUpdates']],
        [incidentBody(dashboard.id, { incidentUpdates: [update, update] }), ['incidentUpdates']],
        [incidentBody(dashboard.id, { incidentUpdates: update }), ['incidentUpdates']],
        [incidentBody(dashboard.id, { incidentUpdates: [{ status: 'BROKEN', description: '' }] }), ['incidentUpdates.0.status', 'incidentUpdates.0.description']],
        [incidentBody(dashboard.id, { incidentUpdates: [{ description: 'x' }] }), ['incidentUpdates.0.status']],
        [incidentBody(dashboard.id, { name: '' }), ['name']],
        [incidentBody(dashboard.id, { impact: 'HUGE' }), ['impact']],
        [incidentBody(dashboard.id, { startedAt: 'yesterday' }), ['startedAt']],
        [incidentBody(0), ['dashboardId']],
        [incidentBody('1' as unknown as number), ['dashboardId']],
        [incidentBody(999999), ['dashboardId']],
        [incidentBody(theirs.id), ['dashboardId']],
        [incidentBody(dashboard.id, { startedAt: '2026-05-01T12:00:00Z', stoppedAt: '2026-05-01T11:00:00Z' }), ['stoppedAt']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.post('/api/v1/incidents', body), 'payload', ...keys);
      expect(await ok(h.a.get('/api/v1/incidents'))).toEqual([]);
    });

    it('POST /v1/incidents/{id}/updates adds an update: RESOLVED sets stoppedAt, a later update reopens the incident', async () => {
      const dashboard = await newDashboard();
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id)));
      const path = `/api/v1/incidents/${incident.id}/updates`;
      h.clock.advance(10 * 60_000);
      const t1 = new Date(T0_MS + 10 * 60_000).toISOString();
      const identified = await created(h.a.post(path, { status: 'IDENTIFIED', description: 'bad deploy' }));
      expect(identified).toMatchObject({ id: incident.id, startedAt: T0, stoppedAt: null, updated_at: t1 });
      expect(identified.incidentUpdates).toHaveLength(2);
      h.clock.advance(10 * 60_000);
      const t2 = new Date(T0_MS + 20 * 60_000).toISOString();
      const resolved = await created(h.a.post(path, { status: 'RESOLVED', description: 'rolled back' }));
      expect(resolved).toMatchObject({ startedAt: T0, stoppedAt: t2, updated_at: t2 });
      expect(resolved.incidentUpdates).toHaveLength(3);
      expect(resolved.incidentUpdates).toEqual(expect.arrayContaining([
        { id: expect.stringMatching(UUID_RE), incidentId: incident.id, status: 'RESOLVED', description: 'rolled back', created_at: t2, updated_at: null },
      ]));
      expect([...resolved.incidentUpdates.map((u: { status: string }) => u.status)].sort()).toEqual(['IDENTIFIED', 'INVESTIGATING', 'RESOLVED']);
      expect(await ok(h.a.get(`/api/v1/incidents/${incident.id}`))).toEqual(resolved);
      // Any status may follow any other.
      const reopened = await created(h.a.post(path, { status: 'MONITORING', description: 'watching again' }));
      expect(reopened.stoppedAt).toBeNull();
      expect(reopened.incidentUpdates).toHaveLength(4);

      expect400(await h.a.post(path, { status: 'DONE', description: 'x' }), 'payload', 'status');
      expect400(await h.a.post(path, { status: 'RESOLVED' }), 'payload', 'description');
      expect400(await h.a.post(path, {}), 'payload', 'status', 'description');
      expect((await ok(h.a.get(`/api/v1/incidents/${incident.id}`))).incidentUpdates).toHaveLength(4);
      expect404(await h.a.post(`/api/v1/incidents/${MISSING_UUID}/updates`, { status: 'RESOLVED', description: 'x' }));
    });

    it('PUT /v1/incidents/{id} changes name, impact and times; the dashboard cannot be moved; bad values answer 400', async () => {
      const dashboard = await newDashboard();
      const other = await newDashboard(h.a, { header: 'Other' });
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id)));
      const path = `/api/v1/incidents/${incident.id}`;
      h.clock.advance(2_000);
      const updated = await ok(h.a.put(path, { name: 'Renamed', impact: 'MAJOR', stoppedAt: '2026-05-01T13:00:00Z', dashboardId: other.id }));
      expect(updated).toEqual({
        ...incident, name: 'Renamed', impact: 'MAJOR', stoppedAt: '2026-05-01T13:00:00.000Z', updated_at: new Date(T0_MS + 2_000).toISOString(),
      });
      expect400(await h.a.put(path, { name: '' }), 'payload', 'name');
      expect400(await h.a.put(path, { impact: 'CRITICAL' }), 'payload', 'impact');
      expect400(await h.a.put(path, { startedAt: 'soon' }), 'payload', 'startedAt');
      expect400(await h.a.put(path, { stoppedAt: '2026-05-01T11:00:00Z' }), 'payload', 'stoppedAt');
      expect(await ok(h.a.get(path))).toEqual(updated);
      expect404(await h.a.put(`/api/v1/incidents/${MISSING_UUID}`, { name: 'x' }));
    });

    it('DELETE /v1/incidents/{id} answers 204 and removes the incident', async () => {
      const dashboard = await newDashboard();
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id)));
      await deleted(h.a.delete(`/api/v1/incidents/${incident.id}`));
      expect404(await h.a.get(`/api/v1/incidents/${incident.id}`));
      expect404(await h.a.delete(`/api/v1/incidents/${incident.id}`));
      expect404(await h.a.post(`/api/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'x' }));
      expect(await ok(h.a.get('/api/v1/incidents'))).toEqual([]);
      expect(await ok(h.a.get(`/api/v1/dashboards/${dashboard.id}`))).toEqual(dashboard);
    });

    it('401 and 403 on every incident route; 404 for another account\'s incident, which stays as it was', async () => {
      const dashboard = await newDashboard();
      const incident = await created(h.a.post('/api/v1/incidents', incidentBody(dashboard.id)));
      const path = `/api/v1/incidents/${incident.id}`;
      const update = { status: 'RESOLVED', description: 'fixed' };
      await expectAuthGuards(h, [
        ['get', '/api/v1/incidents'],
        ['get', path],
        ['post', '/api/v1/incidents', incidentBody(dashboard.id)],
        ['put', path, { name: 'x' }],
        ['delete', path],
        ['post', `${path}/updates`, update],
      ]);
      await expectHiddenFromB(h, [
        ['get', path],
        ['put', path, { name: 'taken over', impact: 'MAJOR' }],
        ['post', `${path}/updates`, update],
        ['delete', path],
      ]);
      expect(await ok(h.a.get('/api/v1/incidents'))).toEqual([incident]);
    });
  });
});
