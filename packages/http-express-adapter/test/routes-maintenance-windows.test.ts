/**
 * The maintenance-window routes of the HTTP API through the real Express router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, HOUR, type Body, ok, created, deleted, describeOnBackends } from './support/routes.js';

const windowBody = (over: Body = {}): Body => ({
  name: 'db upgrade',
  startsAt: '2026-06-01T01:00:00.000Z',
  endsAt: '2026-06-01T03:00:00.000Z',
  repeatUnit: 'DAY',
  ...over,
});

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {

  describe('maintenance windows', () => {
    it('POST /v1/maintenance-windows answers 201 with the defaults; GET and the list read it back', async () => {
      const window = await created(h.a.post('/api/v1/maintenance-windows', windowBody({ startsAt: '2026-06-01', endsAt: '2026-06-01T04:00:00+02:00' })));
      expect(window).toEqual({
        id: expect.any(Number),
        name: 'db upgrade',
        startsAt: '2026-06-01T00:00:00.000Z',
        endsAt: '2026-06-01T02:00:00.000Z',
        repeatUnit: 'DAY',
        tags: [],
        repeatInterval: null,
        repeatEndsAt: null,
        pauseAllChecks: false,
        silenceAlertsTags: [],
        silenceAllAlerts: false,
        timezone: 'UTC',
        created_at: T0,
        updated_at: null,
      });
      expect(await ok(h.a.get(`/api/v1/maintenance-windows/${window.id}`))).toEqual(window);
      const second = await created(h.a.post('/api/v1/maintenance-windows', windowBody({ name: 'second' })));
      const list = await h.a.get('/api/v1/maintenance-windows').expect(200);
      expect(list.body).toEqual([window, second]);
      expect(list.headers['content-range']).toBe('0-1/2');
      expect(await ok(h.b.get('/api/v1/maintenance-windows'))).toEqual([]);
    });

    it('POST stores every given field', async () => {
      const body = windowBody({
        name: 'n'.repeat(200), repeatUnit: 'WEEK', tags: ['db', 'api'], repeatInterval: 365, repeatEndsAt: '2026-12-31T00:00:00.000Z',
        pauseAllChecks: true, silenceAlertsTags: ['noisy'], silenceAllAlerts: true, timezone: 'Europe/Berlin', accountId: h.b.accountId,
      });
      const window = await created(h.a.post('/api/v1/maintenance-windows', body));
      const { accountId: _a, ...stored } = body;
      expect(window).toEqual({ ...stored, id: expect.any(Number), created_at: T0, updated_at: null });
      const monthly = await created(h.a.post('/api/v1/maintenance-windows', windowBody({ repeatUnit: 'MONTH', repeatInterval: 1 })));
      expect(monthly).toMatchObject({ repeatUnit: 'MONTH', repeatInterval: 1 });
    });

    it('POST refuses each constraint violation naming the field, and stores nothing', async () => {
      const cases: [Body, string[]][] = [
        [{}, ['name', 'startsAt', 'endsAt', 'repeatUnit']],
        [windowBody({ name: 'n'.repeat(201) }), ['name']],
        [windowBody({ name: '' }), ['name']],
        [windowBody({ startsAt: 'next tuesday' }), ['startsAt']],
        [windowBody({ endsAt: '2026-02-31' }), ['endsAt']],
        [windowBody({ endsAt: '2026-06-01T00:00:00.000Z' }), ['endsAt']],
        [windowBody({ endsAt: '2026-06-01T01:00:00.000Z' }), ['endsAt']],
        [windowBody({ repeatUnit: 'YEAR' }), ['repeatUnit']],
        [windowBody({ repeatInterval: 0 }), ['repeatInterval']],
        [windowBody({ repeatInterval: 366 }), ['repeatInterval']],
        [windowBody({ repeatInterval: 1.5 }), ['repeatInterval']],
        [windowBody({ repeatEndsAt: '2026-05-31T00:00:00.000Z' }), ['repeatEndsAt']],
        [windowBody({ timezone: 'Mars/Olympus_Mons' }), ['timezone']],
        [windowBody({ tags: ['db', ''], silenceAlertsTags: [1] }), ['tags.1', 'silenceAlertsTags.0']],
        [windowBody({ pauseAllChecks: 'yes', silenceAllAlerts: 1 }), ['pauseAllChecks', 'silenceAllAlerts']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.post('/api/v1/maintenance-windows', body), 'payload', ...keys);
      expect(await ok(h.a.get('/api/v1/maintenance-windows'))).toEqual([]);
    });

    it('PUT /v1/maintenance-windows/{id} requires name, startsAt, endsAt and repeatUnit, and replaces the window', async () => {
      const window = await created(h.a.post('/api/v1/maintenance-windows', windowBody({ tags: ['db'] })));
      const path = `/api/v1/maintenance-windows/${window.id}`;
      expect400(await h.a.put(path, {}), 'payload', 'name', 'startsAt', 'endsAt', 'repeatUnit');
      expect400(await h.a.put(path, { name: 'only a name' }), 'payload', 'startsAt', 'endsAt', 'repeatUnit');
      expect400(await h.a.put(path, { name: 'x', startsAt: window.startsAt, endsAt: window.endsAt }), 'payload', 'repeatUnit');
      expect400(await h.a.put(path, windowBody({ endsAt: '2026-05-31T00:00:00.000Z' })), 'payload', 'endsAt');
      expect400(await h.a.put(path, windowBody({ name: 'n'.repeat(201), repeatUnit: 'HOUR' })), 'payload', 'name', 'repeatUnit');
      expect400(await h.a.put(path, windowBody({ repeatInterval: 0 })), 'payload', 'repeatInterval');
      expect(await ok(h.a.get(path))).toEqual(window);

      h.clock.advance(1_000);
      const body = windowBody({ name: 'moved', startsAt: '2026-07-01T00:00:00Z', endsAt: '2026-07-01T06:00:00Z', repeatUnit: 'MONTH', repeatInterval: 2 });
      const replaced = await ok(h.a.put(path, body));
      expect(replaced).toMatchObject({
        id: window.id, name: 'moved', startsAt: '2026-07-01T00:00:00.000Z', endsAt: '2026-07-01T06:00:00.000Z', repeatUnit: 'MONTH',
        repeatInterval: 2, created_at: T0, updated_at: new Date(T0_MS + 1_000).toISOString(),
      });
      expect(await ok(h.a.get(path))).toEqual(replaced);
      expect400(await h.a.put('/api/v1/maintenance-windows/1.5', body), 'params', 'id');
      expect404(await h.a.put('/api/v1/maintenance-windows/999999', body));
    });

    it('DELETE /v1/maintenance-windows/{id} answers 204 and removes only that window', async () => {
      const window = await created(h.a.post('/api/v1/maintenance-windows', windowBody()));
      const keep = await created(h.a.post('/api/v1/maintenance-windows', windowBody({ name: 'keep' })));
      await deleted(h.a.delete(`/api/v1/maintenance-windows/${window.id}`));
      expect404(await h.a.get(`/api/v1/maintenance-windows/${window.id}`));
      expect404(await h.a.delete(`/api/v1/maintenance-windows/${window.id}`));
      expect(await ok(h.a.get('/api/v1/maintenance-windows'))).toEqual([keep]);
      expect400(await h.a.get('/api/v1/maintenance-windows/abc'), 'params', 'id');
    });

    it('401 and 403 on every maintenance-window route; 404 for another account\'s window, which stays as it was', async () => {
      const window = await created(h.a.post('/api/v1/maintenance-windows', windowBody()));
      const path = `/api/v1/maintenance-windows/${window.id}`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/maintenance-windows'],
        ['get', path],
        ['post', '/api/v1/maintenance-windows', windowBody()],
        ['put', path, windowBody()],
        ['delete', path],
      ]);
      await expectHiddenFromB(h, [
        ['get', path],
        ['put', path, windowBody({ name: 'taken over', pauseAllChecks: true })],
        ['delete', path],
      ]);
      expect(await ok(h.a.get('/api/v1/maintenance-windows'))).toEqual([window]);
    });
  });
});
