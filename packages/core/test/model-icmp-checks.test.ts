import { describe, expect, it } from 'vitest';
import { IcmpCheckCreateSchema, IcmpRequestSchema } from '../src/model/check-icmp.js';
import { parse } from '../src/model/parse.js';
import { issuesOf } from './assertions.js';

const issue = (input: unknown) => issuesOf(IcmpRequestSchema, input).map((i) => `${i.path}: ${i.message}`);
const checkIssue = (input: unknown) => issuesOf(IcmpCheckCreateSchema, input).map((i) => `${i.path}: ${i.message}`);

describe('ICMP check request', () => {
  it('fills its defaults: ten IPv4 pings, each reply awaited 2 s', () => {
    expect(parse(IcmpRequestSchema, { hostname: ' edge.example.com ' })).toEqual({
      hostname: 'edge.example.com', ipFamily: 'IPv4', pingCount: 10, timeout: 2000, assertions: [],
    });
  });

  it('takes an address of its family, and assertions on each latency statistic and on packet loss', () => {
    const request = parse(IcmpRequestSchema, {
      hostname: '2001:db8::1', ipFamily: 'IPv6', pingCount: 1, timeout: 100,
      assertions: [
        { source: 'LATENCY', comparison: 'LESS_THAN', target: '200' },
        { source: 'LATENCY', property: 'stdDev', comparison: 'LESS_THAN', target: '2.5' },
        { source: 'PACKET_LOSS', comparison: 'EQUALS', target: '0' },
      ],
    });
    expect(request.assertions).toEqual([
      { source: 'LATENCY', property: '', comparison: 'LESS_THAN', target: '200' },
      { source: 'LATENCY', property: 'stdDev', comparison: 'LESS_THAN', target: '2.5' },
      { source: 'PACKET_LOSS', property: '', comparison: 'EQUALS', target: '0' },
    ]);
  });

  it.each([
    [{ hostname: 'edge.example.com', pingCount: 0 }, 'pingCount: must be between 1 and 10'],
    [{ hostname: 'edge.example.com', pingCount: 11 }, 'pingCount: must be between 1 and 10'],
    [{ hostname: 'edge.example.com', timeout: 99 }, 'timeout: must be between 100 and 10000'],
    [{ hostname: 'not a host!' }, 'hostname: must be a host name such as db.example.com, or an IPv4 or IPv6 address'],
    [{ hostname: '-edge.example.com' }, 'hostname: must be a host name such as db.example.com, or an IPv4 or IPv6 address'],
    [{ hostname: `${'a'.repeat(64)}.example.com` }, 'hostname: must be a host name such as db.example.com, or an IPv4 or IPv6 address'],
    [{ hostname: '' }, 'hostname: must not be empty'],
    [{ hostname: '2001:db8::1' }, 'hostname: is an IPv6 address: set ipFamily to IPv6'],
    [{ hostname: '192.0.2.1', ipFamily: 'IPv6' }, 'hostname: is an IPv4 address: set ipFamily to IPv4'],
    [{ hostname: 'edge.example.com', ipFamily: 'IPv5' }, 'ipFamily: must be one of IPv4, IPv6'],
    [{ hostname: 'a.example', assertions: [{ source: 'JITTER', comparison: 'EQUALS', target: '1' }] }, 'assertions.0.source: must be one of LATENCY, PACKET_LOSS'],
    [{ hostname: 'a.example', assertions: [{ source: 'LATENCY', comparison: 'CONTAINS', target: '1' }] }, 'assertions.0.comparison: must be one of EQUALS, NOT_EQUALS, LESS_THAN, GREATER_THAN'],
    [{ hostname: 'a.example', assertions: [{ source: 'LATENCY', property: 'p99', comparison: 'LESS_THAN', target: '1' }] }, 'assertions.0.property: must be avg, min, max, stdDev or empty (avg)'],
    [{ hostname: 'a.example', assertions: [{ source: 'PACKET_LOSS', property: 'avg', comparison: 'LESS_THAN', target: '1' }] }, 'assertions.0.property: must be empty for PACKET_LOSS (LATENCY reads avg, min, max or stdDev)'],
    [{ hostname: 'a.example', assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', target: 'fast' }] }, 'assertions.0.target: must be a number such as 100 or 2.5'],
    [{ hostname: 'a.example', assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', target: '-1' }] }, 'assertions.0.target: must be a number such as 100 or 2.5'],
  ])('refuses %j naming the field', (input, expected) => {
    expect(issue(input)).toEqual([expected]);
  });

  it('bounds packet loss thresholds to percents and latency limits as TCP checks', () => {
    const check = parse(IcmpCheckCreateSchema, { name: 'edge', request: { hostname: '192.0.2.1' } });
    expect(check).toMatchObject({ degradedResponseTime: 500, maxResponseTime: 1000, degradedPacketLossThreshold: 10, maxPacketLossThreshold: 20, frequency: 10 });
    expect(checkIssue({ name: 'edge', request: { hostname: '192.0.2.1' }, maxPacketLossThreshold: 101 })).toEqual(['maxPacketLossThreshold: must be between 0 and 100']);
    expect(checkIssue({ name: 'edge', request: { hostname: '192.0.2.1' }, degradedPacketLossThreshold: -1 })).toEqual(['degradedPacketLossThreshold: must be between 0 and 100']);
    expect(checkIssue({ name: 'edge', request: { hostname: '192.0.2.1' }, maxResponseTime: 5001 })).toEqual(['maxResponseTime: must be between 0 and 5000']);
    expect(checkIssue({ name: 'edge' })).toEqual(['request: is required']);
  });
});
