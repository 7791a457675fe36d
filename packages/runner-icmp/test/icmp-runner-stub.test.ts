import type { IcmpAssertion, IcmpCheck, IcmpRequest, RunJob } from '@vigil/core';
import { icmpCheckFixture, runJobFixture } from '@vigil/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { icmpRunner } from '../src/index.js';
import { processesWith } from './support/processes.js';
import { recordedPing, removeStubs, simulatedPing, type SimulatedPing } from './support/stub-ping.js';

// Runs through run() with a stand-in for ping (test/support/stub-ping.ts): loss short of 100%, a
// late or duplicated reply and another ping's output cannot be produced over loopback without
// root firewall or traffic-control changes. The system's ping is tested in icmp-runner.test.ts.
afterAll(removeStubs);

type RequestInput = Partial<Omit<IcmpRequest, 'assertions'>> & { assertions?: IcmpAssertion[] };
function icmpJob(request: RequestInput, check: Partial<IcmpCheck> = {}): RunJob {
  const base = icmpCheckFixture();
  const full = {
    ...base, accountId: 'account-1', ...check,
    request: { ...base.request, hostname: '192.0.2.50', pingCount: 10, timeout: 300, assertions: [], ...request },
  } as IcmpCheck;
  return runJobFixture(full, { timeoutMs: 20_000 });
}
const simulated = (s: SimulatedPing, request: RequestInput, check: Partial<IcmpCheck> = {}) =>
  icmpRunner({ command: simulatedPing(s), intervalMs: 20 }).run(icmpJob(request, check), new AbortController().signal);
const recorded = (stdout: string, code: number, request: RequestInput = {}, check: Partial<IcmpCheck> = {}, stderr = '') =>
  icmpRunner({ command: recordedPing(stdout, code, stderr), intervalMs: 20 }).run(icmpJob(request, check), new AbortController().signal);

// Seven of ten answered: 30% loss, as iputils 20221126 printed it on a real network.
const SEVEN_OF_TEN = [12.4, 11.9, null, 13.1, 12.0, null, 12.2, 14.8, null, 12.6];

describe('icmpRunner on partial loss, late and duplicate replies', () => {
  it('degrades a run at degradedPacketLossThreshold and fails it at maxPacketLossThreshold', async () => {
    const limits = { degradedResponseTime: 500, maxResponseTime: 1000 };
    const degraded = await simulated({ rtts: SEVEN_OF_TEN }, {}, { ...limits, degradedPacketLossThreshold: 30, maxPacketLossThreshold: 50 });
    expect(degraded).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: true, errorMessage: null, responseTime: 12.71 });
    expect(degraded.details).toMatchObject({ sent: 10, received: 7, packetLoss: 30, latency: { min: 11.9, avg: 12.71, max: 14.8, stdDev: 0.93 } });
    expect((degraded.details as { replies: { seq: number }[] }).replies.map((r) => r.seq)).toEqual([1, 2, 4, 5, 7, 8, 10]);
    expect(degraded.phases).toMatchObject({ packetLoss: 30, latencyAvg: 12.71 });

    const failed = await simulated({ rtts: SEVEN_OF_TEN }, {}, { ...limits, degradedPacketLossThreshold: 10, maxPacketLossThreshold: 30 });
    expect(failed).toMatchObject({ hasFailures: true, hasErrors: false, isDegraded: false, failureKind: 'NETWORK_ERROR' });
    expect(failed.errorMessage).toBe("30% of 10 echo requests to 192.0.2.50 went unanswered, at or over the check's maxPacketLossThreshold of 30%");
  });

  it('counts a reply to the last request that comes late but within the timeout', async () => {
    // iputils ends max(2 × slowest reply, interval) after its last request when told -c alone:
    // 20 ms here, where the reply to the third takes 200 ms of the 500 ms timeout.
    const result = await simulated({ rtts: [1, 1, 200], rest: 1 }, { pingCount: 3, timeout: 500 });
    expect(result).toMatchObject({ hasFailures: false, details: { received: 3, packetLoss: 0 } });
    expect((result.details as { replies: unknown[] }).replies).toEqual([{ seq: 1, time: 1 }, { seq: 2, time: 1 }, { seq: 3, time: 200 }]);
  });

  it('ends ping as soon as every request was answered', async () => {
    const started = Date.now();
    const result = await simulated({ rtts: [1, 1, 1], rest: 1 }, { pingCount: 3, timeout: 5000 });
    expect(result.details).toMatchObject({ received: 3, packetLoss: 0 });
    // Not at the deadline of 2 × 20 + 5000 ms.
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('counts a reply later than the timeout as lost, and a duplicate once', async () => {
    const result = await simulated({ rtts: [400, 5, 5, 5], duplicates: [2] }, { pingCount: 4, timeout: 300 }, { maxPacketLossThreshold: 50 });
    expect(result).toMatchObject({ hasFailures: false, isDegraded: true, details: { received: 3, packetLoss: 25 } });
    expect((result.details as { replies: unknown[] }).replies).toEqual([{ seq: 2, time: 5 }, { seq: 3, time: 5 }, { seq: 4, time: 5 }]);
  });

  it('reads the degraded and max response times on the average round trip', async () => {
    const limits = { degradedPacketLossThreshold: 10, maxPacketLossThreshold: 20 };
    const degraded = await simulated({ rtts: [12.4, 11.9] }, { pingCount: 2 }, { ...limits, degradedResponseTime: 12, maxResponseTime: 13 });
    expect(degraded).toMatchObject({ hasFailures: false, isDegraded: true, responseTime: 12.15 });
    const over = await simulated({ rtts: [12.4, 11.9] }, { pingCount: 2 }, { ...limits, degradedResponseTime: 10, maxResponseTime: 12 });
    expect(over).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', overMaxResponseTime: true, isDegraded: false });
    expect(over.errorMessage).toBe("The average round trip to 192.0.2.50 was 12.15 ms, over the check's maxResponseTime of 12 ms");
  });

  it('kills a ping that does not end at its deadline, as an error of this host', async () => {
    const command = simulatedPing({ rtts: [], hangs: true });
    const started = Date.now();
    const result = await icmpRunner({ command, intervalMs: 20 }).run(icmpJob({ pingCount: 1, timeout: 100 }, { shouldFail: true }), new AbortController().signal);
    // Deadline 100 ms, then the guard's 2 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(/^ping did not end when told to at its deadline of 100 ms, and was killed 2000 ms later: ICMP checks need iputils' ping/);
    expect(processesWith(command)).toEqual([]);
  });
});

const BUSYBOX = `PING 192.0.2.50 (192.0.2.50): 56 data bytes
64 bytes from 192.0.2.50: seq=0 ttl=57 time=12.400 ms
64 bytes from 192.0.2.50: seq=1 ttl=57 time=11.900 ms

--- 192.0.2.50 ping statistics ---
2 packets transmitted, 2 packets received, 0% packet loss
round-trip min/avg/max = 11.900/12.150/12.400 ms
`;

describe('icmpRunner on output it cannot read', () => {
  const unreadable = /^ping's output could not be read \(.*\): ICMP checks need iputils' ping, 20200821 or later/;

  it('reports BusyBox ping\'s replies as unreadable, an error of this host that shouldFail leaves alone', async () => {
    const result = await recorded(BUSYBOX, 0, { pingCount: 2 }, { shouldFail: true });
    expect(result).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(unreadable);
    expect(result.errorMessage).toContain('its summary counts 2 replies, but 0 reply lines were read');
  });

  it('reports exit 0 without a reply line, and exit 1 without a summary, as unreadable', async () => {
    const nothing = await recorded('PING 192.0.2.50 (192.0.2.50) 56(84) bytes of data.\n', 0, { pingCount: 2 }, { shouldFail: true });
    expect(nothing).toMatchObject({ hasErrors: true, failureKind: 'OTHER' });
    expect(nothing.errorMessage).toContain('exit code 0, but no reply line was read');
    const cut = await recorded('', 1, { pingCount: 2 }, { shouldFail: true }, "ping: invalid argument: '0.5'\n");
    expect(cut).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER' });
    expect(cut.errorMessage).toMatch(unreadable);
    expect(cut.errorMessage).toContain(`exit code 1 and no summary line; it said "invalid argument: '0.5'"`);
  });

  it('keeps a run that printed its summary and no reply a target that did not answer', async () => {
    const down = '\n--- 192.0.2.50 ping statistics ---\n2 packets transmitted, 0 received, 100% packet loss, time 1020ms\n\n';
    const result = await recorded(down, 1, { pingCount: 2 });
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'NETWORK_ERROR', errorMessage: 'no reply to any of 2 echo requests to 192.0.2.50' });
  });
});
