/**
 * The resource routes of the HTTP API through the real Express router: alert channels, dashboards
 * (and their keys), maintenance windows, incidents, status pages with their services and incidents,
 * client certificates, error groups, reporting and analytics. Every route: its success case, the
 * constraints of its schema (400 naming the field), 401 without credentials, 403 for another
 * account's header and 404 for another account's id (which stays as it was).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import type request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkResultFixture, tcpCheckFixture } from '@vigil/core/testing';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiClient, type ApiHarness } from './support/harness.js';
import { expect400, expect404, expect409, expectAuthGuards, expectHiddenFromB, call, type RouteCall } from './support/expect.js';

afterAll(dropPostgresSchema);

/** The harness clock's start: everything created before the clock moves carries this time. */
const T0 = '2026-05-01T12:00:00.000Z';
const T0_MS = Date.parse(T0);
const HOUR = 3_600_000;
const MASK = '********';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

type Body = Record<string, unknown>;
/** A route, its path and a valid body (so that only the credentials can make it fail). */

// ---------------------------------------------------------------------------------------------
// Real PEM material for the client-certificate routes (node cannot make X.509 certificates).

interface Pem {
  cert: string;
  key: string;
}
let plain: Pem;
let encrypted: Pem;
let other: Pem;
const PASSPHRASE = 'c0rrect-horse';

function pemBlock(text: string, label: RegExp): string {
  const m = text.match(label);
  if (!m) throw new Error(`no PEM block ${label} in openssl output`);
  return `${m[0]}\n`;
}

function selfSigned(cn: string, passphrase?: string): Pem {
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-subj', `/CN=${cn}`, '-days', '2', '-keyout', '-', '-out', '-'];
  args.push(...(passphrase ? ['-passout', `pass:${passphrase}`] : ['-nodes']));
  const out = execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return {
    cert: pemBlock(out, /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/),
    key: pemBlock(out, /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/),
  };
}

beforeAll(() => {
  plain = selfSigned('api.internal');
  encrypted = selfSigned('billing.internal', PASSPHRASE);
  other = selfSigned('other.internal');
});

// ---------------------------------------------------------------------------------------------
// Assertion helpers


type Pending = request.Test | request.Response | Promise<request.Response>;

async function ok(res: Pending, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}
const created = (res: Pending) => ok(res, 201);

async function deleted(res: Pending): Promise<void> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(204);
  expect(r.text).toBe('');
}

const ids = (list: { id: unknown }[]) => list.map((x) => x.id);

// ---------------------------------------------------------------------------------------------
// Bodies

const tcpBody = (over: Body = {}): Body => ({ name: 'orders-db', request: { hostname: 'db.internal', port: 5432 }, ...over });
const windowBody = (over: Body = {}): Body => ({
  name: 'db upgrade',
  startsAt: '2026-06-01T01:00:00.000Z',
  endsAt: '2026-06-01T03:00:00.000Z',
  repeatUnit: 'DAY',
  ...over,
});
const incidentBody = (dashboardId: number, over: Body = {}): Body => ({
  name: 'API outage',
  dashboardId,
  incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into elevated errors' }],
  ...over,
});

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
  { type: 'CHAT', config: { url: 'https://chat.example.com/hooks/1' }, answered: { url: 'https://chat.example.com/hooks/1', channel: null } },
  { type: 'CHAT_APP', config: { url: 'https://chatapp.example.com/in/2' }, answered: { url: 'https://chatapp.example.com/in/2' } },
  { type: 'PAGING_A', config: { serviceKey: 'pa-service-key' }, answered: { serviceKey: MASK, account: null, serviceName: null } },
  { type: 'PAGING_B', config: { name: 'ops', apiKey: 'pb-api-key', region: 'EU' }, answered: { name: 'ops', apiKey: MASK, region: 'EU', priority: 'P3' } },
];

const DEFAULT_FLAGS = { sendRecovery: true, sendFailure: true, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false };

describe.each(BACKENDS)('resource routes on %s', (backend) => {
  let h: ApiHarness;
  beforeEach(async () => {
    h = await apiHarness(backend, { rateLimit: false });
  });
  afterEach(() => h.close());

  const newCheck = async (c: ApiClient = h.a, over: Body = {}, query = '?autoAssignAlerts=false') =>
    created(c.post(`/api/v1/checks/tcp${query}`, tcpBody(over)));
  const newDashboard = async (c: ApiClient = h.a, over: Body = {}) =>
    created(c.post('/api/v1/dashboards', { header: 'Acme status', ...over }));
  const newService = async (c: ApiClient = h.a, name = 'API') => created(c.post('/api/v1/status-pages/services', { name }));

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
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

  // -------------------------------------------------------------------------------------------
  describe('client certificates', () => {
    const PUBLIC_KEYS = ['ca', 'cert', 'created_at', 'host', 'id'];
    /** No response of the certificate routes ever carries the key or passphrase. */
    function expectNoSecrets(body: unknown): void {
      const items = Array.isArray(body) ? body : [body];
      for (const item of items) {
        expect(Object.keys(item as object).sort()).toEqual(PUBLIC_KEYS);
        expect(item).not.toHaveProperty('key');
        expect(item).not.toHaveProperty('passphrase');
        expect(item).not.toHaveProperty('encryptedKey');
        expect(item).not.toHaveProperty('encryptedPassphrase');
      }
      const text = JSON.stringify(body);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain(PASSPHRASE);
    }

    it('POST /v1/client-certificates answers 201 with id, host, cert, ca and created_at, never the key or passphrase', async () => {
      const res = await h.a.post('/api/v1/client-certificates', { host: 'API.Internal', cert: plain.cert, key: plain.key });
      const cert = await created(res);
      expect(cert).toEqual({ id: expect.stringMatching(UUID_RE), host: 'api.internal', cert: plain.cert, ca: null, created_at: T0 });
      expectNoSecrets(cert);
      expect(res.text).not.toContain('"key"');
      expect(res.text).not.toContain('"passphrase"');

      const withCa = await created(h.a.post('/api/v1/client-certificates', {
        host: '*.billing.internal', cert: encrypted.cert, key: encrypted.key, passphrase: PASSPHRASE, ca: other.cert,
      }));
      expect(withCa).toEqual({ id: expect.stringMatching(UUID_RE), host: '*.billing.internal', cert: encrypted.cert, ca: other.cert, created_at: T0 });
      expectNoSecrets(withCa);
      // The cert keeps its line breaks.
      expect(withCa.cert.split('\n').length).toBeGreaterThan(3);

      const certOnly = await created(h.a.post('/api/v1/client-certificates', { host: 'plain.internal', cert: other.cert, key: null, passphrase: null }));
      expectNoSecrets(certOnly);

      for (const path of ['/api/v1/client-certificates', `/api/v1/client-certificates/${cert.id}`, `/api/v1/client-certificates/${withCa.id}`]) {
        const read = await h.a.get(path).expect(200);
        expectNoSecrets(read.body);
        expect(read.text).not.toContain('"key"');
        expect(read.text).not.toContain('"passphrase"');
      }
      expect(await ok(h.a.get(`/api/v1/client-certificates/${withCa.id}`))).toEqual(withCa);
      const list = await h.a.get('/api/v1/client-certificates?limit=2').expect(200);
      expect(list.body).toEqual([cert, withCa]);
      expect(list.headers['content-range']).toBe('0-1/3');
      // At rest the key and passphrase are sealed; a run opens them.
      const raw = JSON.stringify(await h.vigil.storage.clientCertificates.get(h.a.accountId, withCa.id));
      expect(raw).not.toContain('PRIVATE KEY');
      expect(raw).not.toContain(PASSPHRASE);
      const opened = await h.vigil.clientCertificates.findForHost(h.a.accountId, 'eu.billing.internal');
      expect(opened).toMatchObject({ host: '*.billing.internal', key: encrypted.key, passphrase: PASSPHRASE });
      expect(await ok(h.b.get('/api/v1/client-certificates'))).toEqual([]);
    });

    it('POST refuses each constraint violation naming the field, and stores nothing', async () => {
      const cases: [Body, string[]][] = [
        [{}, ['host', 'cert']],
        [{ host: 'https://api.internal', cert: plain.cert }, ['host']],
        [{ host: 'api.internal:443', cert: plain.cert }, ['host']],
        [{ host: 'api.internal/path', cert: plain.cert }, ['host']],
        [{ host: 'api.*.internal', cert: plain.cert }, ['host']],
        [{ host: '', cert: plain.cert }, ['host']],
        [{ host: 'api.internal', cert: 'not a certificate' }, ['cert']],
        [{ host: 'api.internal', cert: '-----BEGIN CERTIFICATE-----\nbm9wZQ==\n-----END CERTIFICATE-----\n' }, ['cert']],
        [{ host: 'api.internal', cert: plain.cert, ca: 'not a ca' }, ['ca']],
        [{ host: 'api.internal', cert: plain.cert, key: 'not a key' }, ['key']],
        [{ host: 'api.internal', cert: plain.cert, key: other.key }, ['key']],
        [{ host: 'api.internal', cert: encrypted.cert, key: encrypted.key, passphrase: 'wrong' }, ['passphrase']],
        [{ host: 'api.internal', cert: plain.cert, passphrase: 42 }, ['passphrase']],
      ];
      for (const [body, keys] of cases) {
        const res = await h.a.post('/api/v1/client-certificates', body);
        expect400(res, 'payload', ...keys);
        expect(res.text).not.toContain('PRIVATE KEY');
      }
      expect(await ok(h.a.get('/api/v1/client-certificates'))).toEqual([]);
    });

    it('there is no PUT: it answers 404 in the spec error shape and changes nothing', async () => {
      const cert = await created(h.a.post('/api/v1/client-certificates', { host: 'api.internal', cert: plain.cert, key: plain.key }));
      const path = `/api/v1/client-certificates/${cert.id}`;
      for (const method of ['put', 'patch'] as const) {
        const res = await h.a[method](path, { host: 'evil.internal', cert: other.cert, key: other.key });
        expect404(res);
      }
      expect(await ok(h.a.get(path))).toEqual(cert);
    });

    it('DELETE /v1/client-certificates/{id} answers 204 and removes the certificate', async () => {
      const cert = await created(h.a.post('/api/v1/client-certificates', { host: 'api.internal', cert: plain.cert, key: plain.key }));
      const keep = await created(h.a.post('/api/v1/client-certificates', { host: 'other.internal', cert: other.cert, key: other.key }));
      await deleted(h.a.delete(`/api/v1/client-certificates/${cert.id}`));
      expect404(await h.a.get(`/api/v1/client-certificates/${cert.id}`));
      expect404(await h.a.delete(`/api/v1/client-certificates/${cert.id}`));
      expect(await ok(h.a.get('/api/v1/client-certificates'))).toEqual([keep]);
      expect(await h.vigil.clientCertificates.findForHost(h.a.accountId, 'api.internal')).toBeNull();
    });

    it('401 and 403 on every client-certificate route; 404 for another account\'s certificate, which stays as it was', async () => {
      const cert = await created(h.a.post('/api/v1/client-certificates', { host: 'api.internal', cert: plain.cert, key: plain.key }));
      const path = `/api/v1/client-certificates/${cert.id}`;
      await expectAuthGuards(h, [
        ['get', '/api/v1/client-certificates'],
        ['get', path],
        ['post', '/api/v1/client-certificates', { host: 'x.internal', cert: plain.cert }],
        ['delete', path],
      ]);
      await expectHiddenFromB(h, [
        ['get', path],
        ['delete', path],
      ]);
      expect(await ok(h.a.get('/api/v1/client-certificates'))).toEqual([cert]);
      expect(await h.vigil.clientCertificates.findForHost(h.b.accountId, 'api.internal')).toBeNull();
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('error groups', () => {
    const hash = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
    const record = (checkId: string, message: string, at = T0, accountId = h.a.accountId) =>
      h.vigil.errorGroups.recordOccurrence(accountId, checkId, message, at);

    it('GET /v1/error-groups/checks/{checkId} lists the check\'s groups: one per cleaned message, paged by limit and page', async () => {
      const check = await newCheck();
      const other = await newCheck(h.a, { name: 'other' });
      await record(check.id, 'connect ECONNREFUSED 10.0.0.1:5432');
      await record(check.id, 'connect ECONNREFUSED 10.0.0.2:5432', '2026-05-01T12:05:00.000Z');
      await record(check.id, 'Timeout after 5000 ms');
      await record(other.id, 'connect ECONNREFUSED 10.0.0.1:5432');
      const groups = await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}`));
      expect(groups).toHaveLength(2);
      const refused = groups.find((g: { rawErrorMessage: string }) => g.rawErrorMessage.startsWith('connect'));
      expect(refused).toEqual({
        id: expect.any(String),
        checkId: check.id,
        errorHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        rawErrorMessage: 'connect ECONNREFUSED 10.0.0.2:5432',
        cleanedErrorMessage: expect.any(String),
        firstSeen: T0,
        lastSeen: '2026-05-01T12:05:00.000Z',
        archivedUntilNextEvent: false,
        archivedForever: false,
        rootCauseAnalyses: [],
      });
      expect(refused.cleanedErrorMessage).not.toContain('10.0.0');
      expect(refused.errorHash).toBe(hash(refused.cleanedErrorMessage));
      const page2 = await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=1&page=2`));
      expect(page2).toHaveLength(1);
      const page1 = await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=1`));
      expect([...ids(page1), ...ids(page2)].sort()).toEqual(ids(groups).sort());
      expect(await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}?page=2`))).toEqual([]);
      expect(await ok(h.a.get(`/api/v1/error-groups/checks/${other.id}`))).toHaveLength(1);

      expect400(await h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=0`), 'query', 'limit');
      expect400(await h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=101`), 'query', 'limit');
      expect400(await h.a.get(`/api/v1/error-groups/checks/${check.id}?page=0`), 'query', 'page');
      expect404(await h.a.get(`/api/v1/error-groups/checks/${MISSING_UUID}`));
    });

    it('GET /v1/error-groups/{id} reads a group; PATCH archives it until the next event or for ever', async () => {
      const check = await newCheck();
      const group = await record(check.id, 'Timeout after 5000 ms');
      const path = `/api/v1/error-groups/${group.id}`;
      const read = await ok(h.a.get(path));
      expect(read).toEqual({
        id: group.id, checkId: check.id, errorHash: hash(read.cleanedErrorMessage), rawErrorMessage: 'Timeout after 5000 ms',
        cleanedErrorMessage: expect.any(String), firstSeen: T0, lastSeen: T0, archivedUntilNextEvent: false, archivedForever: false, rootCauseAnalyses: [],
      });

      const archived = await ok(h.a.patch(path, { archivedUntilNextEvent: true }));
      expect(archived).toEqual({ ...read, archivedUntilNextEvent: true });
      expect(await ok(h.a.get(path))).toEqual(archived);
      // The next occurrence unarchives it.
      await record(check.id, 'Timeout after 6000 ms', '2026-05-01T13:00:00.000Z');
      expect(await ok(h.a.get(path))).toMatchObject({ archivedUntilNextEvent: false, lastSeen: '2026-05-01T13:00:00.000Z' });

      const forever = await ok(h.a.patch(path, { archiveForEver: true }));
      expect(forever).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true });
      await record(check.id, 'Timeout after 7000 ms', '2026-05-01T14:00:00.000Z');
      expect(await ok(h.a.get(path))).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true, lastSeen: '2026-05-01T14:00:00.000Z' });

      const unarchived = await ok(h.a.patch(path, { archivedUntilNextEvent: false }));
      expect(unarchived).toMatchObject({ archivedUntilNextEvent: false, archivedForever: false });
      expect404(await h.a.get(`/api/v1/error-groups/${MISSING_UUID}`));
      expect404(await h.a.patch(`/api/v1/error-groups/${MISSING_UUID}`, { archivedUntilNextEvent: true }));
    });

    it('PATCH /v1/error-groups/{id} refuses non-boolean flags naming the field and changes nothing', async () => {
      const check = await newCheck();
      const group = await record(check.id, 'Timeout after 5000 ms');
      const path = `/api/v1/error-groups/${group.id}`;
      const before = await ok(h.a.get(path));
      expect400(await h.a.patch(path, { archivedUntilNextEvent: 'yes' }), 'payload', 'archivedUntilNextEvent');
      expect400(await h.a.patch(path, { archiveForEver: 1 }), 'payload', 'archiveForEver');
      expect400(await h.a.patch(path, { archiveForEver: null, archivedUntilNextEvent: 'true' }), 'payload', 'archiveForEver', 'archivedUntilNextEvent');
      expect(await ok(h.a.get(path))).toEqual(before);
    });

    it('GET /v1/test-session-error-groups/projects/{projectId} lists the project\'s groups with environments and test metadata', async () => {
      const meta = { projectName: 'web-e2e', testFile: 'checks/login.spec.ts', testTitle: 'logs in', suitePath: ['auth'] };
      const occur = (projectId: string, environment: string | null, raw: string, at = T0, accountId = h.a.accountId) =>
        h.vigil.errorGroups.recordTestSessionOccurrence(accountId, { projectId, environment, raw, at, pwtMetadata: meta });
      await occur('web-e2e', 'staging', 'expect(received).toBe(expected) at line 12');
      await occur('web-e2e', 'production', 'expect(received).toBe(expected) at line 13', '2026-05-01T12:10:00.000Z');
      await occur('web-e2e', null, 'Navigation timeout of 30000 ms exceeded');
      await occur('api-e2e', 'staging', 'socket hang up');
      await occur('web-e2e', 'staging', 'secret of b', T0, h.b.accountId);

      const groups = await ok(h.a.get('/api/v1/test-session-error-groups/projects/web-e2e'));
      expect(groups).toHaveLength(2);
      const assertion = groups.find((g: { rawErrorMessage: string }) => g.rawErrorMessage.startsWith('expect'));
      expect(assertion).toEqual({
        id: expect.any(String),
        projectId: 'web-e2e',
        environments: expect.any(Array),
        errorHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        rawErrorMessage: 'expect(received).toBe(expected) at line 13',
        cleanedErrorMessage: expect.any(String),
        firstSeen: T0,
        lastSeen: '2026-05-01T12:10:00.000Z',
        archivedUntilNextEvent: false,
        archivedForever: false,
        rootCauseAnalyses: [],
        pwtMetadata: [meta],
      });
      expect([...assertion.environments].sort()).toEqual(['production', 'staging']);
      expect(assertion.errorHash).toBe(hash(assertion.cleanedErrorMessage));
      expect(JSON.stringify(groups)).not.toContain('secret of b');
      expect(await ok(h.a.get('/api/v1/test-session-error-groups/projects/api-e2e'))).toHaveLength(1);
      expect(await ok(h.a.get('/api/v1/test-session-error-groups/projects/unknown-project'))).toEqual([]);
      // Another account sees only its own groups of a project with the same name.
      const theirs = await ok(h.b.get('/api/v1/test-session-error-groups/projects/web-e2e'));
      expect(theirs.map((g: { rawErrorMessage: string }) => g.rawErrorMessage)).toEqual(['secret of b']);
      expect(await ok(h.b.get('/api/v1/test-session-error-groups/projects/api-e2e'))).toEqual([]);
    });

    describe('of a test project', () => {
      const meta = { projectName: 'web-e2e', testFile: 'checks/login.spec.ts', testTitle: 'logs in', suitePath: ['auth'] };
      const occur = (raw: string, at = T0, accountId = h.a.accountId, environment = 'staging') =>
        h.vigil.errorGroups.recordTestSessionOccurrence(accountId, { projectId: 'web-e2e', environment, raw, at, pwtMetadata: meta });
      /** The group as the project's list shows it to a. */
      const listed = async (id: string) =>
        (await ok(h.a.get('/api/v1/test-session-error-groups/projects/web-e2e'))).find((g: { id: string }) => g.id === id);

      it('PATCH /v1/error-groups/{id} archives a project\'s group until the next event or for ever, and unarchives it; GET reads it', async () => {
        const group = await occur('Navigation timeout of 30000 ms exceeded');
        const path = `/api/v1/error-groups/${group.id}`;
        const before = await listed(group.id);
        expect(before).toMatchObject({ projectId: 'web-e2e', environments: ['staging'], pwtMetadata: [meta], archivedUntilNextEvent: false, archivedForever: false });
        expect(await ok(h.a.get(path))).toEqual(before);

        const archived = await ok(h.a.patch(path, { archivedUntilNextEvent: true }));
        expect(archived).toEqual({ ...before, archivedUntilNextEvent: true });
        expect(await listed(group.id)).toEqual(archived);
        expect(await ok(h.a.get(path))).toEqual(archived);
        // The next occurrence unarchives it.
        await occur('Navigation timeout of 45000 ms exceeded', '2026-05-01T13:00:00.000Z', h.a.accountId, 'production');
        const reopened = await listed(group.id);
        expect(reopened).toMatchObject({ archivedUntilNextEvent: false, archivedForever: false, lastSeen: '2026-05-01T13:00:00.000Z' });
        expect([...reopened.environments].sort()).toEqual(['production', 'staging']);

        const forever = await ok(h.a.patch(path, { archiveForEver: true }));
        expect(forever).toEqual({ ...reopened, archivedUntilNextEvent: true, archivedForever: true });
        await occur('Navigation timeout of 60000 ms exceeded', '2026-05-01T14:00:00.000Z');
        expect(await listed(group.id)).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true, lastSeen: '2026-05-01T14:00:00.000Z' });

        const unarchived = await ok(h.a.patch(path, { archivedUntilNextEvent: false }));
        expect(unarchived).toMatchObject({ id: group.id, projectId: 'web-e2e', archivedUntilNextEvent: false, archivedForever: false });
        expect(unarchived).not.toHaveProperty('checkId');
        expect(await listed(group.id)).toEqual(unarchived);
      });

      it('PATCH /v1/error-groups/{id} refuses a bad body for a project\'s group naming the field, and changes nothing', async () => {
        const group = await occur('Navigation timeout of 30000 ms exceeded');
        const path = `/api/v1/error-groups/${group.id}`;
        const archived = await ok(h.a.patch(path, { archiveForEver: true }));
        expect(archived).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true });
        expect400(await h.a.patch(path, { archivedUntilNextEvent: 'no' }), 'payload', 'archivedUntilNextEvent');
        expect400(await h.a.patch(path, { archiveForEver: 0 }), 'payload', 'archiveForEver');
        expect400(await h.a.patch(path, { archiveForEver: false, archivedUntilNextEvent: 'false' }), 'payload', 'archivedUntilNextEvent');
        expect(await listed(group.id)).toEqual(archived);
        expect(await ok(h.a.get(path))).toEqual(archived);
      });

      it('401 and 403 on its PATCH; an unknown id and another account\'s group answer the same 404, and the group stays as it was', async () => {
        const group = await occur('Navigation timeout of 30000 ms exceeded');
        const path = `/api/v1/error-groups/${group.id}`;
        await expectAuthGuards(h, [['get', path], ['patch', path, { archivedUntilNextEvent: true }]]);
        const before = await listed(group.id);
        await expectHiddenFromB(h, [
          ['get', path],
          ['patch', path, { archivedUntilNextEvent: true }],
          ['patch', path, { archiveForEver: true }],
        ]);
        const foreign = await h.b.patch(path, { archivedUntilNextEvent: true });
        const unknown = await h.a.patch(`/api/v1/error-groups/${MISSING_UUID}`, { archivedUntilNextEvent: true });
        expect404(unknown);
        expect(foreign.body).toEqual(unknown.body);
        expect(await listed(group.id)).toEqual(before);
        // b's own group of a project with the same name is b's to archive, and a's stays as it was.
        const theirs = await occur('Navigation timeout of 30000 ms exceeded', T0, h.b.accountId);
        expect(await ok(h.b.patch(`/api/v1/error-groups/${theirs.id}`, { archivedUntilNextEvent: true }))).toMatchObject({ archivedUntilNextEvent: true });
        expect(await listed(group.id)).toEqual(before);
        expect(await ok(h.a.patch(path, { archivedUntilNextEvent: true }))).toEqual({ ...before, archivedUntilNextEvent: true });
      });
    });

    it('401 and 403 on every error-group route; 404 for another account\'s check and group, which stays as it was', async () => {
      const check = await newCheck();
      const group = await record(check.id, 'Timeout after 5000 ms');
      const path = `/api/v1/error-groups/${group.id}`;
      await expectAuthGuards(h, [
        ['get', `/api/v1/error-groups/checks/${check.id}`],
        ['get', path],
        ['patch', path, { archivedUntilNextEvent: true }],
        ['get', '/api/v1/test-session-error-groups/projects/web-e2e'],
      ]);
      const before = await ok(h.a.get(path));
      await expectHiddenFromB(h, [
        ['get', `/api/v1/error-groups/checks/${check.id}`],
        ['get', path],
        ['patch', path, { archivedUntilNextEvent: true }],
        ['patch', path, { archiveForEver: true }],
      ]);
      expect(await ok(h.a.get(path))).toEqual(before);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('reporting', () => {
    /** Results of a check at hours before T0 with a response time, failing or not. */
    const results = (accountId: string, checkId: string, runs: [hoursAgo: number, responseTime: number, failed?: boolean][]) =>
      h.vigil.storage.checkResults.insertMany(accountId, runs.map(([hoursAgo, responseTime, failed]) => checkResultFixture(checkId, {
        startedAt: new Date(T0_MS - hoursAgo * HOUR).toISOString(), responseTime, hasFailures: failed ?? false,
      })));

    it('GET /v1/reporting defaults to last24Hrs and answers one entry per check with successRatio in percent and times in ms', async () => {
      const db = await newCheck(h.a, { name: 'db', tags: ['db', 'prod'] });
      const idle = await newCheck(h.a, { name: 'idle', tags: ['prod'] });
      await results(h.a.accountId, db.id, [[1, 100], [2, 300, true], [48, 1000]]);
      const report = await ok(h.a.get('/api/v1/reporting'));
      expect(report).toHaveLength(2);
      const entry = report.find((e: { checkId: string }) => e.checkId === db.id);
      expect(entry).toEqual({
        name: 'db', checkId: db.id, checkType: 'TCP', deactivated: false, tags: ['db', 'prod'],
        aggregate: { successRatio: 50, avg: 200, p95: expect.any(Number), p99: expect.any(Number) },
      });
      expect(entry.aggregate.p95).toBeGreaterThanOrEqual(200);
      expect(entry.aggregate.p95).toBeLessThanOrEqual(300);
      expect(entry.aggregate.p99).toBeGreaterThanOrEqual(entry.aggregate.p95);
      expect(report.find((e: { checkId: string }) => e.checkId === idle.id)).toEqual({
        name: 'idle', checkId: idle.id, checkType: 'TCP', deactivated: false, tags: ['prod'], aggregate: { successRatio: 0, avg: 0, p95: 0, p99: 0 },
      });
      expect(await ok(h.a.get('/api/v1/reporting?quickRange=last24Hrs'))).toEqual(report);

      const week = (await ok(h.a.get('/api/v1/reporting?quickRange=last7Days'))).find((e: { checkId: string }) => e.checkId === db.id);
      expect(week.aggregate.successRatio).toBeCloseTo(66.67, 1);
      expect(week.aggregate.avg).toBeCloseTo(466.67, 1);
      for (const range of ['last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth']) {
        expect(await ok(h.a.get(`/api/v1/reporting?quickRange=${range}`)), range).toHaveLength(2);
      }
      // from/to override the quick range, as unix seconds or ISO 8601.
      const from = Math.floor((T0_MS - 72 * HOUR) / 1000);
      const to = Math.floor((T0_MS - 24 * HOUR) / 1000);
      const old = (await ok(h.a.get(`/api/v1/reporting?from=${from}&to=${to}`))).find((e: { checkId: string }) => e.checkId === db.id);
      expect(old.aggregate).toEqual({ successRatio: 100, avg: 1000, p95: 1000, p99: 1000 });
      const iso = (await ok(h.a.get('/api/v1/reporting?from=2026-04-28T00:00:00Z&to=2026-04-30T12:00:00Z'))).find((e: { checkId: string }) => e.checkId === db.id);
      expect(iso.aggregate).toEqual(old.aggregate);
      expect(await ok(h.b.get('/api/v1/reporting'))).toEqual([]);
    });

    it('GET /v1/reporting filters by deactivated and by tags', async () => {
      const on = await newCheck(h.a, { name: 'on', tags: ['db', 'prod'] });
      const off = await newCheck(h.a, { name: 'off', tags: ['web'], activated: false });
      const names = async (query: string) => ((await ok(h.a.get(`/api/v1/reporting${query}`))) as { name: string }[]).map((e) => e.name).sort();
      expect(await names('')).toEqual(['off', 'on']);
      expect(await names('?deactivated=true')).toEqual(['off']);
      expect(await names('?deactivated=false')).toEqual(['on']);
      expect(await names('?filterByTags=web')).toEqual(['off']);
      expect(await names('?filterByTags=db')).toEqual(['on']);
      expect(await names('?filterByTags=db,prod')).toEqual(['on']);
      expect(await names('?filterByTags=db&filterByTags=prod')).toEqual(['on']);
      expect(await names('?filterByTags=staging')).toEqual([]);
      expect(await names('?filterByTags=web&deactivated=false')).toEqual([]);
      const entry = (await ok(h.a.get('/api/v1/reporting?deactivated=true')))[0];
      expect(entry).toMatchObject({ checkId: off.id, deactivated: true, tags: ['web'] });
      expect(on.activated).toBe(true);
    });

    it('GET /v1/reporting refuses a bad quickRange, deactivated, from or to, naming the parameter', async () => {
      await newCheck();
      expect400(await h.a.get('/api/v1/reporting?quickRange=last24Hours'), 'query', 'quickRange');
      expect400(await h.a.get('/api/v1/reporting?quickRange=yesterday'), 'query', 'quickRange');
      expect400(await h.a.get('/api/v1/reporting?deactivated=maybe'), 'query', 'deactivated');
      expect400(await h.a.get('/api/v1/reporting?from=last-tuesday'), 'query', 'from');
      expect400(await h.a.get('/api/v1/reporting?to=2026-02-30'), 'query', 'to');
      expect400(await h.a.get('/api/v1/reporting?from=2026-05-01T00:00:00Z&to=2026-04-30T00:00:00Z'), 'query', 'to');
    });

    it('401 and 403 on GET /v1/reporting', async () => {
      await expectAuthGuards(h, [['get', '/api/v1/reporting'], ['get', '/api/v1/reporting?quickRange=last7Days']]);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('analytics', () => {
    const at = (hoursAgo: number, minutes = 0) => new Date(T0_MS - hoursAgo * HOUR + minutes * 60_000).toISOString();

    /** A TCP check of a with four results: two in one hour, one an hour later (failing), one in another location. */
    async function tcpWithResults() {
      const check = await newCheck(h.a, { name: 'db', tags: ['db'] });
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [
        checkResultFixture(check.id, { startedAt: at(3), responseTime: 100, phases: { dns: 10, connection: 20, data: 70, total: 100 } }),
        checkResultFixture(check.id, { startedAt: at(3, 30), responseTime: 300, phases: { dns: 30, connection: 40, data: 230, total: 300 } }),
        checkResultFixture(check.id, { startedAt: at(1), responseTime: 500, hasFailures: true, phases: { dns: 50, connection: 60, data: 390, total: 500 } }),
        checkResultFixture(check.id, { startedAt: at(1, 10), responseTime: 700, runLocation: 'eu-west-1', phases: { dns: 70, connection: 80, data: 550, total: 700 } }),
      ]);
      return check;
    }

    /** A check of type API as stored by a runner plugin (no create route for it in this build). */
    async function apiCheck() {
      const check = await h.vigil.storage.checks.insert(h.a.accountId, { ...tcpCheckFixture({ name: 'public api' }), checkType: 'API' } as never);
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [
        checkResultFixture(check.id, { checkType: 'API', startedAt: at(2), responseTime: 200, statusCode: 200 }),
        checkResultFixture(check.id, { checkType: 'API', startedAt: at(2, 5), responseTime: 400, statusCode: 500, hasFailures: true }),
      ]);
      return check;
    }

    it('GET /v1/analytics/tcp-checks/{id} answers the requested metrics per aggregationInterval bucket with their metadata', async () => {
      const check = await tcpWithResults();
      const res = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total,availability,dns_max&aggregationInterval=60`));
      expect(res).toEqual({
        checkId: check.id, name: 'db', checkType: 'TCP', activated: true, muted: false, frequency: 10,
        from: new Date(T0_MS - 24 * HOUR).toISOString(), to: T0, tags: ['db'],
        series: [
          { startedAt: at(3), total: 200, availability: 100, dns_max: 30 },
          { startedAt: at(1), total: 600, availability: 50, dns_max: 70 },
        ],
        pagination: { page: 1, limit: 10 },
        metadata: {
          total: { label: expect.any(String), unit: 'milliseconds' },
          availability: { label: expect.any(String), unit: 'percent' },
          dns_max: { label: expect.any(String), unit: 'milliseconds' },
        },
      });
      // Without an interval, one bucket over the whole window.
      const whole = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total_max&metrics=retries`));
      expect(whole.series).toEqual([{ startedAt: whole.from, total_max: 700, retries: 0 }]);
      expect(Object.keys(whole.metadata).sort()).toEqual(['retries', 'total_max']);
      // Bounds of aggregationInterval are accepted.
      expect((await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=1`))).series).toHaveLength(4);
      expect((await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=43200`))).series).toHaveLength(1);
      // groupBy runLocation, filterByStatus, paging of the series, windows.
      const grouped = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=60&groupBy=runLocation`));
      expect(grouped.series).toEqual([
        { startedAt: at(3), runLocation: 'us-east-1', total: 200 },
        { startedAt: at(1), runLocation: 'eu-west-1', total: 700 },
        { startedAt: at(1), runLocation: 'us-east-1', total: 500 },
      ].sort((x, y) => x.startedAt.localeCompare(y.startedAt) || x.runLocation.localeCompare(y.runLocation)));
      const failures = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&filterByStatus=failure`));
      expect(failures.series).toEqual([{ startedAt: failures.from, total: 500 }]);
      const paged = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=60&limit=1&page=2`));
      expect(paged.series).toEqual([{ startedAt: at(1), total: 600 }]);
      expect(paged.pagination).toEqual({ page: 2, limit: 1 });
      const week = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&quickRange=last7Days`));
      expect(week.from).toBe(new Date(T0_MS - 7 * 24 * HOUR).toISOString());
      const from = Math.floor((T0_MS - 2 * HOUR) / 1000);
      const window = await ok(h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&from=${from}&to=${T0}`));
      expect(window.series).toEqual([{ startedAt: new Date(from * 1000).toISOString(), total: 600 }]);
    });

    it('GET /v1/analytics/tcp-checks/{id} refuses a missing or unknown metric and out-of-range parameters, naming them', async () => {
      const check = await tcpWithResults();
      const path = `/api/v1/analytics/tcp-checks/${check.id}`;
      expect400(await h.a.get(path), 'query', 'metrics');
      expect400(await h.a.get(`${path}?metrics=`), 'query', 'metrics');
      const unknown = await h.a.get(`${path}?metrics=total,responseTime`);
      expect400(unknown, 'query', 'metrics');
      expect(unknown.body.message).toContain('responseTime');
      expect400(await h.a.get(`${path}?metrics=total_p42`), 'query', 'metrics');
      expect400(await h.a.get(`${path}?metrics=total&aggregationInterval=0`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=total&aggregationInterval=43201`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=total&aggregationInterval=1.5`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=total&groupBy=statusCode`), 'query', 'groupBy');
      expect400(await h.a.get(`${path}?metrics=total&quickRange=last24Hrs`), 'query', 'quickRange');
      expect400(await h.a.get(`${path}?metrics=total&limit=0`), 'query', 'limit');
      expect400(await h.a.get(`${path}?metrics=total&limit=101`), 'query', 'limit');
      expect400(await h.a.get(`${path}?metrics=total&page=0`), 'query', 'page');
      expect400(await h.a.get(`${path}?metrics=total&from=nope`), 'query', 'from');
      expect400(await h.a.get(`${path}?metrics=total&from=2026-05-01T00:00:00Z&to=2026-04-30T00:00:00Z`), 'query', 'to');
      const status = await h.a.get(`${path}?metrics=total&filterByStatus=pending`);
      expect(status.status).toBe(400);
      expect(status.body.validation.source).toBe('query');
      expect(status.body.validation.keys.every((k: string) => k.startsWith('filterByStatus'))).toBe(true);
      expect404(await h.a.get(`/api/v1/analytics/tcp-checks/${MISSING_UUID}?metrics=total`));
    });

    it('GET /v1/analytics/api-checks/{id} answers API metrics, groups by statusCode, and refuses TCP metrics', async () => {
      const check = await apiCheck();
      const path = `/api/v1/analytics/api-checks/${check.id}`;
      const res = await ok(h.a.get(`${path}?metrics=responseTime,responseTime_max,availability&groupBy=statusCode`));
      expect(res).toMatchObject({ checkId: check.id, name: 'public api', checkType: 'API', pagination: { page: 1, limit: 10 } });
      expect(res.series).toEqual([
        { startedAt: res.from, statusCode: '200', responseTime: 200, responseTime_max: 200, availability: 100 },
        { startedAt: res.from, statusCode: '500', responseTime: 400, responseTime_max: 400, availability: 0 },
      ]);
      expect(res.metadata).toEqual({
        responseTime: { label: expect.any(String), unit: 'milliseconds' },
        responseTime_max: { label: expect.any(String), unit: 'milliseconds' },
        availability: { label: expect.any(String), unit: 'percent' },
      });
      expect((await ok(h.a.get(`${path}?metrics=responseTime&groupBy=runLocation`))).series).toEqual([
        { startedAt: res.from, runLocation: 'us-east-1', responseTime: 300 },
      ]);
      expect400(await h.a.get(path), 'query', 'metrics');
      const tcpMetric = await h.a.get(`${path}?metrics=total`);
      expect400(tcpMetric, 'query', 'metrics');
      expect(tcpMetric.body.message).toContain('total');
      expect400(await h.a.get(`${path}?metrics=responseTime&groupBy=region`), 'query', 'groupBy');
      expect400(await h.a.get(`${path}?metrics=responseTime&aggregationInterval=43201`), 'query', 'aggregationInterval');
      expect400(await h.a.get(`${path}?metrics=responseTime&quickRange=yesterday`), 'query', 'quickRange');
      // Each route reaches only checks of its type.
      const tcp = await newCheck();
      expect404(await h.a.get(`/api/v1/analytics/api-checks/${tcp.id}?metrics=responseTime`));
      expect404(await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total`));
    });

    it('401 and 403 on both analytics routes; 404 for another account\'s check', async () => {
      const tcp = await tcpWithResults();
      const api = await apiCheck();
      await expectAuthGuards(h, [
        ['get', `/api/v1/analytics/tcp-checks/${tcp.id}?metrics=total`],
        ['get', `/api/v1/analytics/api-checks/${api.id}?metrics=responseTime`],
      ]);
      await expectHiddenFromB(h, [
        ['get', `/api/v1/analytics/tcp-checks/${tcp.id}?metrics=total`],
        ['get', `/api/v1/analytics/api-checks/${api.id}?metrics=responseTime`],
      ]);
    });
  });
});
