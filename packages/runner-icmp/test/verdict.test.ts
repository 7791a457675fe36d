import type { IcmpAssertion } from '@vigil/core';
import { describe, expect, it } from 'vitest';
import { icmpVerdict, type IcmpSubject, type VerdictInput } from '../src/index.js';

// Loss short of 100% cannot be produced on loopback without root firewall changes, so the loss
// thresholds (degraded at 10%, failed at 20% by default) are tested on the verdict itself.
const LIMITS = { degradedResponseTime: 500, maxResponseTime: 1000, degradedPacketLossThreshold: 10, maxPacketLossThreshold: 20 };
const TARGET = 'edge.example.com (192.0.2.7)';

function subject(received: number, count = 10, avg = 12.5): IcmpSubject {
  const packetLoss = ((count - received) / count) * 100;
  return { count, received, packetLoss, latency: received > 0 ? { min: avg - 1, avg, max: avg + 1, stdDev: 0.5 } : null };
}
const verdict = (s: IcmpSubject, extra: Partial<VerdictInput> = {}) =>
  icmpVerdict({ subject: s, assertions: [], limits: LIMITS, target: TARGET, errors: [], waitedMs: 2300, ...extra });

describe('icmpVerdict', () => {
  it('passes a run without loss, degrades it from degradedPacketLossThreshold, and fails it from maxPacketLossThreshold', () => {
    expect(verdict(subject(10))).toMatchObject({ hasFailures: false, isDegraded: false, errorMessage: null, failureKind: null, responseTime: 12.5 });
    expect(verdict(subject(19, 20))).toMatchObject({ hasFailures: false, isDegraded: false }); // 5%
    expect(verdict(subject(9))).toMatchObject({ hasFailures: false, isDegraded: true }); // 10%
    const failed = verdict(subject(7)); // 30%
    expect(failed).toMatchObject({ hasFailures: true, isDegraded: false, failureKind: 'NETWORK_ERROR', overMaxResponseTime: false });
    expect(failed.errorMessage).toBe(`30% of 10 echo requests to ${TARGET} went unanswered, at or over the check's maxPacketLossThreshold of 20%`);
    expect(verdict(subject(8)).hasFailures).toBe(true); // exactly 20%
  });

  it('never fails or degrades on loss when the loss is 0, whatever the thresholds', () => {
    const zero = { ...LIMITS, degradedPacketLossThreshold: 0, maxPacketLossThreshold: 0 };
    expect(verdict(subject(10), { limits: zero })).toMatchObject({ hasFailures: false, isDegraded: false });
    expect(verdict(subject(9), { limits: zero })).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
  });

  it('judges the average round trip against degradedResponseTime and maxResponseTime', () => {
    expect(verdict(subject(10, 10, 500))).toMatchObject({ hasFailures: false, isDegraded: false });
    expect(verdict(subject(10, 10, 640.25))).toMatchObject({ hasFailures: false, isDegraded: true, responseTime: 640.25 });
    const slow = verdict(subject(10, 10, 1200));
    expect(slow).toMatchObject({ hasFailures: true, isDegraded: false, failureKind: 'TIMEOUT', overMaxResponseTime: true });
    expect(slow.errorMessage).toBe(`The average round trip to ${TARGET} was 1200 ms, over the check's maxResponseTime of 1000 ms`);
    expect(verdict(subject(10, 10, 5000), { limits: { ...LIMITS, degradedResponseTime: null, maxResponseTime: null } })).toMatchObject({ hasFailures: false, isDegraded: false });
  });

  it('names the first error line when no reply came, and takes the waited time as the response time', () => {
    const none = verdict(subject(0, 3), { errors: ['From 10.0.0.1 icmp_seq=1 Destination Host Unreachable'] });
    expect(none).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR', responseTime: 2300, overMaxResponseTime: false });
    expect(none.errorMessage).toBe(`no reply to any of 3 echo requests to ${TARGET}: From 10.0.0.1 icmp_seq=1 Destination Host Unreachable`);
  });

  it('makes a failed assertion the kind of the failure, beside loss and slowness', () => {
    const assertions: IcmpAssertion[] = [
      { source: 'PACKET_LOSS', comparison: 'LESS_THAN', property: '', target: '10' },
      { source: 'LATENCY', comparison: 'LESS_THAN', property: 'max', target: '200' },
    ];
    const result = verdict(subject(7, 10, 180.5), { assertions });
    expect(result.failureKind).toBe('ASSERTION');
    expect(result.errorMessage).toBe([
      'Assertion PACKET_LOSS LESS_THAN 10 failed: 30% of 10 echo requests went unanswered',
      `30% of 10 echo requests to ${TARGET} went unanswered, at or over the check's maxPacketLossThreshold of 20%`,
    ].join('; '));
    expect(result.assertions).toEqual([
      { source: 'PACKET_LOSS', comparison: 'LESS_THAN', property: '', target: '10', actual: 30, passed: false },
      { source: 'LATENCY', comparison: 'LESS_THAN', property: 'max', target: '200', actual: 181.5, passed: true },
    ]);
    const avg = verdict(subject(10, 10, 180.5), { assertions: [{ source: 'LATENCY', comparison: 'LESS_THAN', property: '', target: '100' }] });
    expect(avg.errorMessage).toBe('Assertion LATENCY avg LESS_THAN 100 failed: the average round trip was 180.5 ms');
    const spread = verdict(subject(10), { assertions: [{ source: 'LATENCY', comparison: 'EQUALS', property: 'stdDev', target: '0' }] });
    expect(spread.errorMessage).toBe("Assertion LATENCY stdDev EQUALS 0 failed: the round trips' standard deviation was 0.5 ms");
  });
});
