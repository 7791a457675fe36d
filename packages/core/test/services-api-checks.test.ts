import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/container.js';
import type { ApiCheckResponse } from '../src/model/check.js';
import { certificateTarget } from '../src/rules/schedule-plan.js';
import { apiCheckFixture } from '../src/testing/fixtures.js';
import { FakeClock, FakeRunner, memoryStorage } from '../src/testing/index.js';
import { runFor, settle } from './fake-time.js';

const fixture = (f: string) => readFileSync(new URL(`./fixtures/${f}`, import.meta.url), 'utf8');
const api = (request: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'orders API', request: { url: 'https://api.example.com/orders', ...request }, ...extra,
});

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

async function setup(runner = new FakeRunner('API')) {
  const clock = new FakeClock('2026-05-01T12:00:00.000Z');
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'c'.repeat(64), clock, runners: [runner] });
  const a = (await vigil.accounts.ensure()).id;
  const b = (await vigil.accounts.ensure()).id;
  return { vigil, clock, runner, a, b };
}

/** The fields a rejected call's ValidationError names. */
async function validationKeys(p: Promise<unknown>): Promise<string[]> {
  const err = await p.then(() => null, (e: { code?: string; keys?: string[] }) => e);
  expect(err?.code).toBe('VALIDATION');
  return err?.keys ?? [];
}

describe('API checks in the check service', () => {
  it('creates, reads and updates an API check; a PUT replaces the request it is given', async () => {
    const { vigil, a, clock } = await setup();
    const created = await vigil.checks.create(a, 'API', api({ method: 'POST', body: '{}', bodyType: 'JSON' }, { frequency: 0, frequencyOffset: 20 }));
    expect(created).toMatchObject({
      checkType: 'API', frequency: 0, frequencyOffset: 20, degradedResponseTime: 10000, maxResponseTime: 20000,
      request: { method: 'POST', url: 'https://api.example.com/orders', body: '{}', bodyType: 'JSON', followRedirects: true, skipSSL: false },
    });
    expect(await vigil.checks.get(a, created.id, 'API')).toEqual(created);
    clock.advance(1000);
    const updated = await vigil.checks.update(a, created.id, { request: { url: 'https://api.example.com/v2/orders' } }, { checkType: 'API' });
    expect((updated as ApiCheckResponse).request).toMatchObject({ method: 'GET', url: 'https://api.example.com/v2/orders', body: '' });
    expect(updated).toMatchObject({ frequency: 0, frequencyOffset: 20, updated_at: '2026-05-01T12:00:01.000Z' });
  });

  it('a relative url needs a group whose apiCheckDefaults.url completes it', async () => {
    const { vigil, a } = await setup();
    const bare = await vigil.checkGroups.create(a, { name: 'no base' });
    const based = await vigil.checkGroups.create(a, { name: 'based', apiCheckDefaults: { url: 'https://api.example.com/v1' } });
    expect(await validationKeys(vigil.checks.create(a, 'API', api({ url: '/health' })))).toEqual(['request.url']);
    expect(await validationKeys(vigil.checks.create(a, 'API', api({ url: '/health' }, { groupId: bare.id })))).toEqual(['request.url']);
    const member = await vigil.checks.create(a, 'API', api({ url: '/health' }, { groupId: based.id }));
    expect((member as ApiCheckResponse).request.url).toBe('/health');
    // Moving it out of the group would leave nothing to complete the url.
    expect(await validationKeys(vigil.checks.update(a, member.id, { groupId: null }))).toEqual(['request.url']);
    expect(await vigil.storage.checks.listAll(a)).toHaveLength(1);
  });

  it('runs with the group\'s apiCheckDefaults merged in, leaving the stored check as it was', async () => {
    const { vigil, a } = await setup();
    const group = await vigil.checkGroups.create(a, {
      name: 'payments',
      apiCheckDefaults: {
        url: 'https://api.example.com/v1',
        headers: [{ key: 'Accept', value: 'application/json' }, { key: 'X-Env', value: 'prod' }],
        queryParameters: [{ key: 'region', value: 'eu' }],
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
        basicAuth: { username: 'ops', password: 'pw' },
      },
    });
    const check = await vigil.checks.create(a, 'API', api({ url: '/payments', headers: [{ key: 'accept', value: 'text/plain' }] }, { groupId: group.id }));
    const { check: running } = await vigil.checks.getForRun(a, check.id);
    expect(running.checkType === 'API' && running.request).toMatchObject({
      url: 'https://api.example.com/v1/payments',
      headers: [{ key: 'X-Env', value: 'prod' }, { key: 'accept', value: 'text/plain' }],
      queryParameters: [{ key: 'region', value: 'eu' }],
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', property: '', regex: null }],
      basicAuth: { username: 'ops', password: 'pw' },
    });
    expect(((await vigil.checks.get(a, check.id)) as ApiCheckResponse).request).toMatchObject({ url: '/payments', assertions: [], basicAuth: null });
  });

  it('a run\'s secrets hold what its credential headers and basic auth carry, variables filled and group defaults merged', async () => {
    const { vigil, a } = await setup();
    const group = await vigil.checkGroups.create(a, {
      name: 'partners',
      environmentVariables: [{ key: 'TOKEN', value: 'plain-token-value', secret: false }, { key: 'REGION', value: 'eu' }],
      apiCheckDefaults: { url: 'https://api.example.com', headers: [{ key: 'Proxy-Authorization', value: 'Basic cHJveHk6cHJveHktcHc=' }], basicAuth: { username: 'ops', password: 'pw' } },
    });
    const check = await vigil.checks.create(a, 'API', api({
      url: '/orders',
      headers: [{ key: 'Authorization', value: 'Bearer {{TOKEN}}' }, { key: 'Cookie', value: 'session=0123456789abcdef; lang=en' }, { key: 'X-Region', value: '{{REGION}}' }],
    }, { groupId: group.id }));
    const { secrets } = await vigil.checks.getForRun(a, check.id);
    expect(secrets.sort()).toEqual([
      '0123456789abcdef',
      'Basic cHJveHk6cHJveHktcHc=', 'Bearer plain-token-value', 'cHJveHk6cHJveHktcHc=',
      'lang=en', 'ops:pw', 'plain-token-value', 'proxy-pw', 'proxy:proxy-pw',
      'session=0123456789abcdef', 'session=0123456789abcdef; lang=en',
    ].sort());
  });

  it('an API check with an https url written out watches that host\'s certificate', () => {
    const stored = (url: string) => ({ ...apiCheckFixture({ request: { ...apiCheckFixture().request, url } }), accountId: 'a' }) as never;
    expect(certificateTarget(stored('https://api.example.com/health'))).toEqual({ host: 'api.example.com', port: 443 });
    expect(certificateTarget(stored('https://api.example.com:8443/health'))).toEqual({ host: 'api.example.com', port: 8443 });
    expect(certificateTarget(stored('http://api.example.com/health'))).toBeNull();
    expect(certificateTarget(stored('/health'))).toBeNull();
    expect(certificateTarget(stored('https://{{HOST}}/health'))).toBeNull();
  });
});

describe('client certificates on a run\'s job', () => {
  it('the engine gives each job a lookup of its own account\'s certificates, opened only when asked', async () => {
    const s = await setup();
    await s.vigil.clientCertificates.create(s.a, { host: '*.example.com', cert: fixture('encrypted.crt'), key: fixture('encrypted.key'), passphrase: 'secret' });
    await s.vigil.clientCertificates.create(s.b, { host: 'api.example.com', cert: fixture('client.crt'), key: fixture('client.key') });
    await s.vigil.checks.create(s.a, 'API', api({}, { frequency: 1 }));
    await s.vigil.start();
    started.push(s.vigil);
    await settle();
    await runFor(s.clock, 70_000);
    const job = s.runner.jobs[0];
    expect(job?.clientCertificates).toBeDefined();
    const opened = await job!.clientCertificates!.forHost('api.example.com');
    expect(opened).toMatchObject({ host: '*.example.com', passphrase: 'secret', cert: fixture('encrypted.crt') });
    expect(opened?.key).toContain('ENCRYPTED PRIVATE KEY');
    expect(await job!.clientCertificates!.forHost('db.internal')).toBeNull();
  });
});
