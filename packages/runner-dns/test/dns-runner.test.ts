import type { DnsAssertion, DnsCheck, DnsRequest, RunJob } from '@vigil/core';
import { PUBLIC_ONLY_TARGET_POLICY } from '@vigil/core';
import { dnsCheckFixture, runJobFixture, runnerSuite } from '@vigil/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsRunner, parseServer } from '../src/index.js';
import { startDnsServer, type TestDnsServer } from './support/dns-server.js';

const ZONE = {
  'shop.test': [{ type: 'A', data: '192.0.2.10' }, { type: 'A', data: '192.0.2.11' }],
  'mail.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx1.mail.test' } }],
  'www.shop.test': [{ type: 'CNAME', data: 'shop.test' }, { type: 'A', data: '192.0.2.10', name: 'shop.test' }],
};

let server: TestDnsServer;
beforeAll(async () => {
  server = await startDnsServer({ zone: ZONE, rcodes: { 'broken.test': 2 }, silent: ['silent.test'] });
});
afterAll(() => server?.close());

type RequestInput = Partial<Omit<DnsRequest, 'assertions'>> & { assertions?: Partial<DnsAssertion>[] };
const assertion = (a: Partial<DnsAssertion>): DnsAssertion => ({ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: '', regex: null, ...a } as DnsAssertion);

function dnsJob(request: RequestInput, check: Partial<DnsCheck> = {}, job: Partial<RunJob> = {}): RunJob {
  const base = dnsCheckFixture();
  const full: DnsCheck = {
    ...base,
    accountId: 'account-1',
    ...check,
    request: {
      ...base.request, nameServer: server.host, port: server.port, query: 'shop.test',
      ...request, assertions: (request.assertions ?? []).map(assertion),
    },
  } as DnsCheck;
  return runJobFixture(full, job);
}

const runner = dnsRunner();
const run = (request: RequestInput, check: Partial<DnsCheck> = {}, job: Partial<RunJob> = {}, signal = new AbortController().signal) =>
  runner.run(dnsJob(request, check, job), signal);

describe('DNS runner conformance', () => {
  runnerSuite(it, async () => ({
    runner: dnsRunner(),
    passing: dnsJob({ query: 'shop.test', assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: '192.0.2.10' }] }),
    failing: dnsJob({ query: 'nowhere.test' }),
    hanging: dnsJob({ query: 'silent.test' }, {}, { timeoutMs: 20_000 }),
    invalidCheck: { checkType: 'DNS', name: 'resolver', request: { query: 'shop.test', recordType: 'AXFR' } },
  }));
});

describe('dnsRunner', () => {
  it('passes when the name has records of the type, and records the answer, phases and assertions', async () => {
    const result = await run({ assertions: [{ source: 'ANSWER_COUNT', comparison: 'EQUALS', target: '2' }, { source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'noerror' }] });
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null, isDegraded: false });
    expect(result.phases).toEqual({ dns: result.responseTime, total: result.responseTime });
    expect(result.assertions).toEqual([
      { source: 'ANSWER_COUNT', comparison: 'EQUALS', property: '', target: '2', actual: 2, passed: true },
      { source: 'RESPONSE_CODE', comparison: 'EQUALS', property: '', target: 'noerror', actual: 'NOERROR', passed: true },
    ]);
    expect(result.details).toMatchObject({
      recordType: 'A', query: 'shop.test', nameServer: '127.0.0.1', port: server.port, protocol: 'UDP', rcode: 'NOERROR',
      answers: ['shop.test 300 A 192.0.2.10', 'shop.test 300 A 192.0.2.11'], matched: 2,
    });
  });

  it('fails on NXDOMAIN, or on no records of the type, unless an assertion says what to expect', async () => {
    const missing = await run({ query: 'nowhere.test' });
    expect(missing).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION', errorMessage: `127.0.0.1:${server.port} answered NXDOMAIN for nowhere.test A` });
    const none = await run({ query: 'mail.test' });
    expect(none.errorMessage).toBe(`mail.test has no A records (asked 127.0.0.1:${server.port})`);
    const expectedGone = await run({ query: 'nowhere.test', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NXDOMAIN' }] });
    expect(expectedGone).toMatchObject({ hasFailures: false });
    const expectedEmpty = await run({ query: 'mail.test', assertions: [{ source: 'ANSWER_COUNT', comparison: 'EQUALS', target: '0' }] });
    expect(expectedEmpty).toMatchObject({ hasFailures: false });
  });

  it('reads TEXT_ANSWER as the records of the asked type, one a line, and extracts with a regex', async () => {
    const cname = await run({ query: 'www.shop.test', assertions: [{ source: 'TEXT_ANSWER', comparison: 'EQUALS', target: '192.0.2.10' }] });
    expect(cname).toMatchObject({ hasFailures: false });
    const mx = await run({ query: 'mail.test', recordType: 'MX', assertions: [{ source: 'TEXT_ANSWER', comparison: 'EQUALS', target: '10', regex: '^(\\d+) ' }] });
    expect(mx.assertions![0]).toMatchObject({ actual: '10', passed: true });
    const wrong = await run({ assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: '203.0.113.9' }] });
    expect(wrong).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(wrong.errorMessage).toBe('Assertion TEXT_ANSWER CONTAINS "203.0.113.9" failed: the answers were "192.0.2.10\\n192.0.2.11"');
  });

  it('says what a failing response code, count and time were', async () => {
    const result = await run({
      query: 'broken.test',
      assertions: [
        { source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' },
        { source: 'ANSWER_COUNT', comparison: 'GREATER_THAN', target: '0' },
        { source: 'RESPONSE_TIME', comparison: 'GREATER_THAN', target: '60000' },
      ],
    });
    expect(result.errorMessage).toBe([
      'Assertion RESPONSE_CODE EQUALS NOERROR failed: the response code was SERVFAIL',
      'Assertion ANSWER_COUNT GREATER_THAN 0 failed: 0 records answered',
      `Assertion RESPONSE_TIME GREATER_THAN 60000 failed: the answer took ${result.responseTime} ms`,
    ].join('; '));
  });

  it('asks over TCP when the check says so', async () => {
    const before = server.received.length;
    const result = await run({ protocol: 'TCP' });
    expect(result).toMatchObject({ hasFailures: false, details: { protocol: 'TCP' } });
    expect(server.received.slice(before)).toEqual(['TCP A shop.test']);
  });

  it('times out at maxResponseTime when the server stays silent, as a TIMEOUT over the limit', async () => {
    const result = await run({ query: 'silent.test' }, { maxResponseTime: 150 });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', overMaxResponseTime: true, responseTime: 150 });
    expect(result.errorMessage).toContain('No answer from 127.0.0.1');
  });

  it('inverts the verdict with shouldFail', async () => {
    expect(await run({ query: 'nowhere.test' }, { shouldFail: true })).toMatchObject({ hasFailures: false });
    expect(await run({}, { shouldFail: true })).toMatchObject({ hasFailures: true });
  });

  it('refuses a name server the target policy refuses, without asking it', async () => {
    const before = server.received.length;
    const result = await run({}, {}, { targetPolicy: PUBLIC_ONLY_TARGET_POLICY });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
    expect(result.errorMessage).toMatch(/^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/);
    expect(server.received.length).toBe(before);
  });

  it('asks the default name server of the runner when the check names none, whatever the target policy', async () => {
    const own = dnsRunner({ defaultNameServer: `${server.host}:${server.port}` });
    const result = await own.run(dnsJob({ nameServer: null, port: 53 }, {}, { targetPolicy: PUBLIC_ONLY_TARGET_POLICY }), new AbortController().signal);
    expect(result).toMatchObject({ hasFailures: false, details: { nameServer: '127.0.0.1', port: server.port } });
  });
});

describe('parseServer', () => {
  it.each([
    ['10.0.0.53', { address: '10.0.0.53', port: null }],
    ['10.0.0.53:5353', { address: '10.0.0.53', port: 5353 }],
    ['[2001:db8::53]:53', { address: '2001:db8::53', port: 53 }],
    ['::1', { address: '::1', port: null }],
  ])('%s', (text, expected) => {
    expect(parseServer(text)).toEqual(expected);
  });

  it('refuses a name, and a port outside 1..65535', () => {
    expect(() => parseServer('ns1.example.com')).toThrow(/not a name server address/);
    expect(() => parseServer('10.0.0.53:99999')).toThrow(/must be 1..65535/);
    expect(() => parseServer('[2001:db8::53]:0')).toThrow(/must be 1..65535/);
  });
});
