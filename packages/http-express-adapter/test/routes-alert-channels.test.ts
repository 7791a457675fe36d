/**
 * The alert-channel routes of the HTTP API through the real Express router: every channel type, its
 * flags and masked secrets, and the subscriptions of checks and groups.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, T0_MS, MASK, MISSING_UUID, type Body, ok, created, deleted, ids, describeOnBackends, resourceBuilders } from './support/routes.js';

/** One valid body per channel type, and what the API answers for its config. */
const CHANNELS: { type: string; config: Body; answered: Body }[] = [
  { type: 'EMAIL', config: { address: '  ops@example.com ' }, answered: { address: 'ops@example.com' } },
  {
    type: 'WEBHOOK',
    config: { name: 'hook', url: 'https://hooks.example.com/vigil', webhookSecret: 'whsec-123', headers: [{ key: 'X-Team', value: 'ops' }] },
    answered: {
      name: 'hook', url: 'https://hooks.example.com/vigil', method: 'POST', headers: [{ key: 'X-Team', value: 'ops', locked: false }],
      queryParameters: [], template: null, webhookSecret: MASK,
    },
  },
  { type: 'SMS', config: { number: '+14155550100', name: 'on call' }, answered: { number: '+14155550100', name: 'on call' } },
  { type: 'CALL', config: { number: '+14155550101', name: 'escalation' }, answered: { number: '+14155550101', name: 'escalation' } },
  { type: 'CHAT', config: { url: 'https://chat.example.com/hooks/1' }, answered: { url: 'https://chat.example.com/********', channel: null } },
  { type: 'CHAT_APP', config: { url: 'https://chatapp.example.com/in/2' }, answered: { url: 'https://chatapp.example.com/********' } },
  { type: 'PAGING_A', config: { serviceKey: 'pa-service-key' }, answered: { serviceKey: MASK, account: null, serviceName: null } },
  { type: 'PAGING_B', config: { name: 'ops', apiKey: 'pb-api-key', region: 'EU' }, answered: { name: 'ops', apiKey: MASK, region: 'EU', priority: 'P3' } },
];

const DEFAULT_FLAGS = { sendRecovery: true, sendFailure: true, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false };

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newCheck } = resourceBuilders(() => h);

  describe('alert channels', () => {
    it('POST /v1/alert-channels creates every channel type with the flag defaults and masked secrets; GET reads it back', async () => {
      for (const { type, config, answered } of CHANNELS) {
        const channel = await created(h.a.post('/api/v1/alert-channels', { type, config }));
        expect(channel, type).toEqual({
          id: expect.any(Number), type, config: answered, ...DEFAULT_FLAGS, subscriptions: [], created_at: T0, updated_at: null,
        });
        expect(await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`)), type).toEqual(channel);
      }
      // Secrets are sealed at rest and only opened for delivery.
      const [, webhook] = await ok(h.a.get('/api/v1/alert-channels?limit=2'));
      const stored = await h.vigil.storage.alertChannels.get(h.a.accountId, webhook.id);
      expect(JSON.stringify(stored)).not.toContain('whsec-123');
      const opened = await h.vigil.alertChannels.getForDelivery(h.a.accountId, webhook.id);
      expect((opened.config as Body).webhookSecret).toBe('whsec-123');
    });

    it('POST stores the given flags', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', {
        type: 'EMAIL', config: { address: 'sre@example.com' },
        sendRecovery: false, sendFailure: true, sendDegraded: true, sslExpiry: true, sslExpiryThreshold: 1, autoSubscribe: true,
        accountId: h.b.accountId, id: 999,
      }));
      expect(channel).toMatchObject({ sendRecovery: false, sendDegraded: true, sslExpiry: true, sslExpiryThreshold: 1, autoSubscribe: true });
      expect(channel.id).not.toBe(999);
      expect(channel).not.toHaveProperty('accountId');
      expect((await ok(h.b.get('/api/v1/alert-channels')))).toEqual([]);
      // autoSubscribe: a new check subscribes even when it asks for no auto-assignment.
      const check = await newCheck();
      expect(check.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      const upper = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'x@example.com' }, sslExpiryThreshold: 30 }));
      expect(upper.sslExpiryThreshold).toBe(30);
    });

    it('GET /v1/alert-channels pages the account\'s channels with Content-Range', async () => {
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: `ops${i}@example.com` } })));
      const all = await h.a.get('/api/v1/alert-channels').expect(200);
      expect(ids(all.body)).toEqual(ids(made));
      expect(all.headers['content-range']).toBe('0-4/5');
      const page = await h.a.get('/api/v1/alert-channels?limit=2&page=2').expect(200);
      expect(ids(page.body)).toEqual(ids(made.slice(2, 4)));
      expect(page.headers['content-range']).toBe('2-3/5');
      const past = await h.a.get('/api/v1/alert-channels?limit=2&page=4').expect(200);
      expect(past.body).toEqual([]);
      expect(past.headers['content-range']).toBe('*/5');
      const theirs = await h.b.get('/api/v1/alert-channels').expect(200);
      expect(theirs.body).toEqual([]);
      expect(theirs.headers['content-range']).toBe('*/0');
      expect400(await h.a.get('/api/v1/alert-channels?limit=0'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/alert-channels?limit=101'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/alert-channels?page=0'), 'query', 'page');
      expect400(await h.a.get('/api/v1/alert-channels/abc'), 'params', 'id');
      expect404(await h.a.get('/api/v1/alert-channels/999999'));
    });

    it('POST refuses an unknown type, a bad config of each type and out-of-range flags, naming the field, and stores nothing', async () => {
      const cases: [Body, string[]][] = [
        [{ type: 'PIGEON', config: {} }, ['type']],
        [{ type: 'EMAIL', config: { address: 'not-an-email' } }, ['config.address']],
        [{ type: 'EMAIL' }, ['config']],
        [{ type: 'WEBHOOK', config: { name: 'h', url: 'ftp://hooks.example.com', method: 'TRACE' } }, ['config.url', 'config.method']],
        [{ type: 'WEBHOOK', config: { url: 'https://hooks.example.com' } }, ['config.name']],
        [{ type: 'SMS', config: { number: '5550100', name: 'x' } }, ['config.number']],
        [{ type: 'CALL', config: { number: '+14155550100' } }, ['config.name']],
        [{ type: 'CHAT', config: { url: 'not a url' } }, ['config.url']],
        [{ type: 'PAGING_A', config: { serviceKey: '' } }, ['config.serviceKey']],
        [{ type: 'PAGING_B', config: { name: 'x', apiKey: 'k', region: 'APAC', priority: 'P9' } }, ['config.region', 'config.priority']],
        [{ type: 'EMAIL', config: { address: 'a@example.com' }, sslExpiryThreshold: 0 }, ['sslExpiryThreshold']],
        [{ type: 'EMAIL', config: { address: 'a@example.com' }, sslExpiryThreshold: 31 }, ['sslExpiryThreshold']],
        [{ type: 'EMAIL', config: { address: 'a@example.com' }, sslExpiryThreshold: 2.5 }, ['sslExpiryThreshold']],
        [{ type: 'EMAIL', config: { address: 'a@example.com' }, sendFailure: 'yes', autoSubscribe: 1 }, ['sendFailure', 'autoSubscribe']],
      ];
      for (const [body, keys] of cases) expect400(await h.a.post('/api/v1/alert-channels', body), 'payload', ...keys);
      expect(await h.vigil.storage.alertChannels.listAll(h.a.accountId)).toEqual([]);
    });

    it('PUT /v1/alert-channels/{id} changes flags and config, keeps a secret sent back masked, and refuses a type change or bad values', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.example.com/a', webhookSecret: 'whsec-123' } }));
      h.clock.advance(60_000);
      const flags = await ok(h.a.put(`/api/v1/alert-channels/${channel.id}`, { sendDegraded: true, sslExpiry: true, sslExpiryThreshold: 7 }));
      expect(flags).toEqual({ ...channel, sendDegraded: true, sslExpiry: true, sslExpiryThreshold: 7, updated_at: new Date(T0_MS + 60_000).toISOString() });
      const secret = async () => ((await h.vigil.alertChannels.getForDelivery(h.a.accountId, channel.id)).config as Body).webhookSecret;

      const moved = await ok(h.a.put(`/api/v1/alert-channels/${channel.id}`, { config: { ...flags.config, url: 'https://hooks.example.com/b', method: 'PUT' } }));
      expect(moved.config).toMatchObject({ url: 'https://hooks.example.com/b', method: 'PUT', webhookSecret: MASK });
      expect(moved.sslExpiryThreshold).toBe(7);
      expect(await secret()).toBe('whsec-123');

      const rotated = await ok(h.a.put(`/api/v1/alert-channels/${channel.id}`, { type: 'WEBHOOK', config: { ...moved.config, webhookSecret: 'whsec-456' } }));
      expect(rotated.config.webhookSecret).toBe(MASK);
      expect(await secret()).toBe('whsec-456');

      expect400(await h.a.put(`/api/v1/alert-channels/${channel.id}`, { type: 'EMAIL' }), 'payload', 'type');
      expect400(await h.a.put(`/api/v1/alert-channels/${channel.id}`, { config: { name: 'hook', url: 'nope' } }), 'payload', 'config.url');
      expect400(await h.a.put(`/api/v1/alert-channels/${channel.id}`, { sslExpiryThreshold: 31 }), 'payload', 'sslExpiryThreshold');
      expect400(await h.a.put(`/api/v1/alert-channels/${channel.id}`, { sendRecovery: 'no' }), 'payload', 'sendRecovery');
      expect400(await h.a.put('/api/v1/alert-channels/0', { sendRecovery: true }), 'params', 'id');
      expect(await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`))).toEqual(rotated);
      expect(await secret()).toBe('whsec-456');
    });

    it('PUT /v1/alert-channels/{id}/subscriptions replaces the channel\'s checks and groups; the check responses follow', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const group = await created(h.a.post('/api/v2/check-groups?autoAssignAlerts=false', { name: 'backend' }));
      const check = await newCheck();
      const first = await ok(h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, [{ checkId: check.id }, { groupId: group.id, activated: false }]));
      expect(first).toEqual({ ...channel, subscriptions: expect.any(Array) });
      expect(first.subscriptions).toHaveLength(2);
      expect(first.subscriptions).toEqual(expect.arrayContaining([
        { id: expect.any(Number), checkId: check.id, groupId: null, activated: true },
        { id: expect.any(Number), checkId: null, groupId: group.id, activated: false },
      ]));
      expect((await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`))).subscriptions).toEqual(first.subscriptions);
      const subscribed = await ok(h.a.get(`/api/v1/checks/${check.id}`));
      expect(subscribed.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      expect(subscribed.alertChannels.email).toEqual([{ address: 'ops@example.com' }]);

      const emptied = await ok(h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, []));
      expect(emptied.subscriptions).toEqual([]);
      const unsubscribed = await ok(h.a.get(`/api/v1/checks/${check.id}`));
      expect(unsubscribed.alertChannelSubscriptions).toEqual([]);
      expect(unsubscribed.alertChannels.email).toEqual([]);
    });

    it('PUT /v1/alert-channels/{id}/subscriptions refuses bad items, naming them, and changes nothing', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const check = await newCheck();
      const theirCheck = await newCheck(h.b);
      const theirGroup = await created(h.b.post('/api/v2/check-groups', { name: 'theirs' }));
      const path = `/api/v1/alert-channels/${channel.id}/subscriptions`;
      await ok(h.a.put(path, [{ checkId: check.id }]));
      const before = await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`));
      expect400(await h.a.put(path, [{ checkId: check.id }, { checkId: theirCheck.id }]), 'payload', '1.checkId');
      expect400(await h.a.put(path, [{ groupId: theirGroup.id }]), 'payload', '0.groupId');
      expect400(await h.a.put(path, [{ groupId: 0 }]), 'payload', '0.groupId');
      expect400(await h.a.put(path, [{ checkId: check.id, activated: 'yes' }]), 'payload', '0.activated');
      expect400(await h.a.put(path, [{ checkId: MISSING_UUID }]), 'payload', '0.checkId');
      // Exactly one of checkId and groupId; the whole body is an array.
      for (const body of [[{}], [{ checkId: check.id, groupId: 1 }], { checkId: check.id }]) {
        const res = await h.a.put(path, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', validation: { source: 'payload' } });
      }
      expect(await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`))).toEqual(before);
      expect((await ok(h.b.get(`/api/v1/checks/${theirCheck.id}`))).alertChannelSubscriptions).toEqual([]);
    });

    it('a group subscribed through PUT /v1/alert-channels/{id}/subscriptions shows the channel in its alertChannelSubscriptions', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const group = await created(h.a.post('/api/v2/check-groups?autoAssignAlerts=false', { name: 'backend' }));
      expect(group.alertChannelSubscriptions).toEqual([]);
      await ok(h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, [{ groupId: group.id, activated: true }]));
      expect((await ok(h.a.get(`/api/v2/check-groups/${group.id}`))).alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
    });

    it('DELETE /v1/alert-channels/{id} answers 204, removes the channel and its subscriptions', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'SMS', config: { number: '+14155550100', name: 'on call' } }));
      const check = await newCheck(h.a, {}, '');
      expect(check.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      expect(check.alertChannels.sms).toEqual([{ number: '+14155550100', name: 'on call' }]);
      await deleted(h.a.delete(`/api/v1/alert-channels/${channel.id}`));
      expect404(await h.a.get(`/api/v1/alert-channels/${channel.id}`));
      expect404(await h.a.delete(`/api/v1/alert-channels/${channel.id}`));
      expect404(await h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, []));
      expect(await ok(h.a.get('/api/v1/alert-channels'))).toEqual([]);
      expect(await h.vigil.storage.alertSubscriptions.listAll(h.a.accountId)).toEqual([]);
      const after = await ok(h.a.get(`/api/v1/checks/${check.id}`));
      expect(after.alertChannelSubscriptions).toEqual([]);
      expect(after.alertChannels.sms).toEqual([]);
      expect400(await h.a.delete('/api/v1/alert-channels/x1'), 'params', 'id');
    });

    it('the channels a check notifies on its runs follow PUT /v1/alert-channels/{id}/subscriptions', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const other = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'dev@example.com' } }));
      const auto = await newCheck(h.a, { name: 'auto' }, '');
      const manual = await newCheck(h.a, { name: 'manual' });
      const notified = async (checkId: string) =>
        (await h.vigil.checks.getForRun(h.a.accountId, checkId)).check.alertChannelSubscriptions
          .filter((s) => s.activated).map((s) => s.alertChannelId).sort();
      expect(await notified(auto.id)).toEqual([channel.id, other.id].sort());
      expect(await notified(manual.id)).toEqual([]);
      // The channel now covers only the manual check.
      await ok(h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, [{ checkId: manual.id }]));
      expect((await ok(h.a.get(`/api/v1/checks/${auto.id}`))).alertChannelSubscriptions).toEqual([{ alertChannelId: other.id, activated: true }]);
      expect(await notified(auto.id)).toEqual([other.id]);
      expect(await notified(manual.id)).toEqual([channel.id]);
    });

    it('a check that was subscribed to a deleted channel can still be updated', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const check = await newCheck(h.a, {}, '');
      expect(check.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      await deleted(h.a.delete(`/api/v1/alert-channels/${channel.id}`));
      const renamed = await ok(h.a.put(`/api/v1/checks/tcp/${check.id}`, { name: 'renamed' }));
      expect(renamed).toMatchObject({ name: 'renamed', alertChannelSubscriptions: [] });
    });

    it('a group that was subscribed to a deleted channel no longer lists it and can still be updated', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      expect(group.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      await deleted(h.a.delete(`/api/v1/alert-channels/${channel.id}`));
      expect((await ok(h.a.get(`/api/v2/check-groups/${group.id}`))).alertChannelSubscriptions).toEqual([]);
      const renamed = await ok(h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'backend 2' }));
      expect(renamed).toMatchObject({ name: 'backend 2', alertChannelSubscriptions: [] });
    });

    it('401 without credentials and 403 with another account\'s header on every alert-channel route', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const id = channel.id;
      await expectAuthGuards(h, [
        ['get', '/api/v1/alert-channels'],
        ['get', `/api/v1/alert-channels/${id}`],
        ['post', '/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'x@example.com' } }],
        ['put', `/api/v1/alert-channels/${id}`, { sendFailure: false }],
        ['put', `/api/v1/alert-channels/${id}/subscriptions`, []],
        ['delete', `/api/v1/alert-channels/${id}`],
      ]);
      expect(await ok(h.a.get('/api/v1/alert-channels'))).toEqual([channel]);
    });

    it('404 for another account\'s channel on GET, PUT, DELETE and PUT subscriptions; the channel stays as it was', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const check = await newCheck();
      await ok(h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, [{ checkId: check.id }]));
      const before = await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`));
      await expectHiddenFromB(h, [
        ['get', `/api/v1/alert-channels/${channel.id}`],
        ['put', `/api/v1/alert-channels/${channel.id}`, { sendFailure: false, config: { address: 'thief@example.com' } }],
        ['put', `/api/v1/alert-channels/${channel.id}/subscriptions`, []],
        ['delete', `/api/v1/alert-channels/${channel.id}`],
      ]);
      expect(await ok(h.a.get(`/api/v1/alert-channels/${channel.id}`))).toEqual(before);
      // b's own channel cannot subscribe a's check either.
      const theirs = await created(h.b.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'b@example.com' } }));
      expect400(await h.b.put(`/api/v1/alert-channels/${theirs.id}/subscriptions`, [{ checkId: check.id }]), 'payload', '0.checkId');
    });
  });
});
