/**
 * The status-page incident routes of the HTTP API through the real Express router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, UUID_RE, MISSING_UUID, type Body, ok, created, ids, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newService } = resourceBuilders(() => h);

  describe('status-page incidents', () => {
    it('POST /v1/status-pages/incidents answers 201 with the entry; POST .../{id}/updates adds an update', async () => {
      const api = await newService(h.a, 'API');
      const incident = await created(h.a.post('/api/v1/status-pages/incidents', { name: 'Slow API', serviceIds: [api.id], incidentUpdate: { description: 'Investigating latency' } }));
      expect(incident).toEqual({
        name: 'Slow API',
        id: expect.stringMatching(UUID_RE),
        services: [api],
        incidentUpdates: [{ description: 'Investigating latency', id: expect.stringMatching(UUID_RE), status: 'INVESTIGATING', created_at: T0, publicIncidentUpdateDate: T0, notifySubscribers: false }],
        status: 'INVESTIGATING',
        stoppedAt: null,
        created_at: T0,
        duration: 0,
        updated_at: null,
      });
      h.clock.advance(60_000);
      const t1 = new Date(T0_MS + 60_000).toISOString();
      const updated = await created(h.a.post(`/api/v1/status-pages/incidents/${incident.id}/updates`, {
        description: 'Fix deployed', notifySubscribers: true, publicIncidentUpdateDate: '2026-05-01T12:30:00+00:00', status: 'RESOLVED',
      }));
      expect(updated).toMatchObject({ id: incident.id, name: 'Slow API', services: [api], created_at: T0, updated_at: t1, status: 'RESOLVED', stoppedAt: t1 });
      expect(updated.duration).toBe(60_000);
      expect(updated.incidentUpdates).toHaveLength(2);
      expect(updated.incidentUpdates).toEqual(expect.arrayContaining([
        incident.incidentUpdates[0],
        { description: 'Fix deployed', id: expect.stringMatching(UUID_RE), status: 'RESOLVED', created_at: t1, publicIncidentUpdateDate: '2026-05-01T12:30:00.000Z', notifySubscribers: true },
      ]));
      const listed = await ok(h.a.get('/api/v1/status-pages/incidents'));
      expect(listed).toEqual({ length: 1, entries: [updated], nextId: null });
    });

    it('POST and POST .../updates refuse each constraint violation naming the field, and store nothing', async () => {
      const api = await newService(h.a, 'API');
      const theirs = await newService(h.b, 'Theirs');
      const base = { name: 'Slow', serviceIds: [api.id], incidentUpdate: { description: 'x' } };
      const cases: [Body, string[]][] = [
        [{}, ['name', 'serviceIds', 'incidentUpdate']],
        [{ ...base, name: '' }, ['name']],
        [{ ...base, serviceIds: [] }, ['serviceIds']],
        [{ ...base, serviceIds: [api.id, theirs.id] }, ['serviceIds.1']],
        [{ ...base, serviceIds: [MISSING_UUID] }, ['serviceIds.0']],
        [{ ...base, incidentUpdate: {} }, ['incidentUpdate.description']],
        [{ ...base, incidentUpdate: { description: 'x', notifySubscribers: 'yes', publicIncidentUpdateDate: 'soon' } }, ['incidentUpdate.notifySubscribers', 'incidentUpdate.publicIncidentUpdateDate']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.post('/api/v1/status-pages/incidents', body), 'payload', ...keys);
      expect(await ok(h.a.get('/api/v1/status-pages/incidents'))).toEqual({ length: 0, entries: [], nextId: null });

      const incident = await created(h.a.post('/api/v1/status-pages/incidents', base));
      const path = `/api/v1/status-pages/incidents/${incident.id}/updates`;
      expect400(await h.a.post(path, {}), 'payload', 'description');
      expect400(await h.a.post(path, { description: '  ' }), 'payload', 'description');
      expect400(await h.a.post(path, { description: 'x', notifySubscribers: 1 }), 'payload', 'notifySubscribers');
      expect400(await h.a.post(path, { description: 'x', publicIncidentUpdateDate: '2026-13-01' }), 'payload', 'publicIncidentUpdateDate');
      expect((await ok(h.a.get('/api/v1/status-pages/incidents'))).entries).toEqual([incident]);
      expect404(await h.a.post(`/api/v1/status-pages/incidents/${MISSING_UUID}/updates`, { description: 'x' }));
    });

    it('GET /v1/status-pages/incidents is a cursor list, newest first, limit (default 20) and nextId', async () => {
      const api = await newService(h.a, 'API');
      const made: string[] = [];
      for (let i = 0; i < 21; i++) {
        made.push((await h.vigil.statusPageIncidents.create(h.a.accountId, { name: `incident ${i}`, serviceIds: [api.id], incidentUpdate: { description: 'x' } })).id);
        h.clock.advance(1_000);
      }
      const newestFirst = [...made].reverse();
      const first = await ok(h.a.get('/api/v1/status-pages/incidents'));
      expect(first.length).toBe(20);
      expect(ids(first.entries)).toEqual(newestFirst.slice(0, 20));
      expect(first.nextId).toBe(newestFirst[19]);
      const rest = await ok(h.a.get(`/api/v1/status-pages/incidents?nextId=${first.nextId}`));
      expect(rest).toMatchObject({ length: 1, nextId: null });
      expect(ids(rest.entries)).toEqual([made[0]]);
      const two = await ok(h.a.get('/api/v1/status-pages/incidents?limit=2'));
      expect(ids(two.entries)).toEqual(newestFirst.slice(0, 2));
      expect(two.nextId).toBe(newestFirst[1]);
      expect(ids((await ok(h.a.get(`/api/v1/status-pages/incidents?limit=2&nextId=${two.nextId}`))).entries)).toEqual(newestFirst.slice(2, 4));
      expect(await ok(h.b.get(`/api/v1/status-pages/incidents?nextId=${made[5]}`))).toEqual({ length: 0, entries: [], nextId: null });
      expect400(await h.a.get('/api/v1/status-pages/incidents?limit=0'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/status-pages/incidents?limit=101'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/status-pages/incidents?nextId='), 'query', 'nextId');
    });

    it('401 and 403 on every status-page incident route; 404 for another account\'s incident, which stays as it was', async () => {
      const api = await newService(h.a, 'API');
      const incident = await created(h.a.post('/api/v1/status-pages/incidents', { name: 'Slow', serviceIds: [api.id], incidentUpdate: { description: 'x' } }));
      const path = `/api/v1/status-pages/incidents/${incident.id}/updates`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/status-pages/incidents'],
        ['post', '/api/v1/status-pages/incidents', { name: 'x', serviceIds: [api.id], incidentUpdate: { description: 'x' } }],
        ['post', path, { description: 'x' }],
      ]);
      await expectHiddenFromB(h, [['post', path, { description: 'taken over', notifySubscribers: true }]]);
      expect(await ok(h.a.get('/api/v1/status-pages/incidents'))).toEqual({ length: 1, entries: [incident], nextId: null });
      expect(await ok(h.b.get('/api/v1/status-pages/incidents'))).toEqual({ length: 0, entries: [], nextId: null });
    });
  });
});
