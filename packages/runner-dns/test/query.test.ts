import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsQueryError, queryDns, reverseName } from '../src/index.js';
import { startDnsServer, type TestDnsServer } from './support/dns-server.js';

const ZONE = {
  'shop.test': [{ type: 'A', data: '192.0.2.10' }, { type: 'A', data: '192.0.2.11' }, { type: 'AAAA', data: '2001:db8::10' }],
  'www.shop.test': [{ type: 'CNAME', data: 'shop.test' }, { type: 'A', data: '192.0.2.10', name: 'shop.test' }],
  'mail.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx1.mail.test' } }, { type: 'MX', data: { preference: 20, exchange: 'mx2.mail.test' } }],
  'zone.test': [
    { type: 'NS', data: 'ns1.zone.test' },
    { type: 'SOA', data: { mname: 'ns1.zone.test', rname: 'hostmaster.zone.test', serial: 2026112601, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 } },
    { type: 'TXT', data: ['v=spf1 ', 'include:mail.test -all'] },
    { type: 'CAA', data: { flags: 0, tag: 'issue', value: 'ca.test' } },
  ],
  '_sip._tcp.zone.test': [{ type: 'SRV', data: { priority: 10, weight: 60, port: 5060, target: 'sip.zone.test' } }],
  '10.2.0.192.in-addr.arpa': [{ type: 'PTR', data: 'shop.test' }],
  'big.test': [{ type: 'TXT', data: ['x'.repeat(200)] }],
  'forged.test': [{ type: 'A', data: '192.0.2.50' }],
  'stranger.test': [{ type: 'A', data: '192.0.2.60' }],
};

let server: TestDnsServer;
const ask = (name: string, type: Parameters<typeof queryDns>[0]['type'], extra: Partial<Parameters<typeof queryDns>[0]> = {}) =>
  queryDns({ name, type, server: server.host, port: server.port, timeoutMs: 2_000, ...extra });

beforeAll(async () => {
  server = await startDnsServer({
    zone: ZONE,
    rcodes: { 'broken.test': 2, 'closed.test': 5 },
    bareRcodes: { 'bare.test': 5 },
    truncatedOverUdp: ['big.test'],
    silent: ['silent.test'],
    forged: ['forged.test'],
    otherPort: ['stranger.test'],
  });
});
afterAll(() => server?.close());

describe('queryDns', () => {
  it.each([
    ['shop.test', 'A', ['192.0.2.10', '192.0.2.11']],
    ['shop.test', 'AAAA', ['2001:db8::10']],
    ['mail.test', 'MX', ['10 mx1.mail.test', '20 mx2.mail.test']],
    ['zone.test', 'NS', ['ns1.zone.test']],
    ['zone.test', 'SOA', ['ns1.zone.test hostmaster.zone.test 2026112601 7200 900 1209600 300']],
    ['zone.test', 'TXT', ['v=spf1 include:mail.test -all']],
    ['zone.test', 'CAA', ['0 issue "ca.test"']],
    ['_sip._tcp.zone.test', 'SRV', ['10 60 5060 sip.zone.test']],
    ['10.2.0.192.in-addr.arpa', 'PTR', ['shop.test']],
  ] as const)('reads %s %s as zone-file text', async (name, type, expected) => {
    const response = await ask(name, type);
    expect(response.rcode).toBe('NOERROR');
    expect(response.answers.map((a) => a.data)).toEqual(expected);
    expect(response.answers.every((a) => a.type === type && a.ttl === 300)).toBe(true);
    expect(response.authoritative).toBe(true);
    expect(response.protocol).toBe('UDP');
  });

  it('turns an address into its reverse name for PTR', async () => {
    const response = await ask('192.0.2.10', 'PTR');
    expect(response.answers.map((a) => a.data)).toEqual(['shop.test']);
    expect(server.received.at(-1)).toBe('UDP PTR 10.2.0.192.in-addr.arpa');
  });

  it('keeps the CNAME records on the way to the answer', async () => {
    const response = await ask('www.shop.test', 'A');
    expect(response.answers.map((a) => `${a.type} ${a.name} ${a.data}`)).toEqual(['CNAME www.shop.test shop.test', 'A shop.test 192.0.2.10']);
  });

  it.each([
    ['nowhere.test', 'NXDOMAIN'],
    ['broken.test', 'SERVFAIL'],
    ['closed.test', 'REFUSED'],
  ])('resolves %s with its response code %s and no records', async (name, rcode) => {
    const response = await ask(name, 'A');
    expect(response.rcode).toBe(rcode);
    expect(response.answers).toEqual([]);
  });

  it('takes an error answer that leaves out the question, as some servers send it', async () => {
    expect(await ask('bare.test', 'A')).toMatchObject({ rcode: 'REFUSED', answers: [] });
  });

  it('answers NOERROR with no records when the name has none of the type', async () => {
    const response = await ask('mail.test', 'A');
    expect(response).toMatchObject({ rcode: 'NOERROR', answers: [] });
  });

  it('asks over TCP when told to', async () => {
    const response = await ask('shop.test', 'A', { protocol: 'TCP' });
    expect(response.protocol).toBe('TCP');
    expect(response.answers.map((a) => a.data)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(server.received.at(-1)).toBe('TCP A shop.test');
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    const response = await ask('big.test', 'TXT');
    expect(response).toMatchObject({ truncated: true, protocol: 'TCP', rcode: 'NOERROR' });
    expect(response.answers[0]!.data).toBe('x'.repeat(200));
    expect(server.received.slice(-2)).toEqual(['UDP TXT big.test', 'TCP TXT big.test']);
  });

  it('ignores an answer with another id and takes the real one', async () => {
    const response = await ask('forged.test', 'A');
    expect(response.answers.map((a) => a.data)).toEqual(['192.0.2.50']);
  });

  it('takes no answer from another port, even with the right id and question', async () => {
    await expect(ask('stranger.test', 'A', { timeoutMs: 200 })).rejects.toMatchObject({ reason: 'TIMEOUT' });
    expect(server.received.at(-1)).toBe('UDP A stranger.test');
  });

  it('answers many queries in flight at once, each with its own answer', async () => {
    // Not forged.test: its forgery (the next id) could be the id of another of these in flight.
    const names = ['shop.test', 'mail.test', 'zone.test', 'www.shop.test'] as const;
    const types = { 'shop.test': 'A', 'mail.test': 'MX', 'zone.test': 'NS', 'www.shop.test': 'CNAME' } as const;
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => ask(names[i % 4]!, types[names[i % 4]!])));
    expect(answers.map((r, i) => `${names[i % 4]} ${r.answers[0]?.data}`).slice(0, 4)).toEqual([
      'shop.test 192.0.2.10', 'mail.test 10 mx1.mail.test', 'zone.test ns1.zone.test', 'www.shop.test shop.test',
    ]);
    expect(new Set(answers.map((r, i) => `${names[i % 4]} ${r.answers[0]?.data}`)).size).toBe(4);
  });

  it('rejects with TIMEOUT when the server stays silent', async () => {
    const error = await ask('silent.test', 'A', { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DnsQueryError);
    expect(error).toMatchObject({ reason: 'TIMEOUT' });
    expect((error as Error).message).toContain(`${server.host}:${server.port}`);
  });

  it('rejects with ABORTED when the signal aborts, before or during the query', async () => {
    await expect(ask('shop.test', 'A', { signal: AbortSignal.abort() })).rejects.toMatchObject({ reason: 'ABORTED' });
    const controller = new AbortController();
    const pending = ask('silent.test', 'A', { signal: controller.signal, timeoutMs: 10_000 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ reason: 'ABORTED' });
  });

  it('rejects with NETWORK when nothing listens on the TCP port', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await queryDns({ name: 'shop.test', type: 'A', server: '127.0.0.1', port, protocol: 'TCP', timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'NETWORK', code: 'ECONNREFUSED' });
  });

  it('refuses a port outside 1..65535 without sending anything', async () => {
    await expect(queryDns({ name: 'shop.test', type: 'A', server: '127.0.0.1', port: 0, timeoutMs: 1_000 })).rejects.toThrow(/port must be 1..65535/);
    await expect(queryDns({ name: 'shop.test', type: 'A', server: '127.0.0.1', port: 70_000, protocol: 'TCP', timeoutMs: 1_000 })).rejects.toThrow(/port must be 1..65535/);
  });

  it('refuses a name server that is not an address', async () => {
    await expect(queryDns({ name: 'shop.test', type: 'A', server: 'ns.example.com', timeoutMs: 1_000 })).rejects.toThrow(/must be an IP address/);
  });

  it('asks a server on ::1', async () => {
    const v6 = await startDnsServer({ host: '::1', zone: ZONE });
    try {
      const udp = await queryDns({ name: 'shop.test', type: 'AAAA', server: '::1', port: v6.port, timeoutMs: 2_000 });
      const tcp = await queryDns({ name: 'shop.test', type: 'AAAA', server: '::1', port: v6.port, protocol: 'TCP', timeoutMs: 2_000 });
      expect([udp.answers[0]!.data, tcp.answers[0]!.data]).toEqual(['2001:db8::10', '2001:db8::10']);
    } finally {
      await v6.close();
    }
  });
});

describe('reverseName', () => {
  it.each([
    ['192.0.2.10', '10.2.0.192.in-addr.arpa'],
    ['2001:db8::1', `1.0.0.0.${'0.'.repeat(20)}8.b.d.0.1.0.0.2.ip6.arpa`],
    ['::1', `1.${'0.'.repeat(31)}ip6.arpa`],
    ['shop.test', 'shop.test'],
  ])('%s → %s', (input, expected) => {
    expect(reverseName(input)).toBe(expected);
  });
});
