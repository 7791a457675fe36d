import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_TIME, runJobFixture, runnerSuite } from '@vigil/core/testing';
import { dnsCheckType, dnsRunner, type DnsCheck } from '../src/index.js';
import { startDnsServer, type DnsServer, type ZoneOptions, type ZoneRecords } from './support/dns-server.js';

const ZONE: Record<string, ZoneRecords> = {
  'shop.example.test': {
    A: ['10.0.0.1', '10.0.0.2'],
    AAAA: ['2001:db8::1'],
    MX: [[10, 'mail.example.test'], [20, 'backup-mail.example.test']],
    NS: ['ns1.example.test'],
    TXT: [['v=spf1 ', 'include:mail.example.test -all']],
  },
  'www.example.test': { CNAME: ['shop.example.test'] },
  'empty.example.test': {},
};

/** A stored DNS check made from a create body, as the engine would hand it to the runner. */
function dnsCheck(request: Record<string, unknown>, fields: Record<string, unknown> = {}): DnsCheck {
  const body = v.parse(dnsCheckType.createSchema, { name: 'shop DNS', request, ...fields });
  return v.parse(dnsCheckType.checkSchema, { ...body, id: randomUUID(), accountId: 'account-1', checkType: 'DNS', created_at: FIXTURE_TIME, updated_at: null });
}

const job = (request: Record<string, unknown>, fields: Record<string, unknown> = {}, overrides: Parameters<typeof runJobFixture>[1] = {}) =>
  runJobFixture(dnsCheck(request, fields), overrides);

describe('DNS runner conformance', () => {
  runnerSuite(it, async () => {
    const server = await startDnsServer(ZONE, { silent: ['hang.example.test'] });
    return {
      runner: dnsRunner({ servers: [server.address] }),
      passing: job({ hostname: 'shop.example.test', expectedValues: ['10.0.0.1'] }),
      failing: job({ hostname: 'shop.example.test', expectedValues: ['10.9.9.9'] }),
      hanging: job({ hostname: 'hang.example.test' }, {}, { timeoutMs: 20_000 }),
      // The missing name is in the error message unless the frame scrubs it.
      leakingSecret: job({ hostname: 'tk-s3cr3t.example.test' }, {}, { secrets: ['tk-s3cr3t'] }),
      invalidCheck: { checkType: 'DNS', name: 'shop DNS', request: { hostname: 'shop.example.test', recordType: 'A', expectedValues: ['mail.example.test'] } },
      cleanup: () => server.close(),
    };
  });
});

describe('dnsRunner', () => {
  const servers: DnsServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const serve = async (options: ZoneOptions = {}) => {
    const server = await startDnsServer(ZONE, options);
    servers.push(server);
    return { server, runner: dnsRunner({ servers: [server.address] }) };
  };
  const run = (runner: ReturnType<typeof dnsRunner>, j: ReturnType<typeof job>) => runner.run(j, new AbortController().signal);

  it('asks the configured name server, times the answer and passes when every expected value is among the answers', async () => {
    const { server, runner } = await serve();
    const result = await run(runner, job({ hostname: 'shop.example.test', expectedValues: ['10.0.0.2', '10.0.0.1'] }));
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null });
    expect(result.phases.dns).toBe(result.responseTime);
    expect(result.details).toEqual({ recordType: 'A', nameServers: [server.address], answers: ['10.0.0.1', '10.0.0.2'] });
    expect(server.questions).toEqual(['shop.example.test A']);
  });

  it.each([
    ['AAAA', ['2001:db8::1']],
    ['CNAME', ['SHOP.example.test.']],
    ['MX', ['10 mail.example.test', 'backup-mail.example.test']],
    ['NS', ['ns1.example.test']],
    ['TXT', ['v=spf1 include:mail.example.test -all']],
  ])('reads %s records and compares them as text', async (recordType, expectedValues) => {
    const { runner } = await serve();
    const hostname = recordType === 'CNAME' ? 'www.example.test' : 'shop.example.test';
    const result = await run(runner, job({ hostname, recordType, expectedValues }));
    expect(result.errorMessage).toBeNull();
    expect(result.hasFailures).toBe(false);
  });

  it('fails with a message a person can act on when the answer differs, the name is missing or has no such records', async () => {
    const { server, runner } = await serve();
    const address = server.address;
    expect(await run(runner, job({ hostname: 'shop.example.test', expectedValues: ['10.0.0.1', '10.0.0.9'] }))).toMatchObject({
      hasFailures: true, failureKind: 'ASSERTION',
      errorMessage: 'A records of shop.example.test are 10.0.0.1, 10.0.0.2; expected 10.0.0.9 among them',
    });
    expect(await run(runner, job({ hostname: 'gone.example.test' }))).toMatchObject({
      hasFailures: true, failureKind: 'ASSERTION', errorMessage: `gone.example.test does not exist (NXDOMAIN from ${address})`,
    });
    expect(await run(runner, job({ hostname: 'empty.example.test', recordType: 'MX' }))).toMatchObject({
      hasFailures: true, failureKind: 'ASSERTION', errorMessage: `empty.example.test has no MX records (asked ${address})`,
    });
  });

  it('classifies a failing name server as a network error, so onlyOn NETWORK_ERROR retries it', async () => {
    const { server, runner } = await serve({ failing: ['shop.example.test'] });
    expect(await run(runner, job({ hostname: 'shop.example.test' }))).toMatchObject({
      hasFailures: true, failureKind: 'NETWORK_ERROR', errorMessage: `${server.address} failed to answer for shop.example.test (SERVFAIL)`,
    });
  });

  it('marks a slow answer degraded, and fails one over maxResponseTime', async () => {
    const { runner } = await serve({ delayMs: 120 });
    const degraded = await run(runner, job({ hostname: 'shop.example.test' }, { degradedResponseTime: 50, maxResponseTime: 5000 }));
    expect(degraded).toMatchObject({ hasFailures: false, isDegraded: true, overMaxResponseTime: false });
    expect(degraded.responseTime).toBeGreaterThanOrEqual(100);
    const tooSlow = await run(runner, job({ hostname: 'shop.example.test' }, { degradedResponseTime: 10, maxResponseTime: 50 }));
    expect(tooSlow).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: true, failureKind: 'TIMEOUT' });
    expect(tooSlow.errorMessage).toMatch(/^The answer took \d+ ms, over the check's maxResponseTime of 50 ms$/);
  });

  it('a slow answer that fails is a failure, not also degraded; with shouldFail, a slow expected failure passes degraded', async () => {
    const { runner } = await serve({ delayMs: 120 });
    const limits = { degradedResponseTime: 50, maxResponseTime: 5000 };
    const wrong = await run(runner, job({ hostname: 'shop.example.test', expectedValues: ['10.9.9.9'] }, limits));
    expect(wrong).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: false, failureKind: 'ASSERTION' });
    expect(wrong.responseTime).toBeGreaterThanOrEqual(100);
    const expected = await run(runner, job({ hostname: 'gone.example.test' }, { ...limits, shouldFail: true }));
    expect(expected).toMatchObject({ hasFailures: false, isDegraded: true, details: { expectedFailure: expect.stringContaining('NXDOMAIN') } });
  });

  it('gives up on a silent name server after its query time limit', async () => {
    const server = await startDnsServer(ZONE, { silent: ['shop.example.test'] });
    servers.push(server);
    const runner = dnsRunner({ servers: [server.address], queryTimeoutMs: 100, tries: 1 });
    expect(await run(runner, job({ hostname: 'shop.example.test' }))).toMatchObject({
      hasFailures: true, failureKind: 'TIMEOUT', errorMessage: `No answer from ${server.address} for shop.example.test A`,
    });
  });

  it('with shouldFail, passes when the lookup fails and fails when it succeeds', async () => {
    const { runner } = await serve();
    const gone = await run(runner, job({ hostname: 'gone.example.test' }, { shouldFail: true }));
    expect(gone).toMatchObject({ hasFailures: false, errorMessage: null, details: { expectedFailure: expect.stringContaining('NXDOMAIN') } });
    expect(await run(runner, job({ hostname: 'shop.example.test' }, { shouldFail: true }))).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
  });

  it('refuses expected values that cannot be answers of the record type, and malformed server addresses at once', () => {
    const runner = dnsRunner();
    const keysOf = (request: Record<string, unknown>) => {
      try {
        runner.validate!({ request });
        return [];
      } catch (err) {
        return (err as { keys: string[] }).keys;
      }
    };
    expect(keysOf({ hostname: 'shop.example.test', expectedValues: ['10.0.0.1', '2001:db8::1'] })).toEqual(['request.expectedValues.1']);
    expect(keysOf({ hostname: 'shop.example.test', recordType: 'AAAA', expectedValues: ['10.0.0.1'] })).toEqual(['request.expectedValues.0']);
    expect(keysOf({ hostname: 'shop.example.test', recordType: 'MX', expectedValues: ['10 mail.example.test', 'mail.example.test'] })).toEqual([]);
    expect(keysOf({ hostname: 'shop.example.test', recordType: 'TXT', expectedValues: ['anything at all'] })).toEqual([]);
    expect(() => dnsRunner({ servers: ['not a server'] })).toThrow();
    expect(() => dnsRunner({ tries: 0 })).toThrow(/tries must be a positive number/);
  });
});
