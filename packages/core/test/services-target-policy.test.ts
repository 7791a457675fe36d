import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil, type VigilOptions } from '../src/container.js';
import { AlertChannel } from '../src/constructs/resources.js';
import { ValidationError } from '../src/errors.js';
import { ConstructValidationError } from '../src/services/apply-constructs.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { FakeRunner } from '../src/testing/fake-runner.js';
import { FakeTransport } from '../src/testing/fake-transport.js';
import { outboxMessageFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { runFor, settle } from './fake-time.js';

const SECRET = 'c'.repeat(64);
const STRICT = { refuseInternalAddresses: true };

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

async function setup(options: Partial<VigilOptions> = {}) {
  const clock = new FakeClock('2026-05-01T12:00:00.000Z');
  const runner = new FakeRunner('TCP');
  const vigil = createVigil({ storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], ...options });
  const a = (await vigil.accounts.ensure()).id;
  return { vigil, clock, runner, a };
}

const tcp = (hostname: string) => ({ name: 'db', request: { hostname, port: 5432 }, frequency: 0, frequencyOffset: 10 });
const api = (url: string) => ({ name: 'api', request: { url } });

async function refusal(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('target policy at create and update time', () => {
  it('is off by default: checks may name loopback and private addresses', async () => {
    const { vigil, a } = await setup();
    await vigil.checks.create(a, 'TCP', tcp('127.0.0.1'));
    await vigil.checks.create(a, 'API', api('http://localhost:8080/health'));
    await vigil.checkGroups.create(a, { name: 'g', apiCheckDefaults: { url: 'http://10.0.0.1' } });
  });

  it.each([
    ['TCP', tcp('127.0.0.1'), 'request.hostname', '127.0.0.1 is a loopback address (127.0.0.0/8)'],
    ['TCP', tcp('0x7f.1'), 'request.hostname', '127.0.0.1 is a loopback address'],
    ['TCP', tcp('2130706433'), 'request.hostname', '127.0.0.1 is a loopback address'],
    ['TCP', tcp('localhost'), 'request.hostname', '"localhost" names this machine'],
    ['TCP', tcp('169.254.169.254'), 'request.hostname', '169.254.169.254 is a link-local address (169.254.0.0/16)'],
    ['API', api('http://[::ffff:127.0.0.1]:8080/'), 'request.url', '::ffff:127.0.0.1 is a loopback address (127.0.0.0/8)'],
    ['API', api('https://10.1.2.3/'), 'request.url', '10.1.2.3 is a private address (10.0.0.0/8)'],
    ['API', api('http://0x7f.1/'), 'request.url', '127.0.0.1 is a loopback address'],
  ])('refuses a %s check aimed at %j with a 400 naming %s', async (type, body, field, reason) => {
    const { vigil, a } = await setup({ targetPolicy: STRICT });
    const err = await refusal(vigil.checks.create(a, type, body));
    expect(err.statusCode).toBe(400);
    expect(err.keys).toEqual([field]);
    expect(err.issues[0]!.message).toContain(reason);
    expect(err.issues[0]!.message).toContain('target policy');
  });

  it('lets names, templated hosts and allowed addresses through (names are checked when a run looks them up)', async () => {
    const { vigil, a } = await setup({ targetPolicy: { ...STRICT, allow: ['10.20.0.0/16'] } });
    await vigil.checks.create(a, 'TCP', tcp('db.internal'));
    await vigil.checks.create(a, 'TCP', tcp('{{DB_HOST}}'));
    await vigil.checks.create(a, 'TCP', tcp('10.20.1.1'));
    await vigil.checks.create(a, 'API', api('https://api.example.com/health'));
    await vigil.checks.create(a, 'API', api('http://{{HOST}}/health'));
  });

  it('refuses an update that aims a check at a refused address, and a group whose apiCheckDefaults.url is one', async () => {
    const { vigil, a } = await setup({ targetPolicy: STRICT });
    const check = await vigil.checks.create(a, 'TCP', tcp('db.example.com'));
    const err = await refusal(vigil.checks.update(a, check.id, { request: { hostname: '[::1]', port: 5432, ipFamily: 'IPv6' } }));
    expect(err.keys).toEqual(['request.hostname']);
    expect(await vigil.checks.get(a, check.id)).toMatchObject({ request: { hostname: 'db.example.com' } });
    expect((await refusal(vigil.checkGroups.create(a, { name: 'g', apiCheckDefaults: { url: 'http://192.168.0.10:8080' } }))).keys).toEqual(['apiCheckDefaults.url']);
    const group = await vigil.checkGroups.create(a, { name: 'g', apiCheckDefaults: { url: 'https://api.example.com' } });
    expect((await refusal(vigil.checkGroups.update(a, group.id, { name: 'g', apiCheckDefaults: { url: 'http://localhost' } }))).keys).toEqual(['apiCheckDefaults.url']);
  });

  it('a malformed allow entry stops Vigil from being built', () => {
    expect(() => createVigil({ storage: memoryStorage(), secretKey: SECRET, targetPolicy: { refuseInternalAddresses: true, allow: ['10.0.0.0/40'] } }))
      .toThrow('targetPolicy.allow[0]: "10.0.0.0/40" is not a CIDR');
  });
});

describe('target policy on run jobs', () => {
  it('the engine hands the policy to the runner on every job (one that refuses nothing when the host set none)', async () => {
    for (const [options, expected] of [[{ targetPolicy: STRICT }, true], [{}, false]] as const) {
      const s = await setup(options);
      await s.vigil.checks.create(s.a, 'TCP', tcp('db.example.com'));
      await s.vigil.start();
      started.push(s.vigil);
      await settle();
      await runFor(s.clock, 12_000);
      expect(s.runner.jobs.length).toBeGreaterThan(0);
      expect(s.runner.jobs.every((j) => j.targetPolicy?.refuseInternalAddresses === expected)).toBe(true);
      if (expected) expect(s.runner.jobs[0]!.targetPolicy!.checkAddress('10.0.0.1')?.range.name).toBe('private');
    }
  });
});

const webhook = (url: string) => ({ type: 'WEBHOOK', config: { name: 'ops', url } });

describe('target policy on alert channels at create and update time', () => {
  it('is off by default: a webhook may name a loopback or private address', async () => {
    const { vigil, a } = await setup();
    await vigil.alertChannels.create(a, webhook('http://127.0.0.1:8080/hook'));
    await vigil.alertChannels.create(a, { type: 'CHAT', config: { url: 'http://localhost/slack' } });
  });

  it.each([
    [webhook('http://127.0.0.1/hook?token=t0ken'), '127.0.0.1 is a loopback address (127.0.0.0/8)'],
    [webhook('https://10.0.0.7:8443/in'), '10.0.0.7 is a private address (10.0.0.0/8)'],
    [webhook('http://0x7f.1/'), '127.0.0.1 is a loopback address'],
    [{ type: 'CHAT', config: { url: 'http://localhost:3000/slack' } }, '"localhost" names this machine'],
    [{ type: 'CHAT_APP', config: { url: 'http://[fe80::1]/teams' } }, 'fe80::1 is a link-local address (fe80::/10)'],
  ])('refuses a channel %j with a 400 naming config.url, and stores nothing', async (body, reason) => {
    const { vigil, a } = await setup({ targetPolicy: STRICT });
    const err = await refusal(vigil.alertChannels.create(a, body));
    expect(err.statusCode).toBe(400);
    expect(err.keys).toEqual(['config.url']);
    expect(err.issues[0]!.message).toContain(reason);
    expect(err.issues[0]!.message).toContain('sends no alerts to loopback, private, link-local or other internal addresses');
    expect(err.issues[0]!.message).not.toContain('t0ken');
    expect((await vigil.alertChannels.list(a, {})).items).toEqual([]);
  });

  it('lets names, templated URLs, allowed addresses and host-configured channel types through', async () => {
    const { vigil, a } = await setup({ targetPolicy: { ...STRICT, allow: ['10.20.0.0/16'] } });
    await vigil.alertChannels.create(a, webhook('https://hooks.internal/in'));
    await vigil.alertChannels.create(a, webhook('http://{{HOOK_HOST}}/in'));
    await vigil.alertChannels.create(a, webhook('http://10.20.3.4/in'));
    await vigil.alertChannels.create(a, { type: 'PAGING_A', config: { serviceKey: 'routing-key' } });
    expect((await vigil.alertChannels.list(a, {})).items).toHaveLength(4);
  });

  it('refuses an update that aims a channel at a refused address and keeps the stored URL', async () => {
    const { vigil, a } = await setup({ targetPolicy: STRICT });
    const channel = await vigil.alertChannels.create(a, webhook('https://hooks.example.com/in'));
    const err = await refusal(vigil.alertChannels.update(a, channel.id, { config: { name: 'ops', url: 'http://169.254.169.254/latest/meta-data' } }));
    expect(err.keys).toEqual(['config.url']);
    expect(await vigil.alertChannels.get(a, channel.id)).toMatchObject({ config: { url: 'https://hooks.example.com/in' } });
  });

  it('refuses an AlertChannel construct aimed at a refused address before applying anything', async () => {
    const { vigil, a } = await setup({ targetPolicy: STRICT });
    const err = await vigil.apply(a, [new AlertChannel('hook', webhook('http://192.168.1.20/hook') as never)]).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ConstructValidationError);
    expect((err as ConstructValidationError).constructIssues.map((i) => [i.path, i.message])).toEqual([
      ['config.url', expect.stringMatching(/^names 192\.168\.1\.20 is a private address \(192\.168\.0\.0\/16\), which the target policy/)],
    ]);
    expect((await vigil.alertChannels.list(a, {})).items).toEqual([]);
  });
});

describe('target policy on alert deliveries', () => {
  it('the dispatcher hands the policy to the transport on every send (one that refuses nothing when the host set none)', async () => {
    for (const [options, expected] of [[{ targetPolicy: STRICT }, true], [{}, false]] as const) {
      const transport = new FakeTransport('WEBHOOK');
      const s = await setup({ ...options, transports: [transport] });
      const channel = await s.vigil.alertChannels.create(s.a, webhook('https://hooks.example.com/in'));
      await s.vigil.storage.outbox.enqueue([outboxMessageFixture(s.a, { alertChannelId: channel.id, nextAttemptAt: s.clock.now().toISOString() })]);
      await s.vigil.alerts.drain();
      expect(transport.sent).toHaveLength(1);
      expect(transport.sent[0]!.context?.targetPolicy?.refuseInternalAddresses).toBe(expected);
    }
  });
});
