/**
 * The check delete routes of the HTTP API through the real Express router, with what a new check
 * subscribes to (autoAssignAlerts) and how its secret variables are read back.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import { describe, expect, it } from 'vitest';
import { checkStatusFixture } from '@vigil/core/testing';
import type { ApiClient } from './support/harness.js';
import { expect400, expect404 } from './support/expect.js';
import { MASK, type Body, created, tcpBody, describeOnBackends } from './support/routes.js';
import { apiBody, browserBody, heartbeatBody, NO_ALERT_CHANNELS } from './support/checks.js';

describeOnBackends('check routes on %s', {}, (h) => {
  const countChecks = async (c: ApiClient = h.a) => (await h.vigil.storage.checks.listAll(c.accountId)).length;

  describe('checks', () => {
    it('DELETE /v1/checks/{id} and /v1/checks/{type}/{id} answer 204 with no body and remove the check, its subscriptions and status', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, checkStatusFixture(tcp.id));

      const res = await h.a.delete(`/api/v1/checks/${tcp.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect404(await h.a.get(`/api/v1/checks/${tcp.id}`));
      expect404(await h.a.delete(`/api/v1/checks/${tcp.id}`));
      expect404(await h.a.get(`/api/v1/check-statuses/${tcp.id}`));
      expect(await h.vigil.storage.checkStatuses.get(h.a.accountId, tcp.id)).toBeNull();
      expect(await h.vigil.storage.alertSubscriptions.listByCheck(h.a.accountId, tcp.id)).toEqual([]);

      await h.a.delete(`/api/v1/checks/browser/${browser.id}`).expect(204);
      expect404(await h.a.get(`/api/v1/checks/browser/${browser.id}`));
      expect404(await h.a.delete(`/api/v1/checks/browser/${browser.id}`));
      await h.a.delete(`/api/v1/checks/heartbeat/${heartbeat.id}`).expect(204);
      expect(await countChecks()).toBe(0);
      const { body: ch } = await h.a.get(`/api/v1/alert-channels/${channel.id}`).expect(200);
      expect(ch.subscriptions).toEqual([]);
      // The ping token of a deleted heartbeat no longer answers.
      expect404(await h.a.anonymous('get', `/api/ping/${heartbeat.heartbeat.pingToken}`));
    });

    it('autoAssignAlerts (default true) subscribes a new check of every type to the account\'s existing channels; false does not', async () => {
      const email = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const hook = await created(h.a.post('/api/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.example.com/x' } }));
      // Another account's channel is never assigned.
      await h.b.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'b@example.com' } }).expect(201);
      const expectedSubs = [{ alertChannelId: email.id, activated: true }, { alertChannelId: hook.id, activated: true }];
      const sortSubs = (subs: { alertChannelId: number }[]) => [...subs].sort((x, y) => x.alertChannelId - y.alertChannelId);
      const bodies: [string, Body][] = [['tcp', tcpBody()], ['api', apiBody()], ['browser', browserBody()], ['heartbeat', heartbeatBody()]];
      for (const [slug, body] of bodies) {
        for (const query of ['', '?autoAssignAlerts=true']) {
          const check = await created(h.a.post(`/api/v1/checks/${slug}${query}`, body));
          expect(sortSubs(check.alertChannelSubscriptions), `${slug}${query}`).toEqual(expectedSubs);
          expect(check.alertChannels.email).toEqual([{ address: 'ops@example.com' }]);
          expect(check.alertChannels.webhook).toEqual([{ url: 'https://hooks.example.com/x', name: 'hook', method: 'POST', headers: [], queryParameters: [] }]);
          expect(sortSubs((await h.a.get(`/api/v1/checks/${check.id}`).expect(200)).body.alertChannelSubscriptions)).toEqual(expectedSubs);
        }
        const unassigned = await created(h.a.post(`/api/v1/checks/${slug}?autoAssignAlerts=false`, body));
        expect(unassigned.alertChannelSubscriptions, slug).toEqual([]);
        expect(unassigned.alertChannels).toEqual(NO_ALERT_CHANNELS);
        // autoAssignAlerts is about new checks: a PUT does not subscribe an existing one.
        const put = await h.a.put(`/api/v1/checks/${slug}/${unassigned.id}`, { name: 'renamed' }).expect(200);
        expect(put.body.alertChannelSubscriptions).toEqual([]);
      }
      const { body: channel } = await h.a.get(`/api/v1/alert-channels/${email.id}`).expect(200);
      expect(channel.subscriptions.filter((s: { checkId: string | null }) => s.checkId !== null)).toHaveLength(8);
      // Given subscriptions are kept with autoAssignAlerts=false.
      const given = await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody({ alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: false }] })));
      expect(given.alertChannelSubscriptions).toEqual([{ alertChannelId: hook.id, activated: false }]);
      expect(given.alertChannels).toEqual(NO_ALERT_CHANNELS);
      expect400(await h.a.post('/api/v1/checks/tcp?autoAssignAlerts=maybe', tcpBody()), 'query', 'autoAssignAlerts');
      expect400(await h.a.post('/api/v1/checks/browser?autoAssignAlerts=1', browserBody()), 'query', 'autoAssignAlerts');
    });

    it('autoAssignAlerts=false still subscribes a new check to a channel that has autoSubscribe on', async () => {
      const auto = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'auto@example.com' }, autoSubscribe: true }));
      await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'manual@example.com' } }));
      const check = await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody()));
      expect(check.alertChannelSubscriptions).toEqual([{ alertChannelId: auto.id, activated: true }]);
      expect(check.alertChannels.email).toEqual([{ address: 'auto@example.com' }]);
    });

    it('secret environment variables of a browser check come back masked on every read and stay usable by runs', async () => {
      const environmentVariables = [
        { key: 'BASE_URL', value: 'https://example.com' },
        { key: 'TOKEN', value: 's3cret-token', secret: true },
        { key: 'SERVICE_SECRET_PASSWORD', value: 'hunter2' },
        { key: 'LOCKED', value: 'visible', locked: true },
      ];
      const masked = [
        { key: 'BASE_URL', value: 'https://example.com', locked: false, secret: false },
        { key: 'TOKEN', value: MASK, locked: false, secret: true },
        { key: 'SERVICE_SECRET_PASSWORD', value: MASK, locked: false, secret: false },
        { key: 'LOCKED', value: 'visible', locked: true, secret: false },
      ];
      const check = await created(h.a.post('/api/v1/checks/browser', browserBody({ environmentVariables })));
      expect(check.environmentVariables).toEqual(masked);
      for (const path of [`/api/v1/checks/${check.id}`, `/api/v1/checks/browser/${check.id}`, '/api/v1/checks']) {
        const text = (await h.a.get(path).expect(200)).text;
        expect(text, path).not.toContain('s3cret-token');
        expect(text, path).not.toContain('hunter2');
        expect(text, path).toContain('https://example.com');
      }
      expect((await h.a.get(`/api/v1/checks/${check.id}`)).body.environmentVariables).toEqual(masked);
      // Stored sealed, opened for a run.
      const stored = JSON.stringify(await h.vigil.storage.checks.get(h.a.accountId, check.id));
      expect(stored).not.toContain('s3cret-token');
      expect(stored).not.toContain('hunter2');
      const run = await h.vigil.checks.getForRun(h.a.accountId, check.id);
      expect(run.environment).toMatchObject({ TOKEN: 's3cret-token', SERVICE_SECRET_PASSWORD: 'hunter2', BASE_URL: 'https://example.com' });

      // A client that echoes back what it read keeps the secrets; a new value replaces one.
      h.clock.advance(1_000);
      const echoed = await h.a.put(`/api/v1/checks/browser/${check.id}`, { environmentVariables: check.environmentVariables }).expect(200);
      expect(echoed.body.environmentVariables).toEqual(masked);
      expect((await h.vigil.checks.getForRun(h.a.accountId, check.id)).environment).toMatchObject({ TOKEN: 's3cret-token', SERVICE_SECRET_PASSWORD: 'hunter2' });
      const replaced = await h.a.put(`/api/v1/checks/browser/${check.id}`, {
        environmentVariables: [{ key: 'TOKEN', value: 'rotated', secret: true }],
      }).expect(200);
      expect(replaced.text).not.toContain('rotated');
      expect(replaced.body.environmentVariables).toEqual([{ key: 'TOKEN', value: MASK, locked: false, secret: true }]);
      expect((await h.vigil.checks.getForRun(h.a.accountId, check.id)).environment).toEqual({ TOKEN: 'rotated' });
    });
  });
});
