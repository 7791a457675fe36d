import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/container.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../src/errors.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { MASKED } from '../src/services/masking.js';
import { code } from './assertions.js';

async function setup(): Promise<{ vigil: Vigil; storage: ReturnType<typeof memoryStorage>; a: string; b: string; clock: FakeClock }> {
  const storage = memoryStorage();
  const clock = new FakeClock('2026-05-01T12:00:00.000Z');
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock });
  const a = (await vigil.accounts.ensure()).id;
  const b = (await vigil.accounts.ensure()).id;
  return { vigil, storage, a, b, clock };
}

const tcp = { name: 'orders-db', request: { hostname: 'db.internal', port: 5432 } };


describe('checks', () => {
  it('creates a TCP check with the spec\'s defaults and reads it back', async () => {
    const { vigil, a } = await setup();
    const created = await vigil.checks.create(a, 'TCP', tcp);
    expect(created).toMatchObject({
      name: 'orders-db', checkType: 'TCP', activated: true, muted: false, doubleCheck: true, frequency: 10,
      degradedResponseTime: 3000, maxResponseTime: 5000, created_at: '2026-05-01T12:00:00.000Z', updated_at: null,
      alertChannels: { email: [], webhook: [], chat: [], sms: [] },
    });
    expect(created).not.toHaveProperty('accountId');
    expect(await vigil.checks.get(a, created.id)).toEqual(created);
    expect((await vigil.checks.list(a, {})).items.map((c) => c.id)).toEqual([created.id]);
  });

  it('another account\'s check is not found, and nothing of it changes', async () => {
    const { vigil, a, b, storage } = await setup();
    const created = await vigil.checks.create(a, 'TCP', tcp);
    const before = JSON.stringify(await storage.raw.dump('checks'));
    await expect(vigil.checks.get(b, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(vigil.checks.update(b, created.id, { name: 'x' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(vigil.checks.delete(b, created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(JSON.stringify(await storage.raw.dump('checks'))).toBe(before);
    expect((await vigil.checks.list(b, {})).total).toBe(0);
  });

  it('a bad body is refused naming the fields, and stores nothing', async () => {
    const { vigil, a, storage } = await setup();
    // A body from a client is not typed: this one lacks the hostname the TCP input type requires.
    // @ts-expect-error the hostname is missing on purpose
    const err = await vigil.checks.create(a, 'TCP', { name: '', request: { port: 70000 }, frequency: 3 }).catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.keys).toEqual(expect.arrayContaining(['name', 'request.port', 'request.hostname', 'frequency']));
    expect(await storage.raw.dump('checks')).toEqual([]);
    expect(await code(vigil.checks.create(a, 'TCP', { ...tcp, groupId: 99 }))).toBe('VALIDATION');
    expect(await code(vigil.checks.create(a, 'TCP', { ...tcp, alertChannelSubscriptions: [{ alertChannelId: 5 }] }))).toBe('VALIDATION');
    expect(await code(vigil.checks.create(a, 'AGENTIC', tcp))).toBe('VALIDATION');
    expect(await code(vigil.checks.get(a, ''))).toBe('VALIDATION');
  });

  it('PUT merges: given fields replace, others stay; cross-field rules apply to the merged check', async () => {
    const { vigil, a, clock } = await setup();
    const created = await vigil.checks.create(a, 'TCP', { ...tcp, frequency: 5, frequencyOffset: 50, tags: ['db'] });
    clock.advance(60_000);
    const updated = await vigil.checks.update(a, created.id, { muted: true });
    expect(updated).toMatchObject({ muted: true, tags: ['db'], frequency: 5, frequencyOffset: 50, updated_at: '2026-05-01T12:01:00.000Z' });
    const err = await vigil.checks.update(a, created.id, { frequency: 1 }).catch((e) => e);
    expect(err.keys).toEqual(['frequencyOffset']);
    expect(await code(vigil.checks.update(a, created.id, { name: 'x' }, { checkType: 'BROWSER' }))).toBe('NOT_FOUND');
  });

  it('secret variables are sealed at rest, masked in answers, kept when echoed back, opened for a run', async () => {
    const { vigil, a, storage } = await setup();
    const created = await vigil.checks.create(a, 'BROWSER', {
      name: 'login', script: 'await page.goto(process.env.URL)',
      environmentVariables: [
        { key: 'URL', value: 'https://shop.example.com' },
        { key: 'PASSWORD', value: 'hunter2-secret', secret: true },
        { key: 'SERVICE_SECRET_TOKEN', value: 'tok-123456' },
      ],
    });
    const vars = created.checkType === 'BROWSER' ? created.environmentVariables! : [];
    expect(vars.map((x) => x.value)).toEqual(['https://shop.example.com', MASKED, MASKED]);
    const raw = JSON.stringify(await storage.raw.dump('checks'));
    expect(raw).not.toContain('hunter2-secret');
    expect(raw).not.toContain('tok-123456');
    await vigil.checks.update(a, created.id, { environmentVariables: vars });
    const run = await vigil.checks.getForRun(a, created.id);
    expect(run.environment).toEqual({ URL: 'https://shop.example.com', PASSWORD: 'hunter2-secret', SERVICE_SECRET_TOKEN: 'tok-123456' });
    expect(run.secrets.sort()).toEqual(['hunter2-secret', 'tok-123456']);
  });

  it('heartbeat checks get a ping token that an update keeps', async () => {
    const { vigil, a } = await setup();
    const hb = await vigil.checks.create(a, 'HEARTBEAT', { name: 'nightly', heartbeat: { period: 1, periodUnit: 'days', grace: 1, graceUnit: 'hours' } });
    const token = hb.checkType === 'HEARTBEAT' ? hb.heartbeat.pingToken : '';
    expect(token.length).toBeGreaterThan(20);
    const updated = await vigil.checks.update(a, hb.id, { name: 'nightly backup' });
    expect(updated.checkType === 'HEARTBEAT' && updated.heartbeat.pingToken).toBe(token);
  });

  it('autoAssignAlerts subscribes a new check to every channel; off, only autoSubscribe channels', async () => {
    const { vigil, a } = await setup();
    const email = await vigil.alertChannels.create(a, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const hook = await vigil.alertChannels.create(a, { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.example.com/x' }, autoSubscribe: true });
    const on = await vigil.checks.create(a, 'TCP', tcp);
    expect(on.alertChannelSubscriptions.map((s) => s.alertChannelId).sort()).toEqual([email.id, hook.id].sort());
    expect(on.alertChannels.email).toEqual([{ address: 'ops@example.com' }]);
    const off = await vigil.checks.create(a, 'TCP', tcp, { autoAssignAlerts: false });
    expect(off.alertChannelSubscriptions).toEqual([{ alertChannelId: hook.id, activated: true }]);
    expect(off.alertChannels.webhook[0]).toMatchObject({ url: 'https://hooks.example.com/x', method: 'POST' });
  });

  it('deleting a check removes its subscriptions and status', async () => {
    const { vigil, a, storage } = await setup();
    await vigil.alertChannels.create(a, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const c = await vigil.checks.create(a, 'TCP', tcp);
    expect(await storage.raw.dump('alert_subscriptions')).toHaveLength(1);
    await vigil.checks.delete(a, c.id);
    expect(await storage.raw.dump('checks')).toEqual([]);
    expect(await storage.raw.dump('alert_subscriptions')).toEqual([]);
  });
});

describe('check groups', () => {
  it('a member inherits the group\'s locations and variables for its runs', async () => {
    const { vigil, a } = await setup();
    const g = await vigil.checkGroups.create(a, {
      name: 'payments', locations: ['eu-west-1'], concurrency: 5,
      environmentVariables: [{ key: 'API_KEY', value: 'group-secret', secret: true }, { key: 'ENV', value: 'prod' }],
    });
    expect(g).toMatchObject({ name: 'payments', activated: true, concurrency: 5, retryStrategy: 'FALLBACK' });
    expect(g.environmentVariables?.[0]?.value).toBe(MASKED);
    const c = await vigil.checks.create(a, 'BROWSER', { name: 'pay', script: 'x()', groupId: g.id, environmentVariables: [{ key: 'ENV', value: 'staging' }] });
    const run = await vigil.checks.getForRun(a, c.id);
    expect(run.check.locations).toEqual(['eu-west-1']);
    expect(run.environment).toEqual({ API_KEY: 'group-secret', ENV: 'staging' });
    expect((await vigil.checkGroups.listChecks(a, g.id, {})).items.map((x) => x.id)).toEqual([c.id]);
  });

  it('PUT requires name; a group with checks is not deleted; numeric ids are checked', async () => {
    const { vigil, a, b } = await setup();
    const g = await vigil.checkGroups.create(a, { name: 'g' });
    expect((await vigil.checkGroups.update(a, g.id, { name: 'g2', muted: true })).muted).toBe(true);
    expect(await code(vigil.checkGroups.update(a, g.id, { muted: false }))).toBe('VALIDATION');
    await vigil.checks.create(a, 'TCP', { ...tcp, groupId: g.id });
    await expect(vigil.checkGroups.delete(a, g.id)).rejects.toBeInstanceOf(ConflictError);
    expect(await code(vigil.checkGroups.get(a, 'abc'))).toBe('VALIDATION');
    expect(await code(vigil.checkGroups.get(b, g.id))).toBe('NOT_FOUND');
    expect(await code(vigil.checkGroups.get(a, String(g.id)))).toBe('OK');
  });
});

describe('alert channels', () => {
  it('secrets in config are sealed, masked in answers, kept when echoed back, opened for delivery', async () => {
    const { vigil, a, storage } = await setup();
    const ch = await vigil.alertChannels.create(a, {
      type: 'WEBHOOK', config: { name: 'signed', url: 'https://hooks.example.com/x', webhookSecret: 'whsec-topsecret' },
    });
    expect(ch).toMatchObject({ sendFailure: true, sendRecovery: true, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false });
    expect((ch.config as { webhookSecret: string }).webhookSecret).toBe(MASKED);
    expect(JSON.stringify(await storage.raw.dump('alert_channels'))).not.toContain('whsec-topsecret');
    await vigil.alertChannels.update(a, ch.id, { config: { ...ch.config }, sendDegraded: true });
    const opened = await vigil.alertChannels.getForDelivery(a, ch.id);
    expect(opened.config).toMatchObject({ webhookSecret: 'whsec-topsecret' });
    expect(opened.sendDegraded).toBe(true);
    expect(await code(vigil.alertChannels.update(a, ch.id, { type: 'EMAIL' }))).toBe('VALIDATION');
    expect(await code(vigil.alertChannels.create(a, { type: 'PAGER', config: {} }))).toBe('VALIDATION');
    expect(await code(vigil.alertChannels.create(a, { type: 'EMAIL', config: { address: 'x' }, sslExpiryThreshold: 31 }))).toBe('VALIDATION');
  });

  it('subscriptions of a channel replace its list and show in check answers', async () => {
    const { vigil, a, b } = await setup();
    const ch = await vigil.alertChannels.create(a, { type: 'SMS', config: { number: '+14155550100', name: 'on call' } });
    const c = await vigil.checks.create(a, 'TCP', tcp, { autoAssignAlerts: false });
    const g = await vigil.checkGroups.create(a, { name: 'g' }, { autoAssignAlerts: false });
    const updated = await vigil.alertChannels.updateSubscriptions(a, ch.id, [{ checkId: c.id }, { groupId: g.id, activated: false }]);
    expect(updated.subscriptions.map((s) => [s.checkId, s.groupId, s.activated])).toEqual([[c.id, null, true], [null, g.id, false]]);
    expect((await vigil.checks.get(a, c.id)).alertChannels.sms).toEqual([{ number: '+14155550100', name: 'on call' }]);
    const other = await vigil.checks.create(b, 'TCP', tcp);
    const err = await vigil.alertChannels.updateSubscriptions(a, ch.id, [{ checkId: other.id }]).catch((e) => e);
    expect(err.keys).toEqual(['0.checkId']);
    await vigil.alertChannels.delete(a, ch.id);
    expect((await vigil.checks.get(a, c.id)).alertChannels.sms).toEqual([]);
  });

  it('a page of checks shows their subscriptions without reading every subscription of the account', async () => {
    const { vigil, storage, a } = await setup();
    const sms = await vigil.alertChannels.create(a, { type: 'SMS', config: { number: '+14155550100', name: 'on call' } });
    const mail = await vigil.alertChannels.create(a, { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const g = await vigil.checkGroups.create(a, { name: 'g' }, { autoAssignAlerts: false });
    const first = await vigil.checks.create(a, 'TCP', { ...tcp, groupId: g.id }, { autoAssignAlerts: false });
    const second = await vigil.checks.create(a, 'TCP', { ...tcp, groupId: g.id }, { autoAssignAlerts: false });
    const quiet = await vigil.checks.create(a, 'TCP', tcp, { autoAssignAlerts: false });
    await vigil.alertChannels.updateSubscriptions(a, sms.id, [{ checkId: first.id }, { checkId: second.id, activated: false }]);
    await vigil.alertChannels.updateSubscriptions(a, mail.id, [{ checkId: second.id }]);
    // Changed from the channel's side, then read page by page: the account may hold thousands of rows.
    storage.alertSubscriptions.listAll = () => Promise.reject(new Error('every subscription of the account was read'));
    const shown = (checks: { id: string; alertChannelSubscriptions: unknown[]; alertChannels: { sms: unknown[]; email: unknown[] } }[]) =>
      checks.map((c) => [c.id, c.alertChannelSubscriptions, c.alertChannels.sms.length, c.alertChannels.email.length]);
    const expected = [
      [first.id, [{ alertChannelId: sms.id, activated: true }], 1, 0],
      [second.id, [{ alertChannelId: sms.id, activated: false }, { alertChannelId: mail.id, activated: true }], 0, 1],
      [quiet.id, [], 0, 0],
    ];
    expect(shown((await vigil.checks.list(a, {})).items)).toEqual(expected);
    expect(shown((await vigil.checkGroups.listChecks(a, g.id, {})).items)).toEqual(expected.slice(0, 2));
    expect(shown(await vigil.checks.listByGroup(a, g.id))).toEqual(expected.slice(0, 2));
  });
});

describe('API keys', () => {
  it('a key authenticates its own account only; revoked and unknown keys do not', async () => {
    const { vigil, a, b, storage } = await setup();
    const { key, apiKey } = await vigil.apiKeys.create(a, { name: 'ci' });
    expect(apiKey).not.toHaveProperty('hash');
    expect(JSON.stringify(await storage.raw.dump('api_keys'))).not.toContain(key);
    expect(await vigil.authenticator.authenticate({ authorization: `Bearer ${key}`, account: a })).toEqual({ accountId: a, apiKeyId: apiKey.id });
    expect(await vigil.authenticator.authenticate({ authorization: `bearer ${key}`, account: a })).toMatchObject({ accountId: a });
    await expect(vigil.authenticator.authenticate({ authorization: `Bearer ${key}`, account: b })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(vigil.authenticator.authenticate({ authorization: `Bearer ${key}` })).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(vigil.authenticator.authenticate({ authorization: `Bearer ${key}x`, account: a })).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(vigil.authenticator.authenticate({ authorization: key, account: a })).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(vigil.authenticator.authenticate({})).rejects.toBeInstanceOf(UnauthorizedError);
    expect((await vigil.apiKeys.list(a))[0]!.lastUsedAt).not.toBeNull();
    const named = await vigil.apiKeys.create(a, 'deploy pipeline');
    expect(named.apiKey.name).toBe('deploy pipeline');
    expect(await vigil.authenticator.authenticate({ authorization: `Bearer ${named.key}`, account: a })).toMatchObject({ apiKeyId: named.apiKey.id });
    await vigil.apiKeys.revoke(a, apiKey.id);
    await expect(vigil.authenticator.authenticate({ authorization: `Bearer ${key}`, account: a })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(await code(vigil.apiKeys.revoke(b, apiKey.id))).toBe('NOT_FOUND');
  });

  it('reads a key once for the requests that present it at the same time with a cold cache', async () => {
    const { vigil, a, storage } = await setup();
    const { key, apiKey } = await vigil.apiKeys.create(a, { name: 'ci' });
    const { key: other } = await vigil.apiKeys.create(a, { name: 'other' });
    const find = storage.apiKeys.findByPrefix.bind(storage.apiKeys);
    let reads = 0;
    storage.apiKeys.findByPrefix = async (prefix) => {
      reads++;
      return find(prefix);
    };
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      vigil.authenticator.authenticate({ authorization: `Bearer ${i % 10 === 9 ? other : key}`, account: a })));
    expect(answers.filter((x) => x.apiKeyId === apiKey.id)).toHaveLength(45);
    expect(reads).toBe(2);
    // A failed read is not kept: the next request reads again.
    await expect(Promise.all([1, 2].map(() => vigil.authenticator.authenticate({ authorization: `Bearer ${key}x`, account: a })))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(reads).toBe(3);
    await expect(vigil.authenticator.authenticate({ authorization: `Bearer ${key}x`, account: a })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(reads).toBe(4);
  });

  it('createVigil needs a secret key and a store', () => {
    expect(() => createVigil({ storage: memoryStorage() }).checks).toThrow(/secretKey/);
    expect(() => createVigil({ secretKey: randomBytes(32) })).toThrow(/No Vigil storage/);
  });
});

describe('host-chosen API keys', () => {
  it('ensure registers a key once, refuses short keys and keys of another account', async () => {
    const { vigil, a, b } = await setup();
    const key = `vgl_${'k'.repeat(40)}`;
    const first = await vigil.apiKeys.ensure(a, key);
    expect((await vigil.apiKeys.ensure(a, key)).id).toBe(first.id);
    expect(await vigil.authenticator.authenticate({ authorization: `Bearer ${key}`, account: a })).toMatchObject({ accountId: a });
    expect(await code(vigil.apiKeys.ensure(b, key))).toBe('CONFLICT');
    expect(await code(vigil.apiKeys.ensure(a, 'short'))).toBe('VALIDATION');
    expect(await vigil.apiKeys.list(a)).toHaveLength(1);
  });
});

describe('variables that only look sealed', () => {
  it('a plain variable whose value has the sealed format is passed to a run as it is', async () => {
    const { vigil, a } = await setup();
    const c = await vigil.checks.create(a, 'BROWSER', { name: 'x', script: 'x()', environmentVariables: [{ key: 'TOKEN', value: 'vgl1:a:b:c' }] });
    expect((await vigil.checks.getForRun(a, c.id)).environment.TOKEN).toBe('vgl1:a:b:c');
  });
});

describe('checks: rules of the type\'s runner', () => {
  it('the registered runner\'s validate runs on create and update, and a refusal stores nothing', async () => {
    const runner = {
      checkType: 'TCP',
      validate(check: unknown) {
        if ((check as { request: { port: number } }).request.port === 25) {
          throw new ValidationError([{ path: 'request.port', message: 'mail ports are not monitored here' }]);
        }
      },
      run: async () => { throw new Error('not run'); },
    };
    const storage = memoryStorage();
    const vigil = createVigil({ storage, secretKey: randomBytes(32), runners: [runner] });
    const a = (await vigil.accounts.ensure()).id;
    const refused = await vigil.checks.create(a, 'TCP', { ...tcp, request: { hostname: 'mx', port: 25 } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).keys).toEqual(['request.port']);
    expect(await storage.checks.listAll(a)).toEqual([]);
    const check = await vigil.checks.create(a, 'TCP', tcp);
    const update = await vigil.checks.update(a, check.id, { request: { hostname: 'mx', port: 25 } }).catch((e: unknown) => e);
    expect((update as ValidationError).keys).toEqual(['request.port']);
    expect((await vigil.checks.get(a, check.id) as { request: { port: number } }).request.port).toBe(5432);
  });
});
