import type { IcmpAssertion, IcmpCheck, IcmpRequest, RunJob } from '@vigil/core';
import { PUBLIC_ONLY_TARGET_POLICY } from '@vigil/core';
import { icmpCheckFixture, runJobFixture, runnerSuite } from '@vigil/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { icmpRunner, type IcmpRunnerOptions } from '../src/index.js';
import { PING, PING6, withPing, withPing6 } from './support/ping-available.js';
import { pingWithoutSocket, processesWith } from './support/processes.js';

// Every echo goes over loopback: `-I lo` to a documentation address sends where nobody answers
// (all lost), and 127.0.0.1 and ::1 answer on loopback as well.
const UNREACHABLE = '203.0.113.1';

type RequestInput = Partial<Omit<IcmpRequest, 'assertions'>> & { assertions?: Partial<IcmpAssertion>[] };
const assertion = (a: Partial<IcmpAssertion>): IcmpAssertion => ({ source: 'LATENCY', comparison: 'LESS_THAN', property: '', target: '1000', ...a } as IcmpAssertion);

function icmpJob(request: RequestInput, check: Partial<IcmpCheck> = {}, job: Partial<RunJob> = {}): RunJob {
  const base = icmpCheckFixture();
  const full: IcmpCheck = {
    ...base,
    accountId: 'account-1',
    ...check,
    request: { ...base.request, hostname: '127.0.0.1', pingCount: 3, timeout: 1000, ...request, assertions: (request.assertions ?? []).map(assertion) },
  } as IcmpCheck;
  return runJobFixture(full, job);
}

const makeRunner = (options: IcmpRunnerOptions = {}) => icmpRunner({ sourceInterface: 'lo', intervalMs: 50, ...options });
const runner = makeRunner();
const run = (request: RequestInput, check: Partial<IcmpCheck> = {}, job: Partial<RunJob> = {}, signal = new AbortController().signal) =>
  runner.run(icmpJob(request, check, job), signal);
const unreachable = (request: RequestInput = {}) => ({ hostname: UNREACHABLE, pingCount: 2, timeout: 300, ...request });

const noSocket = pingWithoutSocket();
afterAll(() => (noSocket.command ? noSocket.cleanup() : undefined));
describe.skipIf(!PING.ok)(withPing('ICMP runner conformance'), () => {
  runnerSuite(it, async () => ({
    runner: makeRunner(),
    passing: icmpJob({ hostname: '127.0.0.1' }),
    failing: icmpJob(unreachable()),
    hanging: icmpJob({ hostname: UNREACHABLE, pingCount: 10, timeout: 10_000 }, {}, { timeoutMs: 20_000 }),
    invalidCheck: { checkType: 'ICMP', name: 'x', request: { hostname: 'bad host!' } },
  }));
});

describe.skipIf(!PING.ok)(withPing('icmpRunner'), () => {
  it('pings 127.0.0.1 and records the latency statistics, loss, phases and replies', async () => {
    const result = await run({ hostname: '127.0.0.1', pingCount: 3 });
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null, isDegraded: false, overMaxResponseTime: false });
    const details = result.details as { latency: { min: number; avg: number; max: number; stdDev: number }; replies: { seq: number; time: number }[] };
    expect(result.details).toMatchObject({ hostname: '127.0.0.1', address: '127.0.0.1', ipFamily: 'IPv4', pingCount: 3, sent: 3, received: 3, packetLoss: 0, errors: [] });
    expect(details.replies.map((r) => r.seq)).toEqual([1, 2, 3]);
    const { min, avg, max, stdDev } = details.latency;
    const times = details.replies.map((r) => r.time);
    expect(min).toBe(Math.round(Math.min(...times) * 100) / 100);
    expect(max).toBe(Math.round(Math.max(...times) * 100) / 100);
    expect(min).toBeLessThanOrEqual(avg);
    expect(avg).toBeLessThanOrEqual(max);
    expect(stdDev).toBeGreaterThanOrEqual(0);
    expect(result.responseTime).toBe(avg);
    expect(result.phases).toEqual({ total: avg, latencyAvg: avg, latencyMin: min, latencyMax: max, latencyStdDev: stdDev, packetLoss: 0 });
  });

  it.skipIf(!PING6.ok)(withPing6('pings ::1 over IPv6'), async () => {
    const result = await run({ hostname: '::1', ipFamily: 'IPv6', pingCount: 2 });
    expect(result).toMatchObject({ hasFailures: false, details: { address: '::1', ipFamily: 'IPv6', received: 2, packetLoss: 0 } });
  });

  it('resolves a name in the check\'s family and pings the address it found', async () => {
    const result = await run({ hostname: 'localhost', ipFamily: 'IPv4', pingCount: 1 });
    expect(result).toMatchObject({ hasFailures: false, details: { hostname: 'localhost', address: '127.0.0.1', received: 1 } });
  });

  it('resolves names with the host\'s lookupAll, and fails a name it does not know as a network error', async () => {
    const asked: string[] = [];
    const discovery = makeRunner({
      lookupAll: async (name, family) => {
        asked.push(`${name}/${family}`);
        return name === 'db.service.test' ? [{ address: '127.0.0.1', family: 4 }] : [];
      },
    });
    const found = await discovery.run(icmpJob({ hostname: 'db.service.test', pingCount: 1 }), new AbortController().signal);
    expect(found).toMatchObject({ hasFailures: false, details: { hostname: 'db.service.test', address: '127.0.0.1' } });
    const missing = await discovery.run(icmpJob({ hostname: 'gone.service.test', pingCount: 1 }), new AbortController().signal);
    expect(missing).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR', details: { address: null } });
    expect(missing.errorMessage).toBe('DNS lookup of "gone.service.test" found no IPv4 address (ENOTFOUND): check the hostname, and that it has an A record');
    expect(asked).toEqual(['db.service.test/4', 'gone.service.test/4']);
  });

  it('fails a host that answers no echo request as a network error, with 100% loss', async () => {
    const result = await run(unreachable());
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'NETWORK_ERROR', overMaxResponseTime: false, isDegraded: false });
    expect(result.errorMessage).toBe(`no reply to any of 2 echo requests to ${UNREACHABLE}`);
    expect(result.details).toMatchObject({ address: UNREACHABLE, sent: 2, received: 0, packetLoss: 100, latency: null, replies: [] });
    expect(Object.keys(result.phases).sort()).toEqual(['packetLoss', 'total']);
    expect(result.phases.packetLoss).toBe(100);
    // It waited for the second request's reply until its timeout (300 ms) after sending it.
    expect(result.phases.total).toBeGreaterThanOrEqual(300);
    expect(result.responseTime).toBe(result.phases.total);
  });

  it('holds the latency and the loss to the check\'s assertions', async () => {
    const failing = await run({ pingCount: 2, assertions: [{ source: 'LATENCY', property: '', comparison: 'LESS_THAN', target: '0' }] });
    const avg = (failing.details as { latency: { avg: number } }).latency.avg;
    expect(failing).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(failing.errorMessage).toBe(`Assertion LATENCY avg LESS_THAN 0 failed: the average round trip was ${avg} ms`);
    expect(failing.assertions).toEqual([{ source: 'LATENCY', comparison: 'LESS_THAN', property: '', target: '0', actual: avg, passed: false }]);

    const passing = await run({
      pingCount: 2,
      assertions: [
        { source: 'LATENCY', property: 'max', comparison: 'LESS_THAN', target: '1000' },
        { source: 'LATENCY', property: 'stdDev', comparison: 'LESS_THAN', target: '500' },
        { source: 'PACKET_LOSS', comparison: 'EQUALS', target: '0' },
      ],
    });
    expect(passing).toMatchObject({ hasFailures: false, errorMessage: null });
    expect(passing.assertions!.map((a) => a.passed)).toEqual([true, true, true]);
    expect(passing.assertions![2]).toMatchObject({ source: 'PACKET_LOSS', property: '', actual: 0 });

    const loss = await run({ pingCount: 2, assertions: [{ source: 'PACKET_LOSS', comparison: 'GREATER_THAN', target: '0' }] });
    expect(loss).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    expect(loss.errorMessage).toBe('Assertion PACKET_LOSS GREATER_THAN 0 failed: 0% of 2 echo requests went unanswered');
  });

  it('keeps a run without replies a network error even when a LATENCY assertion fails with it', async () => {
    const result = await run(unreachable({ assertions: [{ source: 'LATENCY', property: 'min', comparison: 'LESS_THAN', target: '100' }] }));
    expect(result.failureKind).toBe('NETWORK_ERROR');
    expect(result.errorMessage).toBe(`no reply to any of 2 echo requests to ${UNREACHABLE}; Assertion LATENCY min LESS_THAN 100 failed: no reply came, so there was no round trip to compare`);
    expect(result.assertions![0]).toMatchObject({ actual: null, passed: false });
  });

  it('inverts the verdict with shouldFail', async () => {
    const down = await run(unreachable(), { shouldFail: true });
    expect(down).toMatchObject({ hasFailures: false, errorMessage: null, failureKind: null, isDegraded: false });
    expect(down.details).toMatchObject({ expectedFailure: { failureKind: 'NETWORK_ERROR', errorMessage: `no reply to any of 2 echo requests to ${UNREACHABLE}` } });
    const up = await run({ pingCount: 1 }, { shouldFail: true });
    expect(up).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
  });

  it('ends ping once every request was answered, not at its deadline', async () => {
    const started = Date.now();
    const result = await run({ pingCount: 2, timeout: 5000 });
    expect(result.details).toMatchObject({ received: 2, packetLoss: 0 });
    // The deadline is 50 + 5000 ms; the degraded and max response times are tested with recorded
    // round trips (icmp-runner-stub.test.ts), as loopback's average may round to 0.00 ms.
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('reports what ping refuses on this host as an error of the host, which shouldFail does not turn round', async () => {
    const noDevice = await makeRunner({ sourceInterface: 'eth9' }).run(icmpJob({ pingCount: 1 }, { shouldFail: true }), new AbortController().signal);
    expect(noDevice).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER', details: { address: '127.0.0.1' } });
    expect(noDevice.errorMessage).toMatch(/^ping could not ping from this host: .*eth9: No such device/);
    // A source address this host does not have (a documentation address).
    const noAddress = await makeRunner({ sourceInterface: '192.0.2.254' }).run(icmpJob({ pingCount: 1 }, { shouldFail: true }), new AbortController().signal);
    expect(noAddress).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER' });
    expect(noAddress.errorMessage).toMatch(/^ping could not ping from this host: bind: Cannot assign requested address/);
  });

  it('declares the longest a run can take as its time limit', () => {
    // 9 × 50 ms between ten requests, a 10 s timeout, the 2 s guard and 5 s for DNS.
    expect(runner.timeoutMs).toBe(9 * 50 + 10_000 + 2000 + 5000);
    expect(icmpRunner().timeoutMs).toBe(9 * 200 + 17_000);
  });

  it('refuses a lookup answer that is not an address of the family, without starting ping', async () => {
    const odd = makeRunner({ lookupAll: async () => [{ address: '--help', family: 4 }] });
    const result = await odd.run(icmpJob({ hostname: 'odd.service.test', pingCount: 1 }, { shouldFail: true }), new AbortController().signal);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER', details: { address: null } });
    expect(result.errorMessage).toBe('The lookup of "odd.service.test" gave "--help", which is not an IPv4 address: ping was not started');
  });

  it('ends an aborted run within a second and leaves no ping behind', async () => {
    const address = '203.0.113.201';
    const controller = new AbortController();
    const started = Date.now();
    const pending = runner.run(icmpJob({ hostname: address, pingCount: 10, timeout: 10_000 }, {}, { timeoutMs: 20_000 }), controller.signal);
    await new Promise((r) => setTimeout(r, 300));
    expect(processesWith(address)).toHaveLength(1);
    controller.abort();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(1300);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
    expect(result.errorMessage).toMatch(/^The run was stopped after \d+ ms, before ping finished$/);
    expect(processesWith(address)).toEqual([]);
  });

  it('fails a run at its time limit as a TIMEOUT', async () => {
    const result = await run({ hostname: '203.0.113.202', pingCount: 10, timeout: 10_000 }, {}, { timeoutMs: 400 });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', errorMessage: "ping did not finish within the run's time limit of 400 ms" });
    expect(processesWith('203.0.113.202')).toEqual([]);
  });

  it.skipIf(!PING6.ok)(withPing6('reports ping giving up on an unreachable network as a network error with ping\'s words, which shouldFail turns round'), async () => {
    const result = await run({ hostname: '2001:db8::1', ipFamily: 'IPv6', pingCount: 1 });
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'NETWORK_ERROR', details: { address: '2001:db8::1' } });
    expect(result.errorMessage).toMatch(/^ping could not reach 2001:db8::1: .*Network is unreachable/);
    const expected = await run({ hostname: '2001:db8::1', ipFamily: 'IPv6', pingCount: 1 }, { shouldFail: true });
    expect(expected).toMatchObject({ hasFailures: false, hasErrors: false });
  });

  it.skipIf(noSocket.command === null)(`says how to let ping open an ICMP socket when it cannot${noSocket.command === null ? ` (not here: ${noSocket.reason})` : ''}`, async () => {
    const denied = makeRunner({ command: noSocket.command! });
    const result = await denied.run(icmpJob({ pingCount: 1 }), new AbortController().signal);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(/^ping could not open an ICMP socket \(socket: .+\): allow unprivileged ICMP sockets with /);
    expect(result.errorMessage).toContain(
      '`sysctl net.ipv4.ping_group_range="0 2147483647"`, or give ping the raw-socket capability with ' +
      `\`setcap cap_net_raw+ep ${noSocket.command}\``,
    );
  });
});

describe('icmpRunner without ping', () => {
  it('refuses an internal address under a public-only target policy without starting ping', async () => {
    // A missing command would fail the run with its own message had ping been started.
    const guarded = makeRunner({ command: '/nonexistent/ping' });
    const policy = { targetPolicy: PUBLIC_ONLY_TARGET_POLICY };
    const literal = await guarded.run(icmpJob({ hostname: '127.0.0.1' }, { shouldFail: true }, policy), new AbortController().signal);
    expect(literal).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'NETWORK_ERROR', details: { address: null } });
    expect(literal.errorMessage).toMatch(/^The target policy refused 127\.0\.0\.1: /);
    const named = await guarded.run(icmpJob({ hostname: 'localhost' }, {}, policy), new AbortController().signal);
    expect(named.errorMessage).toMatch(/^The target policy refused "localhost" \(127\.0\.0\.1\): /);
  });

  it('reports a missing ping as an error of this host, which shouldFail does not turn round', async () => {
    const missing = makeRunner({ command: '/nonexistent/ping' });
    const result = await missing.run(icmpJob({ pingCount: 1 }, { shouldFail: true }), new AbortController().signal);
    expect(result).toMatchObject({ hasFailures: false, hasErrors: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe('ICMP checks need the system `ping` (Debian: apt-get install iputils-ping); `/nonexistent/ping` was not found');
  });

  it('refuses options it cannot work with', () => {
    expect(() => icmpRunner({ intervalMs: 5 })).toThrow(new TypeError('icmpRunner: intervalMs must be at least 10, got 5'));
    expect(() => icmpRunner({ intervalMs: 0 })).toThrow(TypeError);
    expect(() => icmpRunner({ defaultTimeoutMs: -1 })).toThrow(TypeError);
    expect(icmpRunner().options).toEqual({ command: 'ping', intervalMs: 200, sourceInterface: null, defaultTimeoutMs: 30_000 });
  });

  it('validates the request as the API does, naming the field', () => {
    expect(() => runner.validate!({ request: { hostname: '::1', ipFamily: 'IPv4' } })).toThrow(/"request.hostname" is an IPv6 address: set ipFamily to IPv6/);
    expect(() => runner.validate!({ request: { hostname: '127.0.0.1', pingCount: 3 } })).not.toThrow();
  });
});
