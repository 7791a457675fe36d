/**
 * The two ways a plugin widens the model: a check type of its own (`defineCheckType`, registered
 * with its runner) and an alert channel type of its own (a transport for a type no built-in
 * schema models, with its config schema and secret fields).
 */
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle } from './fake-time.js';
import {
  createVigil,
  defineCheckType,
  integerBetween,
  modelObject,
  NonEmptyStringSchema,
  runChecked,
  ValidationError,
  type AlertTransport,
  type CheckOf,
  type Runner,
  type Vigil,
  type VigilOptions,
} from '../src/index.js';
import { FakeClock, FakeRunner, FakeTransport, memoryStorage, passResult } from '../src/testing/index.js';

const SECRET = 'd'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';

const pingCheckType = defineCheckType({
  checkType: 'PING',
  label: 'ping',
  entries: {
    request: modelObject({ host: NonEmptyStringSchema, count: v.optional(integerBetween(1, 10), 3) }),
    maxResponseTime: v.optional(integerBetween(0, 5000), 1000),
  },
});

const started: Vigil[] = [];
afterEach(async () => {
  for (const x of started.splice(0)) await x.stop(0);
});

async function setup(options: Partial<VigilOptions> = {}) {
  const clock = new FakeClock(T0);
  const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, checkTypes: [pingCheckType], ...options });
  const account = await vigil.accounts.ensure('acct');
  return { vigil, clock, accountId: account.id };
}

const issuesOf = async (promise: Promise<unknown>) => {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  return (err as ValidationError).keys;
};

describe('defineCheckType', () => {
  it('builds create, update, record and response schemas from the common fields and the type\'s own', () => {
    expect(pingCheckType).toMatchObject({ checkType: 'PING', slug: 'ping', label: 'ping' });
    const body = v.parse(pingCheckType.createSchema, { name: 'gateway', request: { host: '10.0.0.1' }, unknown: 'dropped' });
    expect(body).toMatchObject({ name: 'gateway', activated: true, frequency: 10, request: { host: '10.0.0.1', count: 3 }, maxResponseTime: 1000 });
    expect(body).not.toHaveProperty('unknown');
    expect(v.parse(pingCheckType.updateSchema, {})).toEqual({});
    expect(v.safeParse(pingCheckType.updateSchema, { request: { count: 3 } }).success).toBe(false);
    const stamps = { id: 'c1', accountId: 'a1', created_at: T0, updated_at: null };
    expect(v.safeParse(pingCheckType.checkSchema, { ...body, ...stamps, checkType: 'PING' }).success).toBe(true);
    expect(v.safeParse(pingCheckType.checkSchema, { ...body, ...stamps, checkType: 'TCP' }).success).toBe(false);
  });

  it('refuses a malformed or built-in name, a taken slug and fields the service sets', () => {
    expect(() => defineCheckType({ checkType: 'dns', entries: {} })).toThrow(TypeError);
    expect(() => defineCheckType({ checkType: 'TCP', entries: {} })).toThrow(/built-in/);
    expect(() => defineCheckType({ checkType: 'HEARTBEATS', entries: {} })).toThrow(/slug "heartbeats"/);
    expect(() => defineCheckType({ checkType: 'DNS', entries: {} })).toThrow(/built-in/);
    expect(() => defineCheckType({ checkType: 'SMTP', slug: 'dns', entries: {} })).toThrow(/slug "dns"/);
    expect(() => defineCheckType({ checkType: 'LINK', slug: 'url', entries: {} })).toThrow(/slug "url"/);
    expect(() => defineCheckType({ checkType: 'ICMP', entries: {} })).toThrow(/built-in/);
    expect(() => defineCheckType({ checkType: 'ECHO', slug: 'icmp', entries: {} })).toThrow(/slug "icmp"/);
    expect(() => defineCheckType({ checkType: 'SMTP', slug: 'SMTP!', entries: {} })).toThrow(/slug/);
    expect(() => defineCheckType({ checkType: 'SMTP', entries: { id: v.string() } })).toThrow(/sets id/);
    expect(() => defineCheckType({ checkType: 'MULTI_STEP', entries: {} })).toThrow(/built-in/);
    expect(() => defineCheckType({ checkType: 'STEPS', slug: 'multistep', entries: {} })).toThrow(/slug "multistep"/);
    expect(defineCheckType({ checkType: 'SMTP_RELAY', entries: {} }).slug).toBe('smtp-relay');
  });

  it('refuses two registrations of one type or one slug', () => {
    expect(() => createVigil({ storage: memoryStorage(), secretKey: SECRET, checkTypes: [pingCheckType, pingCheckType] }))
      .toThrow(/PING is registered twice/);
    expect(() => createVigil({
      storage: memoryStorage(), secretKey: SECRET, checkTypes: [pingCheckType, defineCheckType({ checkType: 'ECHO', slug: 'ping', entries: {} })],
    })).toThrow(/slug "ping"/);
  });
});

describe('checks of a plugin\'s type', () => {
  it('are created, read, listed, updated and deleted like built-in ones, validated by their schema', async () => {
    const { vigil, accountId } = await setup();
    const created = await vigil.checks.create(accountId, 'PING', { name: 'gateway', request: { host: '10.0.0.1' }, tags: ['net'] });
    expect(created).toMatchObject({ checkType: 'PING', name: 'gateway', request: { host: '10.0.0.1', count: 3 }, tags: ['net'], alertChannels: { email: [] } });
    expect(created).not.toHaveProperty('accountId');
    expect(await vigil.checks.get(accountId, created.id, 'PING')).toEqual(created);
    await expect(vigil.checks.get(accountId, created.id, 'TCP')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await vigil.checks.list(accountId, {})).items.map((c) => c.id)).toEqual([created.id]);

    const updated = await vigil.checks.update(accountId, created.id, { request: { host: '10.0.0.2', count: 5 } }, { checkType: 'PING' });
    expect(updated).toMatchObject({ name: 'gateway', request: { host: '10.0.0.2', count: 5 }, tags: ['net'] });
    expect(await issuesOf(vigil.checks.update(accountId, created.id, { request: { host: '' } }))).toEqual(['request.host']);
    expect(await issuesOf(vigil.checks.create(accountId, 'PING', { name: 'x', request: { host: 'h', count: 11 }, frequency: 7 })))
      .toEqual(['frequency', 'request.count']);

    await vigil.checks.delete(accountId, created.id);
    expect((await vigil.checks.list(accountId, {})).total).toBe(0);
  });

  it('also obey their runner\'s validate; a type nobody registered is still refused', async () => {
    const strict: Runner = {
      checkType: 'PING',
      validate(check) {
        const host = (check as { request: { host: string } }).request.host;
        if (host.includes(' ')) throw new ValidationError([{ path: 'request.host', message: 'must not hold spaces' }]);
      },
      run: async () => passResult(),
    };
    const { vigil, accountId } = await setup({ runners: [strict] });
    expect(await issuesOf(vigil.checks.create(accountId, 'PING', { name: 'x', request: { host: 'a b' } }))).toEqual(['request.host']);
    const refused = await vigil.checks.create(accountId, 'AGENTIC', { name: 'x' }).catch((e: ValidationError) => e);
    expect(refused).toMatchObject({ code: 'VALIDATION', source: 'params', message: expect.stringContaining('no check type AGENTIC is served') });
  });

  it('are scheduled and run by the runner registered for the type, which gets the check typed by its definition', async () => {
    const seen: CheckOf<typeof pingCheckType>[] = [];
    const runner: Runner = {
      checkType: 'PING',
      run: (job) => runChecked('ping runner', pingCheckType, job, async (check) => {
        seen.push(check);
        return passResult({ responseTime: check.request.count });
      }),
    };
    const { vigil, clock, accountId } = await setup({ runners: [runner, new FakeRunner('TCP')] });
    const check = await vigil.checks.create(accountId, 'PING', { name: 'gateway', request: { host: '10.0.0.1', count: 4 }, frequency: 1 });
    await vigil.start();
    started.push(vigil);
    await settle();
    await runFor(clock, 125_000, 1_000);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[0]).toMatchObject({ id: check.id, checkType: 'PING', request: { host: '10.0.0.1', count: 4 } });
    const results = await vigil.checkResults.list(accountId, check.id, {});
    expect(results.items[0]).toMatchObject({ checkType: 'PING', hasFailures: false, responseTime: 4 });

    // The typed frame still refuses a job of another type.
    const tcpJob = { ...(await vigil.checks.getForRun(accountId, check.id)), check: { checkType: 'TCP' } };
    const wrong = await runner.run(tcpJob as never, new AbortController().signal);
    expect(wrong).toMatchObject({ hasErrors: true, errorMessage: 'The ping runner cannot run a TCP check' });
  });
});

describe('alert channels of a plugin\'s type', () => {
  const PagerConfigSchema = modelObject({
    topic: v.pipe(v.string(), v.regex(/^[a-z]+$/, 'must be lower-case letters')),
    token: v.optional(v.nullable(v.string()), null),
  });
  const pager = (): AlertTransport & { sent: FakeTransport['sent'] } => {
    const fake = new FakeTransport('PAGER', PagerConfigSchema);
    return Object.assign(fake, { secretFields: ['token'] as const });
  };

  it('are accepted once their transport is registered, with its config schema and the common flags', async () => {
    const { vigil, accountId } = await setup({ transports: [pager()] });
    const channel = await vigil.alertChannels.create(accountId, { type: 'PAGER', config: { topic: 'ops' }, sendDegraded: true });
    expect(channel).toMatchObject({
      type: 'PAGER', config: { topic: 'ops', token: null },
      sendFailure: true, sendRecovery: true, sendDegraded: true, sslExpiry: false, sslExpiryThreshold: 30, autoSubscribe: false,
    });
    expect(await issuesOf(vigil.alertChannels.create(accountId, { type: 'PAGER', config: { topic: 'Ops!' } }))).toEqual(['config.topic']);
    const unknown = await vigil.alertChannels.create(accountId, { type: 'FAX', config: {} }).catch((e: ValidationError) => e);
    expect(unknown).toMatchObject({ code: 'VALIDATION', message: expect.stringContaining('PAGER') });
    expect((unknown as ValidationError).keys).toEqual(['type']);
  });

  it('keep their declared secret fields sealed at rest, masked in responses, and open only for delivery', async () => {
    const { vigil, accountId } = await setup({ transports: [pager()] });
    const channel = await vigil.alertChannels.create(accountId, { type: 'PAGER', config: { topic: 'ops', token: 'tk_very_secret' } });
    expect(channel.config).toEqual({ topic: 'ops', token: '********' });
    const stored = await vigil.storage.alertChannels.get(accountId, channel.id);
    expect(JSON.stringify(stored)).not.toContain('tk_very_secret');
    expect((await vigil.alertChannels.getForDelivery(accountId, channel.id)).config).toMatchObject({ token: 'tk_very_secret' });

    // A PUT that echoes the masked value keeps the secret; the type may be named but not changed.
    const kept = await vigil.alertChannels.update(accountId, channel.id, { type: 'PAGER', config: { topic: 'infra', token: '********' } });
    expect(kept.config).toEqual({ topic: 'infra', token: '********' });
    expect((await vigil.alertChannels.getForDelivery(accountId, channel.id)).config).toMatchObject({ topic: 'infra', token: 'tk_very_secret' });
    expect(await issuesOf(vigil.alertChannels.update(accountId, channel.id, { type: 'EMAIL' }))).toEqual(['type']);

    // A process without the plugin (the API alone, say) still never shows the sealed value.
    const bare = createVigil({ storage: vigil.storage, secretKey: SECRET });
    expect((await bare.alertChannels.get(accountId, channel.id)).config).toEqual({ topic: 'infra', token: '********' });
  });
});
