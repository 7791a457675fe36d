/**
 * The check-group routes of the HTTP API (/v1 reads, /v2 reads and writes) through the real Express
 * router.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import { describe, expect, it } from 'vitest';
import { expect400, expectError, expect404, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, MASK, type Body, created, tcpBody, describeOnBackends } from './support/routes.js';
import { CHECK_GROUP_DEFAULTS } from '@vigil/core/testing';
import { browserBody, heartbeatBody, snapshotA } from './support/checks.js';

describeOnBackends('check routes on %s', {}, (h) => {

  describe('check groups', () => {
    it('POST /v2/check-groups answers 201 with the spec defaults; GET /v1 and /v2 read it back', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      expect(group).toEqual({
        id: expect.any(Number),
        name: 'backend',
        ...CHECK_GROUP_DEFAULTS,
        created_at: T0,
        updated_at: null,
      });
      expect((await h.a.get(`/api/v2/check-groups/${group.id}`).expect(200)).body).toEqual(group);
      expect((await h.a.get(`/api/v1/check-groups/${group.id}`).expect(200)).body).toEqual(group);
      // Groups are written under /v2 only.
      expect404(await h.a.post('/api/v1/check-groups', { name: 'v1' }));
      expect404(await h.a.put(`/api/v1/check-groups/${group.id}`, { name: 'v1' }));
      expect404(await h.a.delete(`/api/v1/check-groups/${group.id}`));
      expect((await h.a.get('/api/v2/check-groups').expect(200)).body).toHaveLength(1);
    });

    it('POST /v2/check-groups stores the given fields, with FALLBACK or an object as retryStrategy', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', {
        name: 'frontend',
        activated: false,
        muted: true,
        tags: ['web'],
        locations: ['eu-west-1'],
        concurrency: 1,
        apiCheckDefaults: { url: 'https://api.example.com', headers: [{ key: 'X-Env', value: 'prod' }], assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        runtimeId: '2025.04',
        retryStrategy: { type: 'EXPONENTIAL', baseBackoffSeconds: 2 },
        runParallel: true,
      }));
      expect(group).toMatchObject({
        name: 'frontend', activated: false, muted: true, tags: ['web'], locations: ['eu-west-1'], concurrency: 1, runtimeId: '2025.04', runParallel: true,
        apiCheckDefaults: { url: 'https://api.example.com', headers: [{ key: 'X-Env', value: 'prod' }], assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        retryStrategy: { type: 'EXPONENTIAL', baseBackoffSeconds: 2, maxRetries: 2 },
      });
      const fallback = await created(h.a.post('/api/v2/check-groups', { name: 'explicit', retryStrategy: 'FALLBACK' }));
      expect(fallback.retryStrategy).toBe('FALLBACK');
    });

    it('POST /v2/check-groups answers 400 naming each violated constraint and stores nothing', async () => {
      const vars = (n: number) => Array.from({ length: n }, (_x, i) => ({ key: `VAR_${i}`, value: String(i) }));
      const cases: [Body, string[]][] = [
        [{}, ['name']],
        [{ concurrency: 3 }, ['name']],
        [{ name: ' ' }, ['name']],
        [{ name: 'g', concurrency: 0 }, ['concurrency']],
        [{ name: 'g', concurrency: 1.5 }, ['concurrency']],
        [{ name: 'g', locations: ['nowhere-1'] }, ['locations.0']],
        [{ name: 'g', runtimeId: '1999.01' }, ['runtimeId']],
        [{ name: 'g', retryStrategy: 'SOMETIMES' }, ['retryStrategy']],
        [{ name: 'g', environmentVariables: vars(101) }, ['environmentVariables.100']],
        [{ name: 'g', environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }, ['environmentVariables.1.key']],
        [{ name: 'g', apiCheckDefaults: { assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS' }] } }, ['apiCheckDefaults.assertions.0.source']],
        [{ name: 'g', apiCheckDefaults: { headers: [{ key: '', value: 'x' }] } }, ['apiCheckDefaults.headers.0.key']],
        [{ name: 'g', setupSnippetId: 0 }, ['setupSnippetId']],
        [{ name: 'g', alertSettings: { reminders: { interval: 60 } } }, ['alertSettings.reminders.interval']],
        [{ name: 'g', alertChannelSubscriptions: [{ alertChannelId: 987654 }] }, ['alertChannelSubscriptions.0.alertChannelId']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v2/check-groups', body), 'payload', ...keys);
      }
      expect400(await h.a.post('/api/v2/check-groups?autoAssignAlerts=no', { name: 'g' }), 'query', 'autoAssignAlerts');
      expect(await h.vigil.storage.checkGroups.listAll(h.a.accountId)).toEqual([]);
    });

    it('POST /v2/check-groups subscribes the new group to the account\'s channels unless autoAssignAlerts=false, and masks secret variables', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const assigned = await created(h.a.post('/api/v2/check-groups', { name: 'g1' }));
      expect(assigned.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      const unassigned = await created(h.a.post('/api/v2/check-groups?autoAssignAlerts=false', { name: 'g2' }));
      expect(unassigned.alertChannelSubscriptions).toEqual([]);
      const secret = await created(h.a.post('/api/v2/check-groups', {
        name: 'g3',
        environmentVariables: [{ key: 'API_KEY', value: 'group-secret', secret: true }, { key: 'REGION', value: 'eu' }],
      }));
      expect(secret.environmentVariables).toEqual([
        { key: 'API_KEY', value: MASK, locked: false, secret: true },
        { key: 'REGION', value: 'eu', locked: false, secret: false },
      ]);
      for (const path of [`/api/v2/check-groups/${secret.id}`, `/api/v1/check-groups/${secret.id}`, '/api/v2/check-groups', '/api/v1/check-groups']) {
        expect((await h.a.get(path).expect(200)).text, path).not.toContain('group-secret');
      }
      expect(JSON.stringify(await h.vigil.storage.checkGroups.get(h.a.accountId, secret.id))).not.toContain('group-secret');
    });

    it('GET /v1/check-groups and /v2/check-groups page with limit/page and report the total in Content-Range', async () => {
      for (let i = 0; i < 3; i++) await h.a.post('/api/v2/check-groups', { name: `g${i}` }).expect(201);
      await h.b.post('/api/v2/check-groups', { name: "b's" }).expect(201);
      for (const v of ['v1', 'v2']) {
        const all = await h.a.get(`/api/${v}/check-groups`).expect(200);
        expect(all.headers['content-range'], v).toBe('0-2/3');
        expect(all.body.map((g: { name: string }) => g.name).sort()).toEqual(['g0', 'g1', 'g2']);
        const second = await h.a.get(`/api/${v}/check-groups?limit=2&page=2`).expect(200);
        expect(second.headers['content-range'], v).toBe('2-2/3');
        expect(second.body).toHaveLength(1);
        const empty = await h.a.get(`/api/${v}/check-groups?limit=2&page=9`).expect(200);
        expect(empty.body).toEqual([]);
        expect(empty.headers['content-range']).toBe('*/3');
        expect400(await h.a.get(`/api/${v}/check-groups?limit=101`), 'query', 'limit');
        expect400(await h.a.get(`/api/${v}/check-groups?page=0`), 'query', 'page');
      }
    });

    it('GET /{v}/check-groups/{id} answers 400 for a malformed id and 404 for an unknown or another account\'s group', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      for (const v of ['v1', 'v2']) {
        expect400(await h.a.get(`/api/${v}/check-groups/abc`), 'params', 'id');
        expect400(await h.a.get(`/api/${v}/check-groups/0`), 'params', 'id');
        expect400(await h.a.get(`/api/${v}/check-groups/1.5`), 'params', 'id');
        expect404(await h.a.get(`/api/${v}/check-groups/987654`));
        expect404(await h.b.get(`/api/${v}/check-groups/${group.id}`));
      }
    });

    it('PUT /v2/check-groups/{id} requires name, replaces the given fields and keeps the others', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend', tags: ['api'], concurrency: 5 }));
      h.clock.advance(5_000);
      const put = await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'backend v2', activated: false }).expect(200);
      expect(put.body).toEqual({ ...group, name: 'backend v2', activated: false, updated_at: new Date(T0_MS + 5_000).toISOString() });
      expect((await h.a.get(`/api/v1/check-groups/${group.id}`).expect(200)).body).toEqual(put.body);
      const before = JSON.stringify(await h.vigil.storage.checkGroups.get(h.a.accountId, group.id));
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { concurrency: 3 }), 'payload', 'name');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', concurrency: 0 }), 'payload', 'concurrency');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', locations: ['moon-1'] }), 'payload', 'locations.0');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', retryStrategy: { type: 'FIXED', maxRetries: 0 } }), 'payload', 'retryStrategy.maxRetries');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', alertChannelSubscriptions: [{ alertChannelId: 987654 }] }), 'payload', 'alertChannelSubscriptions.0.alertChannelId');
      expect400(await h.a.put('/api/v2/check-groups/abc', { name: 'x' }), 'params', 'id');
      expect404(await h.a.put('/api/v2/check-groups/987654', { name: 'x' }));
      expect(JSON.stringify(await h.vigil.storage.checkGroups.get(h.a.accountId, group.id))).toBe(before);
    });

    it('PUT and DELETE of another account\'s group answer 404 and leave it unchanged', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const before = await snapshotA(h);
      await expectHiddenFromB(h, [
        ['get', `/api/v1/check-groups/${group.id}`],
        ['get', `/api/v2/check-groups/${group.id}`],
        ['put', `/api/v2/check-groups/${group.id}`, { name: 'taken over' }],
        ['delete', `/api/v2/check-groups/${group.id}`],
        ['get', `/api/v1/check-groups/${group.id}/checks`],
        ['get', `/api/v2/check-groups/${group.id}/checks`],
      ]);
      expect(await snapshotA(h)).toBe(before);
    });

    it('DELETE /v2/check-groups/{id} answers 409 while the group has checks, 204 once it is empty', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const member = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ groupId: group.id })));
      const before = await snapshotA(h);
      const conflict = await h.a.delete(`/api/v2/check-groups/${group.id}`);
      expectError(conflict, 409, 'Conflict');
      expect(await snapshotA(h)).toBe(before);
      await h.a.get(`/api/v2/check-groups/${group.id}`).expect(200);
      await h.a.put(`/api/v1/checks/tcp/${member.id}`, { groupId: null }).expect(200);
      const res = await h.a.delete(`/api/v2/check-groups/${group.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect404(await h.a.get(`/api/v2/check-groups/${group.id}`));
      expect404(await h.a.delete(`/api/v2/check-groups/${group.id}`));
      expect400(await h.a.delete('/api/v2/check-groups/abc'), 'params', 'id');
      // The former member is untouched.
      expect((await h.a.get(`/api/v1/checks/${member.id}`).expect(200)).body.groupId).toBeNull();
    });

    it('GET /{v}/check-groups/{id}/checks lists the group\'s members only, paged with Content-Range', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const other = await created(h.a.post('/api/v2/check-groups', { name: 'other' }));
      const members = [
        await created(h.a.post('/api/v1/checks/tcp', tcpBody({ groupId: group.id }))),
        await created(h.a.post('/api/v1/checks/browser', browserBody({ groupId: group.id }))),
        await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody({ groupId: group.id }))),
      ];
      await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'loner' })));
      await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'elsewhere', groupId: other.id })));
      const ids = members.map((c) => c.id).sort();
      for (const v of ['v1', 'v2']) {
        const all = await h.a.get(`/api/${v}/check-groups/${group.id}/checks`).expect(200);
        expect(all.headers['content-range'], v).toBe('0-2/3');
        expect(all.body.map((c: { id: string }) => c.id).sort()).toEqual(ids);
        expect(all.body.every((c: { groupId: number }) => c.groupId === group.id)).toBe(true);
        const page = await h.a.get(`/api/${v}/check-groups/${group.id}/checks?limit=2&page=2`).expect(200);
        expect(page.headers['content-range']).toBe('2-2/3');
        expect(page.body).toHaveLength(1);
        expect400(await h.a.get(`/api/${v}/check-groups/${group.id}/checks?limit=0`), 'query', 'limit');
        expect400(await h.a.get(`/api/${v}/check-groups/x/checks`), 'params', 'id');
        expect404(await h.a.get(`/api/${v}/check-groups/987654/checks`));
      }
      const empty = await h.a.post('/api/v2/check-groups', { name: 'empty' }).expect(201);
      const none = await h.a.get(`/api/v2/check-groups/${empty.body.id}/checks`).expect(200);
      expect(none.body).toEqual([]);
      expect(none.headers['content-range']).toBe('*/0');
    });
  });
});
