/**
 * Every check route of the HTTP API (checks, heartbeats, groups, results, statuses and sessions)
 * answers 401 without credentials, 403 for another account's header and 404 for another account's id,
 * and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { checkResultFixture } from '@vigil/core/testing';
import { expectAuthGuards, expectHiddenFromB, type RouteCall } from './support/expect.js';
import { created, tcpBody, describeOnBackends } from './support/routes.js';
import { apiBody, browserBody, heartbeatBody, snapshotA } from './support/checks.js';

// Every route is tried without credentials here, far more failures than the throttle of failed
// authentication lets one address make (it has tests of its own).
describeOnBackends('check routes on %s', { authThrottle: false }, (h) => {

  describe('credentials', () => {
    /** One of everything in account a, and every route of this file with a's ids and a valid body. */
    async function routesOfA(): Promise<RouteCall[]> {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ groupId: group.id })));
      const api = await created(h.a.post('/api/v1/checks/api', apiBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const result = checkResultFixture(tcp.id);
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [result]);
      const [session] = (await h.a.post('/api/v1/check-sessions/trigger', { target: { checkId: [tcp.id] } }).expect(201)).body.sessions;
      const sid = session.checkSessionId as string;
      return [
        ['get', '/api/v1/checks'],
        ['get', `/api/v1/checks/${tcp.id}`],
        ['delete', `/api/v1/checks/${tcp.id}`],
        ['post', '/api/v1/checks/tcp', tcpBody({ name: 'new' })],
        ['post', '/api/v1/checks/api', apiBody({ name: 'new' })],
        ['post', '/api/v1/checks/browser', browserBody({ name: 'new' })],
        ['post', '/api/v1/checks/heartbeat', heartbeatBody({ name: 'new' })],
        ['get', `/api/v1/checks/tcp/${tcp.id}`],
        ['put', `/api/v1/checks/tcp/${tcp.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/tcp/${tcp.id}`],
        ['get', `/api/v1/checks/api/${api.id}`],
        ['put', `/api/v1/checks/api/${api.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/api/${api.id}`],
        ['get', `/api/v1/checks/browser/${browser.id}`],
        ['put', `/api/v1/checks/browser/${browser.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/browser/${browser.id}`],
        ['get', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['put', `/api/v1/checks/heartbeat/${heartbeat.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['get', `/api/v1/checks/heartbeats/${heartbeat.id}/availability`],
        ['get', '/api/v1/check-groups'],
        ['get', '/api/v2/check-groups'],
        ['get', `/api/v1/check-groups/${group.id}`],
        ['get', `/api/v2/check-groups/${group.id}`],
        ['get', `/api/v1/check-groups/${group.id}/checks`],
        ['get', `/api/v2/check-groups/${group.id}/checks`],
        ['post', '/api/v2/check-groups', { name: 'new' }],
        ['put', `/api/v2/check-groups/${group.id}`, { name: 'changed' }],
        ['delete', `/api/v2/check-groups/${group.id}`],
        ['get', `/api/v1/check-results/${tcp.id}`],
        ['get', `/api/v1/check-results/${tcp.id}/${result.id}`],
        ['get', '/api/v1/check-statuses'],
        ['get', `/api/v1/check-statuses/${tcp.id}`],
        ['post', '/api/v1/check-sessions/trigger', {}],
        ['get', `/api/v1/check-sessions/${sid}`],
        ['get', `/api/v1/check-sessions/${sid}/completion?maxWaitSeconds=1`],
        ['post', `/api/v1/check-sessions/${sid}/cancel`, {}],
      ];
    }

    it('every route answers 401 without credentials and 403 with a\'s key under b\'s account header, changing nothing', async () => {
      const routes = await routesOfA();
      const before = await snapshotA(h);
      const sessionIds = routes.flatMap(([, path]) => /check-sessions\/([0-9a-f-]{36})$/.exec(path)?.[1] ?? []);
      await expectAuthGuards(h, routes);
      expect(await snapshotA(h)).toBe(before);
      for (const id of sessionIds) {
        expect((await h.vigil.storage.checkSessions.get(h.a.accountId, id))?.status).toBe('STARTED');
      }
      expect(await h.vigil.storage.checks.listAll(h.b.accountId)).toEqual([]);
      expect(await h.vigil.storage.checkGroups.listAll(h.b.accountId)).toEqual([]);
      // The pending completion polls never started a timer.
      expect(h.clock.pendingTimers).toBe(0);
    });

    it('every route with an id answers 404 to account b for a\'s id and changes nothing', async () => {
      const withoutId = new Set([
        'get /api/v1/checks', 'post /api/v1/checks/tcp', 'post /api/v1/checks/api', 'post /api/v1/checks/browser', 'post /api/v1/checks/heartbeat',
        'get /api/v1/check-groups', 'get /api/v2/check-groups', 'post /api/v2/check-groups', 'get /api/v1/check-statuses',
        'post /api/v1/check-sessions/trigger',
      ]);
      const routes = (await routesOfA()).filter(([method, path]) => !withoutId.has(`${method} ${path}`));
      expect(routes.length).toBeGreaterThan(20);
      const before = await snapshotA(h);
      await expectHiddenFromB(h, routes);
      expect(await snapshotA(h)).toBe(before);
    });
  });
});
