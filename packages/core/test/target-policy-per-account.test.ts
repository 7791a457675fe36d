import 'reflect-metadata';
import { lookup } from 'node:dns/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil, type VigilOptions } from '../src/container.js';
import {
  hostTargetPolicy,
  OPEN_TARGET_POLICY,
  policyForAccount,
  policyOf,
  PUBLIC_ONLY_TARGET_POLICY,
  type TargetPolicy,
} from '../src/runner-kit/target-policy.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { FakeRunner } from '../src/testing/fake-runner.js';
import { FakeTransport } from '../src/testing/fake-transport.js';
import { outboxMessageFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { refused } from './refused.js';
import { runFor, settle } from './fake-time.js';

// Every way of writing an internal address that a URL or a resolver accepts, with the address
// it stands for.
const SPELLINGS: ReadonlyArray<[string, string]> = [
  ['127.0.0.1', '127.0.0.1'],
  ['2130706433', '127.0.0.1'],
  ['0x7f000001', '127.0.0.1'],
  ['0177.0.0.1', '127.0.0.1'],
  ['127.1', '127.0.0.1'],
  ['0x7f.1', '127.0.0.1'],
  ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1'],
  ['[::ffff:7f00:1]', '::ffff:127.0.0.1'],
  ['[::1]', '::1'],
  ['[fe80::1]', 'fe80::1'],
  ['169.254.169.254', '169.254.169.254'],
  ['0251.0376.0251.0376', '169.254.169.254'],
  ['10.1.2.3', '10.1.2.3'],
  ['172.16.0.1', '172.16.0.1'],
  ['192.168.1.1', '192.168.1.1'],
  ['100.64.0.1', '100.64.0.1'],
  ['0.0.0.0', '0.0.0.0'],
  ['[fd00::1]', 'fd00::1'],
];

describe("'public-only' refuses every spelling of an internal address", () => {
  const strict = policyOf('public-only');

  it.each(SPELLINGS)('%s, as a URL writes it, as the runner resolves it, and as written', async (spelling, address) => {
    // What a runner sees: the URL's host, then the addresses Node's resolver gives for it.
    const host = new URL(`http://${spelling}:8080/metrics`).hostname;
    expect(strict.checkHost(host)?.address).toBe(address);
    expect(strict.checkHost(spelling)?.address).toBe(address);
    const resolved = await lookup(host.replace(/^\[|\]$/g, ''), { all: true });
    expect(resolved.length).toBeGreaterThan(0);
    for (const r of resolved) expect(strict.checkAddress(r.address), r.address).not.toBeNull();
    // 'open' lets the same address through.
    expect(policyOf('open').checkHost(host)).toBeNull();
    for (const r of resolved) expect(policyOf('open').checkAddress(r.address)).toBeNull();
  });

  it('lets public addresses through', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) expect(strict.checkAddress(address)).toBeNull();
  });
});

describe('policyOf and hostTargetPolicy', () => {
  it("reads 'open', 'public-only', options and policies", () => {
    expect(policyOf(undefined)).toBe(OPEN_TARGET_POLICY);
    expect(policyOf('open')).toBe(OPEN_TARGET_POLICY);
    expect(policyOf('public-only')).toBe(PUBLIC_ONLY_TARGET_POLICY);
    expect(policyOf({ refuseInternalAddresses: true, allow: ['10.0.0.0/8'] }).checkAddress('10.1.1.1')).toBeNull();
    expect(policyOf(PUBLIC_ONLY_TARGET_POLICY)).toBe(PUBLIC_ONLY_TARGET_POLICY);
    expect(() => policyOf('closed' as never)).toThrow(TypeError);
  });

  it('gives each account the policy the host function answers, and public-only where it fails', async () => {
    const policy = hostTargetPolicy(async (accountId) => {
      if (accountId === 'broken') throw new Error('store down');
      if (accountId === 'odd') return 'closed' as never;
      return accountId === 'own' ? 'open' : 'public-only';
    });
    // Where no account is known, the policy is public-only.
    expect(policy.checkAddress('127.0.0.1')).not.toBeNull();
    expect(await policyForAccount(policy, 'own')).toBe(OPEN_TARGET_POLICY);
    for (const id of ['tenant', 'broken', 'odd']) expect(await policyForAccount(policy, id)).toBe(PUBLIC_ONLY_TARGET_POLICY);
  });

  it('a single setting is the policy of every account', async () => {
    expect(await policyForAccount(hostTargetPolicy('public-only'), 'any')).toBe(PUBLIC_ONLY_TARGET_POLICY);
    expect(await policyForAccount(hostTargetPolicy(undefined), 'any')).toBe(OPEN_TARGET_POLICY);
    expect(await policyForAccount(undefined, 'any')).toBeUndefined();
  });
});

const SECRET = 'c'.repeat(64);
const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

/** A host with two accounts: its own (open) and a tenant's (public-only). */
async function twoAccounts(options: Partial<VigilOptions> = {}) {
  const clock = new FakeClock('2026-05-01T12:00:00.000Z');
  const runner = new FakeRunner('TCP');
  const transport = new FakeTransport('WEBHOOK');
  let own = '';
  const vigil = createVigil({
    storage: memoryStorage(), secretKey: SECRET, clock, runners: [runner], transports: [transport],
    targetPolicy: (accountId) => (accountId === own ? 'open' : 'public-only'), ...options,
  });
  own = (await vigil.accounts.ensure()).id;
  const tenant = (await vigil.accounts.ensure()).id;
  return { vigil, clock, runner, transport, own, tenant };
}

const tcp = (hostname: string) => ({ name: 'db', request: { hostname, port: 5432 }, frequency: 0, frequencyOffset: 10 });
const webhook = (url: string) => ({ type: 'WEBHOOK', config: { name: 'ops', url } });

describe('a target policy per account', () => {
  it('checks, groups and channels are judged by the policy of their account', async () => {
    const { vigil, own, tenant } = await twoAccounts();
    await vigil.checks.create(own, 'TCP', tcp('127.0.0.1'));
    await vigil.checkGroups.create(own, { name: 'g', apiCheckDefaults: { url: 'http://10.0.0.1' } });
    await vigil.alertChannels.create(own, webhook('http://127.0.0.1:8080/hook'));
    await refused(vigil.checks.create(tenant, 'TCP', tcp('2130706433')), 'request.hostname');
    await refused(vigil.checkGroups.create(tenant, { name: 'g', apiCheckDefaults: { url: 'http://10.0.0.1' } }), 'apiCheckDefaults.url');
    await refused(vigil.alertChannels.create(tenant, webhook('http://[::1]:8080/hook')), 'config.url');
    const check = await vigil.checks.create(tenant, 'TCP', tcp('db.example.com'));
    await refused(vigil.checks.update(tenant, check.id, { request: { hostname: '0177.0.0.1', port: 5432 } }), 'request.hostname');
  });

  it('each run carries the policy of its check’s account', async () => {
    const s = await twoAccounts();
    const ownCheck = await s.vigil.checks.create(s.own, 'TCP', tcp('db.example.com'));
    const tenantCheck = await s.vigil.checks.create(s.tenant, 'TCP', tcp('db.example.com'));
    await s.vigil.start();
    started.push(s.vigil);
    await settle();
    await runFor(s.clock, 12_000);
    const policyOfRun = (checkId: string) => s.runner.jobs.filter((j) => j.check.id === checkId).map((j) => j.targetPolicy as TargetPolicy);
    expect(policyOfRun(ownCheck.id).length).toBeGreaterThan(0);
    expect(policyOfRun(tenantCheck.id).length).toBeGreaterThan(0);
    for (const p of policyOfRun(ownCheck.id)) expect(p.checkAddress('127.0.0.1')).toBeNull();
    for (const p of policyOfRun(tenantCheck.id)) expect(p.checkAddress('127.0.0.1')?.range.name).toBe('loopback');
  });

  it('each delivery carries the policy of its channel’s account', async () => {
    const s = await twoAccounts();
    for (const account of [s.own, s.tenant]) {
      const channel = await s.vigil.alertChannels.create(account, webhook('https://hooks.example.com/in'));
      await s.vigil.storage.outbox.enqueue([outboxMessageFixture(account, { alertChannelId: channel.id, nextAttemptAt: s.clock.now().toISOString() })]);
    }
    await s.vigil.alerts.drain();
    const refuses = (account: string) => s.transport.sent.find((m) => m.channel.accountId === account)?.context?.targetPolicy?.refuseInternalAddresses;
    expect(refuses(s.own)).toBe(false);
    expect(refuses(s.tenant)).toBe(true);
  });
});
