import { afterAll, describe, expect, it } from 'vitest';
import { IcmpUnavailableError, parsePingOutput, ping, pingArgs, PingNetworkError } from '../src/index.js';
import { PingHostError } from '../src/index.js';
import { scanPingOutput, unreadable } from '../src/ping-output.js';
import { pingFailure } from '../src/ping.js';
import { PING, PING6, withPing, withPing6 } from './support/ping-available.js';
import { pingWithoutSocket, processesWith } from './support/processes.js';

// Output of iputils ping 20221126 (LC_ALL=C, -n) on real networks. Loss short of 100% cannot be
// made on loopback without root firewall rules, so these runs are read as recorded.
const PARTIAL_LOSS = `PING 192.0.2.50 (192.0.2.50) 56(84) bytes of data.
64 bytes from 192.0.2.50: icmp_seq=1 ttl=57 time=12.4 ms
64 bytes from 192.0.2.50: icmp_seq=2 ttl=57 time=11.9 ms
64 bytes from 192.0.2.50: icmp_seq=4 ttl=57 time=13.1 ms
64 bytes from 192.0.2.50: icmp_seq=5 ttl=57 time=12.0 ms
64 bytes from 192.0.2.50: icmp_seq=7 ttl=57 time=12.2 ms
64 bytes from 192.0.2.50: icmp_seq=8 ttl=57 time=14.8 ms
64 bytes from 192.0.2.50: icmp_seq=10 ttl=57 time=12.6 ms

--- 192.0.2.50 ping statistics ---
10 packets transmitted, 7 received, 30% packet loss, time 9014ms
rtt min/avg/max/mdev = 11.900/12.714/14.800/0.930 ms
`;

const HOST_UNREACHABLE = `PING 10.9.9.9 (10.9.9.9) 56(84) bytes of data.
From 10.0.0.1 icmp_seq=1 Destination Host Unreachable
From 10.0.0.1 icmp_seq=2 Destination Host Unreachable
From 10.0.0.1 icmp_seq=3 Destination Host Unreachable

--- 10.9.9.9 ping statistics ---
3 packets transmitted, 0 received, +3 errors, 100% packet loss, time 2043ms
pipe 3
`;

const IPV6_MIXED = `PING 2001:db8::5(2001:db8::5) 56 data bytes
64 bytes from 2001:db8::5: icmp_seq=1 ttl=58 time=20.1 ms
64 bytes from 2001:db8::5: icmp_seq=1 ttl=58 time=20.9 ms (DUP!)
From 2001:db8::1 icmp_seq=2 Destination unreachable: Address unreachable
64 bytes from 2001:db8::5: icmp_seq=3 ttl=58 time=2310 ms
64 bytes from 2001:db8::5: icmp_seq=4 ttl=58 time=19.7 ms

--- 2001:db8::5 ping statistics ---
4 packets transmitted, 3 received, +1 duplicates, +1 errors, 25% packet loss, time 3004ms
rtt min/avg/max/mdev = 19.700/783.266/2310.000/1079.390 ms
`;

const noSocket = pingWithoutSocket();
afterAll(() => (noSocket.command ? noSocket.cleanup() : undefined));
describe('pingArgs', () => {
  it('asks iputils for numeric output, a backstop count past the deadline, interval, per-reply wait, family, interface, and the address after --', () => {
    // The runner stops ping itself at 2 × 200 + 2000 ms; -c 14 would end it only after that.
    expect(pingArgs({ address: '127.0.0.1', family: 4, count: 3, timeoutMs: 2000, intervalMs: 200 })).toEqual(['-n', '-c', '14', '-i', '0.2', '-W', '2', '-4', '--', '127.0.0.1']);
    expect(pingArgs({ address: '::1', family: 6, count: 10, timeoutMs: 150, intervalMs: 1000, sourceInterface: 'eth1' }))
      .toEqual(['-n', '-c', '12', '-i', '1', '-W', '0.15', '-6', '-I', 'eth1', '--', '::1']);
  });
});

describe('parsePingOutput', () => {
  it('reads a run with partial loss: replies by sequence, loss over the count, statistics as ping computes them', () => {
    const parsed = parsePingOutput(PARTIAL_LOSS, '', 10, 2000);
    expect(parsed).toMatchObject({ count: 10, sent: 10, received: 7, packetLoss: 30, errors: [] });
    expect(parsed.replies.map((r) => r.seq)).toEqual([1, 2, 4, 5, 7, 8, 10]);
    // ping's own line: rtt min/avg/max/mdev = 11.900/12.714/14.800/0.930 ms
    expect(parsed.latency).toEqual({ min: 11.9, avg: 12.71, max: 14.8, stdDev: 0.93 });
  });

  it('keeps error lines and counts a run with only errors as all lost', () => {
    const parsed = parsePingOutput(HOST_UNREACHABLE, '', 3, 2000);
    expect(parsed).toMatchObject({ sent: 3, received: 0, packetLoss: 100, latency: null, replies: [] });
    expect(parsed.errors).toEqual([
      'From 10.0.0.1 icmp_seq=1 Destination Host Unreachable',
      'From 10.0.0.1 icmp_seq=2 Destination Host Unreachable',
      'From 10.0.0.1 icmp_seq=3 Destination Host Unreachable',
    ]);
  });

  it('counts a duplicate once, and a reply later than the timeout as lost', () => {
    const parsed = parsePingOutput(IPV6_MIXED, '', 4, 2000);
    expect(parsed.replies).toEqual([{ seq: 1, time: 20.1 }, { seq: 4, time: 19.7 }]);
    expect(parsed).toMatchObject({ sent: 4, received: 2, packetLoss: 50, latency: { min: 19.7, avg: 19.9, max: 20.1, stdDev: 0.2 } });
    expect(parsed.errors).toEqual(['From 2001:db8::1 icmp_seq=2 Destination unreachable: Address unreachable']);
    // With a longer timeout the late reply counts.
    expect(parsePingOutput(IPV6_MIXED, '', 4, 5000).received).toBe(3);
  });

  it('takes the count asked for when ping ended before its summary, and keeps stderr lines but warnings', () => {
    const cut = 'PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.040 ms\n';
    const stderr = 'ping: Warning: source address might be selected on device other than: lo\nping: sendmsg: Network is unreachable\n';
    expect(parsePingOutput(cut, stderr, 4, 1000)).toMatchObject({ sent: 4, received: 1, packetLoss: 75, errors: ['sendmsg: Network is unreachable'] });
  });
});

describe('unreadable', () => {
  it('tells output it cannot read from a run that says something about the target', () => {
    const read = (stdout: string) => scanPingOutput(stdout, '', 10, 2000);
    expect(unreadable(read(PARTIAL_LOSS), 1, false)).toBeNull();
    expect(unreadable(read(HOST_UNREACHABLE), 1, false)).toBeNull();
    expect(unreadable(read(''), 1, false)).toBe('it ended with exit code 1 and no summary line');
    expect(unreadable(read('PING 192.0.2.50 (192.0.2.50) 56(84) bytes of data.\n'), 0, false)).toBe('it ended with exit code 0, but no reply line was read');
    // Replies all later than the timeout, or past the count: read, and all lost.
    expect(unreadable(scanPingOutput(PARTIAL_LOSS, '', 1, 1), 0, false)).toBeNull();
    const busybox = '64 bytes from 192.0.2.50: seq=0 ttl=57 time=12.400 ms\n\n--- 192.0.2.50 ping statistics ---\n1 packets transmitted, 1 packets received, 0% packet loss\n';
    expect(unreadable(read(busybox), 0, false)).toBe('its summary counts 1 replies, but 0 reply lines were read');
    expect(unreadable(read(PARTIAL_LOSS), 3, false)).toBe('it ended with exit code 3');
    // Ended by the runner's SIGINT before ping could print its summary.
    expect(unreadable(read(''), null, true)).toBeNull();
  });

  it('reads a summary that counts requests sent past the count, and keeps sent to the count', () => {
    const past = PARTIAL_LOSS.replace('10 packets transmitted, 7 received', '14 packets transmitted, 7 received');
    expect(scanPingOutput(past, '', 10, 2000).outcome).toMatchObject({ sent: 10, received: 7, packetLoss: 30 });
  });
});

describe('pingFailure', () => {
  it('makes what ping refused on this host an error of the host, and a route that goes nowhere a failure of the target', () => {
    for (const line of [
      'ping: SO_BINDTODEVICE eth9: No such device',
      'ping: bind: Cannot assign requested address',
      'ping: cannot flood; minimal interval allowed for user is 200ms',
      'ping: socket: Address family not supported by protocol',
      "ping: invalid option -- 'Z'",
    ]) {
      const failure = pingFailure(`${line}\n`, 'ping');
      expect(failure).toBeInstanceOf(PingHostError);
      expect(failure).toMatchObject({ reason: 'LOCAL', detail: line.slice('ping: '.length) });
    }
    expect(pingFailure('ping: connect: No route to host\n', 'ping')).toMatchObject({ name: 'PingNetworkError', detail: 'connect: No route to host' });
  });

  it('tells a ping without an ICMP socket from one that could not reach the network', () => {
    const denied = pingFailure('ping: socktype: SOCK_RAW\nping: socket: Operation not permitted\nping: => missing cap_net_raw+p capability or setuid?\n', 'ping');
    expect(denied).toBeInstanceOf(IcmpUnavailableError);
    expect(denied).toMatchObject({ reason: 'NO_SOCKET', command: 'ping' });
    expect(denied.message).toBe(
      'ping could not open an ICMP socket (socket: Operation not permitted): allow unprivileged ICMP sockets with ' +
      '`sysctl net.ipv4.ping_group_range="0 2147483647"`, or give ping the raw-socket capability with `setcap cap_net_raw+ep $(command -v ping)`',
    );
    expect(pingFailure('/usr/bin/ping: socket: Permission denied\n', '/usr/bin/ping')).toMatchObject({ reason: 'NO_SOCKET' });
    const network = pingFailure('ping: connect: Network is unreachable\n', 'ping');
    expect(network).toBeInstanceOf(PingNetworkError);
    expect(network).toMatchObject({ detail: 'connect: Network is unreachable', message: 'ping could not reach the target: connect: Network is unreachable' });
  });
});

describe.skipIf(!PING.ok)(withPing('ping'), () => {
  it('pings 127.0.0.1 with the system ping', async () => {
    const outcome = await ping({ address: '127.0.0.1', family: 4, count: 2, timeoutMs: 1000, intervalMs: 50 });
    expect(outcome).toMatchObject({ count: 2, sent: 2, received: 2, packetLoss: 0, errors: [] });
    expect(outcome.replies.map((r) => r.seq)).toEqual([1, 2]);
    expect(outcome.elapsedMs).toBeGreaterThanOrEqual(50);
  });

  it('waits for the last reply no longer than the timeout when nothing answers', async () => {
    const outcome = await ping({ address: '203.0.113.1', family: 4, count: 2, timeoutMs: 200, intervalMs: 50, sourceInterface: 'lo' });
    expect(outcome).toMatchObject({ sent: 2, received: 0, packetLoss: 100, latency: null });
    expect(outcome.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(outcome.elapsedMs).toBeLessThan(1500);
  });

  it('kills ping at once when aborted, rejecting with the abort reason', async () => {
    const address = '203.0.113.203';
    const controller = new AbortController();
    const started = Date.now();
    const pending = ping({ address, family: 4, count: 10, timeoutMs: 10_000, intervalMs: 200, sourceInterface: 'lo', signal: controller.signal });
    await new Promise((r) => setTimeout(r, 200));
    expect(processesWith(address)).toHaveLength(1);
    const reason = new Error('stopped by the test');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1200);
    expect(processesWith(address)).toEqual([]);
  });

  it('starts nothing when the signal is already aborted', async () => {
    const address = '203.0.113.204';
    await expect(ping({ address, family: 4, count: 1, timeoutMs: 1000, intervalMs: 200, signal: AbortSignal.abort(new Error('early')) })).rejects.toThrow('early');
    expect(processesWith(address)).toEqual([]);
  });

  it('names what is missing when there is no ping', async () => {
    const attempt = ping({ address: '127.0.0.1', family: 4, count: 1, timeoutMs: 1000, intervalMs: 200, command: '/nonexistent/ping' });
    await expect(attempt).rejects.toBeInstanceOf(IcmpUnavailableError);
    await expect(attempt).rejects.toMatchObject({
      reason: 'MISSING_COMMAND',
      message: 'ICMP checks need the system `ping` (Debian: apt-get install iputils-ping); `/nonexistent/ping` was not found',
    });
  });

  it('refuses an address not of the family before starting ping', async () => {
    await expect(ping({ address: '-f', family: 4, count: 1, timeoutMs: 1000, intervalMs: 200 })).rejects.toThrow(new TypeError('ping: "-f" is not an IPv4 address'));
    await expect(ping({ address: '::1', family: 4, count: 1, timeoutMs: 1000, intervalMs: 200 })).rejects.toThrow(TypeError);
  });

  it('rejects with a PingHostError when ping refuses its interface', async () => {
    const attempt = ping({ address: '127.0.0.1', family: 4, count: 1, timeoutMs: 1000, intervalMs: 200, sourceInterface: 'eth9' });
    await expect(attempt).rejects.toBeInstanceOf(PingHostError);
    await expect(attempt).rejects.toMatchObject({ reason: 'LOCAL', detail: expect.stringMatching(/eth9: No such device/) });
  });

  it.skipIf(!PING6.ok)(withPing6('rejects with ping\'s words when it gives up before pinging'), async () => {
    const attempt = ping({ address: '2001:db8::1', family: 6, count: 1, timeoutMs: 1000, intervalMs: 200, sourceInterface: 'lo' });
    await expect(attempt).rejects.toBeInstanceOf(PingNetworkError);
    await expect(attempt).rejects.toMatchObject({ detail: expect.stringMatching(/Network is unreachable/) });
  });

  it.skipIf(noSocket.command === null)(`rejects with an IcmpUnavailableError when ping may open no ICMP socket${noSocket.command === null ? ` (not here: ${noSocket.reason})` : ''}`, async () => {
    const attempt = ping({ address: '127.0.0.1', family: 4, count: 1, timeoutMs: 1000, intervalMs: 200, command: noSocket.command! });
    await expect(attempt).rejects.toBeInstanceOf(IcmpUnavailableError);
    await expect(attempt).rejects.toMatchObject({ reason: 'NO_SOCKET', command: noSocket.command });
  });
});
