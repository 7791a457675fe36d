/**
 * The check list, read and update routes of the HTTP API through the real Express router: GET (paged,
 * generic and typed) and PUT of each type.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import type request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from './support/harness.js';
import { expect400, expect404, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, MISSING_UUID, type Body, created, tcpBody, describeOnBackends } from './support/routes.js';
import { apiBody, browserBody, heartbeatBody, snapshotA } from './support/checks.js';

describeOnBackends('check routes on %s', {}, (h) => {
  const countChecks = async (c: ApiClient = h.a) => (await h.vigil.storage.checks.listAll(c.accountId)).length;

  describe('checks', () => {
    it('GET /v1/checks lists every type, pages with limit/page and reports the total in Content-Range', async () => {
      const ids = [
        (await created(h.a.post('/api/v1/checks/tcp', tcpBody()))).id,
        (await created(h.a.post('/api/v1/checks/api', apiBody()))).id,
        (await created(h.a.post('/api/v1/checks/browser', browserBody()))).id,
        (await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()))).id,
      ];
      await h.b.post('/api/v1/checks/tcp', tcpBody({ name: "b's" })).expect(201);
      const all = await h.a.get('/api/v1/checks').expect(200);
      expect(all.headers['content-range']).toBe('0-3/4');
      expect(all.body.map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());
      expect(all.body.map((c: { checkType: string }) => c.checkType).sort()).toEqual(['API', 'BROWSER', 'HEARTBEAT', 'TCP']);
      const first = await h.a.get('/api/v1/checks?limit=3').expect(200);
      expect(first.headers['content-range']).toBe('0-2/4');
      expect(first.body).toHaveLength(3);
      const second = await h.a.get('/api/v1/checks?limit=3&page=2').expect(200);
      expect(second.headers['content-range']).toBe('3-3/4');
      expect(second.body).toHaveLength(1);
      expect([...first.body, ...second.body].map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());
      const beyond = await h.a.get('/api/v1/checks?limit=3&page=3').expect(200);
      expect(beyond.body).toEqual([]);
      expect(beyond.headers['content-range']).toBe('*/4');
      const third = await h.a.get('/api/v1/checks?limit=1&page=3').expect(200);
      expect(third.headers['content-range']).toBe('2-2/4');
      const mine = await h.b.get('/api/v1/checks').expect(200);
      expect(mine.headers['content-range']).toBe('0-0/1');
      expect(mine.body.map((c: { name: string }) => c.name)).toEqual(["b's"]);
    });

    it('GET /v1/checks answers 400 for limit and page out of range', async () => {
      expect400(await h.a.get('/api/v1/checks?limit=0'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/checks?limit=101'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/checks?limit=ten'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/checks?page=0'), 'query', 'page');
      expect400(await h.a.get('/api/v1/checks?page=-1&limit=1000'), 'query', 'page', 'limit');
      await h.a.get('/api/v1/checks?limit=100&page=1').expect(200);
    });

    it('GET /v1/checks/{id} and the typed GET answer 404 for an unknown id and for another account\'s check', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      expect404(await h.a.get(`/api/v1/checks/${MISSING_UUID}`));
      expect404(await h.a.get('/api/v1/checks/tcp/no-such-check'));
      const res = await h.b.get(`/api/v1/checks/${tcp.id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Check not found' });
      expect404(await h.b.get(`/api/v1/checks/tcp/${tcp.id}`));
    });

    it('a typed route does not reach a check of another type: GET, PUT and DELETE answer 404 and change nothing', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const api = await created(h.a.post('/api/v1/checks/api', apiBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const byType: Record<string, { id: string }> = { tcp, api, browser, heartbeat };
      const validPut: Record<string, Body> = { tcp: { name: 'renamed' }, api: { name: 'renamed' }, browser: { name: 'renamed' }, heartbeat: { name: 'renamed' } };
      const before = await snapshotA(h);
      for (const [slug, own] of Object.entries(byType)) {
        await h.a.get(`/api/v1/checks/${slug}/${own.id}`).expect(200);
        for (const [otherSlug, other] of Object.entries(byType)) {
          if (otherSlug === slug) continue;
          expect404(await h.a.get(`/api/v1/checks/${slug}/${other.id}`));
          expect404(await h.a.put(`/api/v1/checks/${slug}/${other.id}`, validPut[slug]));
          expect404(await h.a.delete(`/api/v1/checks/${slug}/${other.id}`));
        }
      }
      expect(await snapshotA(h)).toBe(before);
      expect(await countChecks()).toBe(4);
    });

    it('PUT /v1/checks/{type}/{id} replaces the given fields, keeps the others and stamps updated_at', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ tags: ['db'], frequency: 5 })));
      h.clock.advance(60_000);
      const put = await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, { muted: true, request: { hostname: 'db2.internal', port: 6432 }, tags: [] }).expect(200);
      expect(put.body).toEqual({
        ...tcp,
        muted: true,
        tags: [],
        request: { hostname: 'db2.internal', port: 6432, data: null, assertions: [], ipFamily: 'IPv4' },
        created_at: T0,
        updated_at: new Date(T0_MS + 60_000).toISOString(),
      });
      expect((await h.a.get(`/api/v1/checks/${tcp.id}`).expect(200)).body).toEqual(put.body);

      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const browserPut = await h.a.put(`/api/v1/checks/browser/${browser.id}`, { script: 'await page.goto("https://example.org")', frequency: 60 }).expect(200);
      expect(browserPut.body).toMatchObject({ name: 'home page', script: 'await page.goto("https://example.org")', frequency: 60 });

      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const hbPut = await h.a.put(`/api/v1/checks/heartbeat/${heartbeat.id}`, {
        heartbeat: { period: 2, periodUnit: 'days', grace: 3, graceUnit: 'hours', pingToken: 'chosen-by-client' },
      }).expect(200);
      // The ping token is the service's: a PUT neither drops nor replaces it.
      expect(hbPut.body.heartbeat).toEqual({ period: 2, periodUnit: 'days', grace: 3, graceUnit: 'hours', pingToken: heartbeat.heartbeat.pingToken });
      expect(hbPut.body.name).toBe('nightly backup');
      // An empty PUT keeps everything but updated_at.
      h.clock.advance(1_000);
      const empty = await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, {}).expect(200);
      expect({ ...empty.body, updated_at: null }).toEqual({ ...put.body, updated_at: null });
    });

    it('PUT /v1/checks/{type}/{id} moves a check into and out of a group', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      expect((await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, { groupId: group.id, groupOrder: 2 }).expect(200)).body).toMatchObject({ groupId: group.id, groupOrder: 2 });
      expect((await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, { groupId: null }).expect(200)).body.groupId).toBeNull();
    });

    it('PUT /v1/checks/{type}/{id} answers 400 for each violated constraint and leaves the check as it was', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ frequency: 5 })));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const { body: bGroup } = await h.b.post('/api/v2/check-groups', { name: "b's group" }).expect(201);
      const before = await snapshotA(h);
      const cases: [string, Body, string[]][] = [
        [`tcp/${tcp.id}`, { name: '' }, ['name']],
        [`tcp/${tcp.id}`, { request: { hostname: 'db', port: 70000 } }, ['request.port']],
        [`tcp/${tcp.id}`, { request: { port: 1 } }, ['request.hostname']],
        [`tcp/${tcp.id}`, { frequency: 3 }, ['frequency']],
        // Valid on its own, but not with the stored frequency 5 (max offset 50): the merged check is validated.
        [`tcp/${tcp.id}`, { frequencyOffset: 51 }, ['frequencyOffset']],
        [`tcp/${tcp.id}`, { frequency: 0 }, ['frequencyOffset']],
        [`tcp/${tcp.id}`, { maxResponseTime: 5001 }, ['maxResponseTime']],
        [`tcp/${tcp.id}`, { description: 'd'.repeat(501) }, ['description']],
        [`tcp/${tcp.id}`, { groupId: 987654 }, ['groupId']],
        [`tcp/${tcp.id}`, { groupId: bGroup.id }, ['groupId']],
        [`tcp/${tcp.id}`, { alertChannelSubscriptions: [{ alertChannelId: 987654 }] }, ['alertChannelSubscriptions.0.alertChannelId']],
        [`browser/${browser.id}`, { script: ' ' }, ['script']],
        [`browser/${browser.id}`, { frequency: 0 }, ['frequency']],
        [`browser/${browser.id}`, { environmentVariables: [{ key: 'has space', value: 'x' }] }, ['environmentVariables.0.key']],
        [`heartbeat/${heartbeat.id}`, { heartbeat: { period: 10, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' } }, ['heartbeat.period']],
        [`heartbeat/${heartbeat.id}`, { heartbeat: { period: 1, periodUnit: 'weeks', grace: 0, graceUnit: 'hours' } }, ['heartbeat.periodUnit']],
      ];
      for (const [path, body, keys] of cases) {
        expect400(await h.a.put(`/api/v1/checks/${path}`, body), 'payload', ...keys);
      }
      expect400(await h.a.put(`/api/v1/checks/tcp/${tcp.id}?autoAssignAlerts=perhaps`, { name: 'x' }), 'query', 'autoAssignAlerts');
      expect(await snapshotA(h)).toBe(before);
    });

    it('PUT, DELETE and typed DELETE of another account\'s check answer 404 and leave it unchanged', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const api = await created(h.a.post('/api/v1/checks/api', apiBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const before = await snapshotA(h);
      await expectHiddenFromB(h, [
        ['get', `/api/v1/checks/api/${api.id}`],
        ['put', `/api/v1/checks/api/${api.id}`, { name: 'taken over' }],
        ['delete', `/api/v1/checks/api/${api.id}`],
        ['get', `/api/v1/checks/${tcp.id}`],
        ['get', `/api/v1/checks/browser/${browser.id}`],
        ['get', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['put', `/api/v1/checks/tcp/${tcp.id}`, { name: 'taken over' }],
        ['put', `/api/v1/checks/browser/${browser.id}`, { name: 'taken over' }],
        ['put', `/api/v1/checks/heartbeat/${heartbeat.id}`, { name: 'taken over' }],
        ['delete', `/api/v1/checks/tcp/${tcp.id}`],
        ['delete', `/api/v1/checks/browser/${browser.id}`],
        ['delete', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['delete', `/api/v1/checks/${tcp.id}`],
        ['get', `/api/v1/checks/heartbeats/${heartbeat.id}/availability`],
      ]);
      expect(await snapshotA(h)).toBe(before);
      expect((await h.a.get(`/api/v1/checks/${tcp.id}`).expect(200)).body.name).toBe('orders-db');
    });

  });
});
