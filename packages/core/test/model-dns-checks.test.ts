import { describe, expect, it } from 'vitest';
import { DnsRequestSchema } from '../src/model/check-dns.js';
import { parse } from '../src/model/parse.js';
import { issuesOf } from './assertions.js';

const issue = (input: unknown) => issuesOf(DnsRequestSchema, input).map((i) => `${i.path}: ${i.message}`);

describe('DNS check request', () => {
  it('fills its defaults: an A record from the system name server on port 53 over UDP', () => {
    expect(parse(DnsRequestSchema, { query: ' shop.example.com ' })).toEqual({
      recordType: 'A', query: 'shop.example.com', nameServer: null, port: 53, protocol: 'UDP', assertions: [],
    });
  });

  it('takes every record type, a name server by address, TCP and assertions on each source', () => {
    const request = parse(DnsRequestSchema, {
      recordType: 'MX', query: 'example.com.', nameServer: '2001:db8::53', port: 5353, protocol: 'TCP',
      assertions: [
        { source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' },
        { source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'mx1.example.com' },
        { source: 'ANSWER_COUNT', comparison: 'GREATER_THAN', target: '1' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '200' },
      ],
    });
    expect(request.assertions.map((a) => a.source)).toEqual(['RESPONSE_CODE', 'TEXT_ANSWER', 'ANSWER_COUNT', 'RESPONSE_TIME']);
    expect(request.assertions[1]).toEqual({ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'mx1.example.com', regex: null });
  });

  it('takes an address as the query of a PTR check only', () => {
    expect(parse(DnsRequestSchema, { recordType: 'PTR', query: '192.0.2.10' }).query).toBe('192.0.2.10');
    // Digits make a domain name too, so any type may ask for one.
    expect(parse(DnsRequestSchema, { recordType: 'TXT', query: '192.0.2.10 ' }).query).toBe('192.0.2.10');
    expect(issue({ recordType: 'A', query: '2001:db8::1' })).toEqual(['query: must be a domain name such as shop.example.com (or, for PTR, an IP address)']);
    expect(issue({ recordType: 'A', query: 'not a name' })).toEqual(['query: must be a domain name such as shop.example.com (or, for PTR, an IP address)']);
  });

  it.each([
    [{ query: 'a.example', recordType: 'AXFR' }, 'recordType: must be one of A, AAAA, CNAME, MX, NS, TXT, SOA, SRV, CAA, PTR'],
    [{ query: 'a.example', port: 0 }, 'port: must be between 1 and 65535'],
    [{ query: 'a.example', port: 65536 }, 'port: must be between 1 and 65535'],
    [{ query: 'a.example', protocol: 'DOH' }, 'protocol: must be one of UDP, TCP'],
    [{ query: 'a.example', nameServer: 'ns1.example.com' }, 'nameServer: must be an IPv4 or IPv6 address'],
    [{ query: '-bad-.example' }, 'query: must be a domain name such as shop.example.com (or, for PTR, an IP address)'],
    [{ query: `${'a'.repeat(64)}.example` }, 'query: must be a domain name such as shop.example.com (or, for PTR, an IP address)'],
    [{ query: '' }, 'query: must not be empty'],
    [{ query: 'a.example', assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOPE' }] }, 'assertions.0.target: must be a response code: NOERROR, FORMERR, SERVFAIL, NXDOMAIN, NOTIMP, REFUSED, YXDOMAIN, YXRRSET, NXRRSET, NOTAUTH, NOTZONE'],
    [{ query: 'a.example', assertions: [{ source: 'RESPONSE_CODE', comparison: 'CONTAINS', target: 'NOERROR' }] }, 'assertions.0.comparison: must be EQUALS or NOT_EQUALS for RESPONSE_CODE'],
    [{ query: 'a.example', assertions: [{ source: 'ANSWER_COUNT', comparison: 'EQUALS', target: 'two' }] }, 'assertions.0.target: must be a number for ANSWER_COUNT'],
    [{ query: 'a.example', assertions: [{ source: 'RESPONSE_TIME', comparison: 'CONTAINS', target: '5' }] }, 'assertions.0.comparison: must be one of EQUALS, NOT_EQUALS, LESS_THAN, GREATER_THAN for RESPONSE_TIME'],
    [{ query: 'a.example', assertions: [{ source: 'ANSWERS', comparison: 'EQUALS', target: '1' }] }, 'assertions.0.source: must be one of RESPONSE_CODE, TEXT_ANSWER, ANSWER_COUNT, RESPONSE_TIME'],
    [{ query: 'a.example', assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'x', regex: '(' }] }, 'assertions.0.regex: must be a valid regular expression'],
    [{ query: 'a.example', assertions: [{ source: 'ANSWER_COUNT', comparison: 'EQUALS', target: '1', regex: '.' }] }, 'assertions.0.regex: applies to TEXT_ANSWER only, not ANSWER_COUNT'],
  ])('refuses %j naming the field', (input, expected) => {
    expect(issue(input)).toEqual([expected]);
  });
});
