import { RUNNERS, createVigil, resolveAll } from '@vigil/core';
import { nextRetry } from '@vigil/core/internals';
import { memoryStorage, runnerSuite } from '@vigil/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { registerTcpRunner, tcpRunner } from '../src/index.js';
import { answer, assertion, echo, freePort, ipv6Loopback, silent, startServer, tcpJob, type TestServer } from './support.js';

const HAS_IPV6_LOOPBACK = await ipv6Loopback();

describe('TCP runner conformance', () => {
  runnerSuite(it, async () => {
    const runner = tcpRunner({ responseQuietMs: 20 });
    const echoServer = await startServer('127.0.0.1', echo);
    const silentServer = await startServer('127.0.0.1', silent);
    const ping = { data: 'PING\r\n', assertions: [assertion('RESPONSE_DATA', 'CONTAINS', 'PING')] };
    return {
      runner,
      passing: tcpJob({ request: { port: echoServer.port, ...ping } }),
      failing: tcpJob({ request: { port: await freePort(), ...ping } }),
      hanging: tcpJob({ request: { port: silentServer.port, ...ping }, job: { timeoutMs: 20_000 } }),
      // The echo carries the secret back, so an assertion's actual value and the message would too.
      leakingSecret: tcpJob({
        request: { port: echoServer.port, data: 'AUTH {{SERVICE_SECRET_TOKEN}}\r\n', assertions: [assertion('RESPONSE_DATA', 'EQUALS', '+OK')] },
        job: { environment: { SERVICE_SECRET_TOKEN: 's3cr3t-t0ken' }, secrets: ['s3cr3t-t0ken'] },
      }),
      invalidCheck: { checkType: 'TCP', name: 'db', request: { hostname: 'tcp://db.example.com:5432', port: 5432 } },
      cleanup: async () => {
        await echoServer.close();
        await silentServer.close();
      },
    };
  });
});

describe('tcpRunner', () => {
  const servers: TestServer[] = [];
  const serve = async (handler: Parameters<typeof startServer>[1], host = '127.0.0.1') => {
    const s = await startServer(host, handler);
    servers.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const runner = tcpRunner({ responseQuietMs: 20 });
  const run = (job: Parameters<typeof tcpJob>[0], r = runner, signal = new AbortController().signal) => r.run(tcpJob(job), signal);

  describe('a passing exchange', () => {
    it('sends the data, reads the echo, and records phases, assertions and details', async () => {
      const server = await serve(echo);
      const result = await run({
        request: { port: server.port, data: 'PING\r\n', assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'PING\r\n')] },
      });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null, isDegraded: false });
      expect(server.received[0]).toBe('PING\r\n');
      expect(result.assertions).toEqual([
        { source: 'RESPONSE_DATA', comparison: 'EQUALS', property: '', target: 'PING\r\n', actual: 'PING\r\n', passed: true },
      ]);
      expect(result.details).toMatchObject({
        ipFamily: 'IPv4', remoteAddress: '127.0.0.1', bytesSent: 6, bytesReceived: 6, responseEnded: 'quiet', response: 'PING\r\n',
      });
      const { dns = NaN, connection = NaN, data = NaN, total = NaN } = result.phases;
      expect(dns).toBe(0);
      expect(connection).toBeGreaterThan(0);
      expect(data).toBeGreaterThan(0);
      expect(total).toBe(result.responseTime);
      expect(Math.abs(dns + connection + data - total)).toBeLessThan(0.05);
    });

    it('ends the response time at the last byte, not at the end of the quiet period', async () => {
      const server = await serve(echo);
      const slowToSettle = tcpRunner({ responseQuietMs: 250 });
      const result = await run({ request: { port: server.port, data: 'hello' } }, slowToSettle);
      expect(result.hasFailures).toBe(false);
      expect((result.details as { responseEnded: string }).responseEnded).toBe('quiet');
      expect(result.responseTime).toBeLessThan(250);
    });

    it('reads a response that comes in several pieces until the server closes', async () => {
      const server = await serve((socket) => {
        socket.write('first ');
        setTimeout(() => socket.end('second'), 30);
      });
      const result = await run({ request: { port: server.port, assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'first second')] } }, tcpRunner());
      expect(result.errorMessage).toBeNull();
      expect((result.details as { responseEnded: string }).responseEnded).toBe('peer-closed');
    });

    it('looks a name up with dns.lookup in the check\'s family', async () => {
      const server = await serve(answer('hi', { greet: true }));
      const result = await run({ request: { hostname: 'localhost', port: server.port, assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'hi')] } });
      expect(result.errorMessage).toBeNull();
      expect((result.details as { remoteAddress: string }).remoteAddress).toBe('127.0.0.1');
      expect(result.phases.dns).toBeGreaterThan(0);
    });

    it('with no data and no assertion on the data, only opens the connection', async () => {
      const server = await serve(silent);
      const result = await run({ request: { port: server.port } });
      expect(result).toMatchObject({ hasFailures: false, errorMessage: null });
      expect(result.details).toMatchObject({ responseEnded: 'not-read', bytesSent: 0, bytesReceived: 0 });
      expect(result.phases.data).toBe(0);
      await server.closed(0);
    });

    it('reads a banner when only an assertion asks for the data', async () => {
      const server = await serve(answer('SSH-2.0-OpenSSH_9.6\r\n', { greet: true }));
      const result = await run({ request: { port: server.port, assertions: [assertion('RESPONSE_DATA', 'CONTAINS', 'SSH-2.0')] } });
      expect(result.errorMessage).toBeNull();
      expect(result.assertions?.[0]?.passed).toBe(true);
    });

    it('fills {{KEY}} placeholders in hostname, data and targets from the run environment', async () => {
      const server = await serve(echo);
      const result = await run({
        request: { hostname: '{{DB_HOST}}', port: server.port, data: 'HELLO {{NAME}} {{MISSING}}', assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'HELLO {{NAME}} {{MISSING}}'.replace('{{NAME}}', '{{ NAME }}'))] },
        job: { environment: { DB_HOST: '127.0.0.1', NAME: 'vigil' } },
      });
      expect(server.received[0]).toBe('HELLO vigil {{MISSING}}');
      expect(result.errorMessage).toBeNull();
    });
  });

  describe('time limits', () => {
    it('a server that never answers fails with TIMEOUT at the run\'s time limit, and the socket is closed', async () => {
      const server = await serve(silent);
      const result = await run({ request: { port: server.port, data: 'PING\r\n' }, check: { maxResponseTime: null }, job: { timeoutMs: 300 } });
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'TIMEOUT', overMaxResponseTime: false });
      expect(result.errorMessage).toBe(`Connected to 127.0.0.1:${server.port} and sent 6 bytes, but no response arrived within the run's time limit of 300 ms`);
      expect(result.responseTime).toBeGreaterThanOrEqual(299);
      await server.closed(0);
      expect(server.sockets[0]!.destroyed).toBe(true);
    });

    it('a timeout counts as a network error for retries that are only on NETWORK_ERROR', async () => {
      const server = await serve(silent);
      const result = await run({ request: { port: server.port, data: 'x' }, check: { maxResponseTime: null }, job: { timeoutMs: 100 } });
      const strategy = { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 2, maxDurationSeconds: 600, sameRegion: true, onlyOn: ['NETWORK_ERROR'] } as const;
      expect(nextRetry(strategy, { retriesSoFar: 0, elapsedMs: 0, failureKind: result.failureKind! })).toMatchObject({ retry: true });
    });

    it('stops waiting at maxResponseTime when it comes before the run\'s time limit', async () => {
      const server = await serve(silent);
      const result = await run({ request: { port: server.port, data: 'PING\r\n' }, check: { maxResponseTime: 150 }, job: { timeoutMs: 10_000 } });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', overMaxResponseTime: true });
      expect(result.errorMessage).toContain("within the check's maxResponseTime of 150 ms");
      await server.closed(0);
    });

    it('a slow answer over degradedResponseTime is degraded but passes', async () => {
      const server = await serve(answer('OK', { delayMs: 150 }));
      const result = await run({ request: { port: server.port, data: 'status' }, check: { degradedResponseTime: 50, maxResponseTime: 5_000 } });
      expect(result).toMatchObject({ hasFailures: false, isDegraded: true, overMaxResponseTime: false, errorMessage: null });
      expect(result.responseTime).toBeGreaterThan(50);
    });

    it('a slow answer that fails an assertion is a failure, not also degraded', async () => {
      const server = await serve(answer('ERR', { delayMs: 150 }));
      const assertions = [assertion('RESPONSE_DATA', 'EQUALS', 'OK')];
      const result = await run({ request: { port: server.port, data: 'status', assertions }, check: { degradedResponseTime: 50, maxResponseTime: 5_000 } });
      expect(result).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: false, failureKind: 'ASSERTION' });
      expect(result.responseTime).toBeGreaterThan(50);
    });

    it('with shouldFail, a slow answer that passes fails, and is not also degraded', async () => {
      const server = await serve(answer('OK', { delayMs: 150 }));
      const result = await run({ request: { port: server.port, data: 'status' }, check: { degradedResponseTime: 50, maxResponseTime: 5_000, shouldFail: true } });
      expect(result).toMatchObject({ hasFailures: true, isDegraded: false, failureKind: 'ASSERTION' });
    });

    it('a slow answer over maxResponseTime fails', async () => {
      const server = await serve(answer('OK', { delayMs: 150 }));
      const result = await run({ request: { port: server.port, data: 'status' }, check: { degradedResponseTime: 20, maxResponseTime: 60 } });
      expect(result).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: true, failureKind: 'TIMEOUT' });
    });

    it('an abort ends the run at once, as a failure, and closes the socket', async () => {
      let requestArrived!: () => void;
      const arrived = new Promise<void>((resolve) => (requestArrived = resolve));
      const server = await serve((socket) => socket.once('data', () => requestArrived()));
      const controller = new AbortController();
      const pending = run({ request: { port: server.port, data: 'PING\r\n' }, job: { timeoutMs: 60_000 } }, runner, controller.signal);
      await arrived;
      controller.abort();
      const result = await pending;
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
      expect(result.errorMessage).toMatch(new RegExp(`^The run was stopped after \\d+ ms while waiting for the response from 127\\.0\\.0\\.1:${server.port}$`));
      await server.closed(0);
    });

    it('a signal aborted before the run starts fails without connecting', async () => {
      const server = await serve(silent);
      const controller = new AbortController();
      controller.abort();
      const result = await run({ request: { port: server.port } }, runner, controller.signal);
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
      expect(result.errorMessage).toContain('before it started');
      expect(server.sockets).toHaveLength(0);
    });
  });

  describe('ends of the response', () => {
    it('a server that closes at once gives an empty response', async () => {
      const server = await serve((socket) => socket.end());
      const result = await run({
        request: { port: server.port, data: 'PING\r\n', assertions: [assertion('RESPONSE_DATA', 'IS_EMPTY'), assertion('RESPONSE_DATA', 'NOT_EMPTY')] },
      });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
      expect(result.errorMessage).toBe('Assertion RESPONSE_DATA NOT_EMPTY failed: the response was empty');
      expect(result.assertions?.map((a) => a.passed)).toEqual([true, false]);
      expect((result.details as { responseEnded: string }).responseEnded).toBe('peer-closed');
    });

    it('stops reading at the byte limit and evaluates what it read', async () => {
      const server = await serve((socket) => socket.write(Buffer.alloc(100 * 1024, 'a')));
      const small = tcpRunner({ maxResponseBytes: 1024 });
      const result = await run({
        request: { port: server.port, assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'a'.repeat(1024))] },
        job: { timeoutMs: 20_000 },
      }, small);
      expect(result.errorMessage).toBeNull();
      expect(result.details).toMatchObject({ bytesReceived: 1024, responseEnded: 'byte-limit' });
      expect(((result.details as { response: string }).response).length).toBe(512);
      expect(result.assertions?.[0]?.actual).toBe(`${'a'.repeat(1000)}…`);
      await server.closed(0);
    });
  });

  describe('network errors', () => {
    it('a refused port is a NETWORK_ERROR that says nothing listens there', async () => {
      const port = await freePort();
      const result = await run({ request: { port, data: 'PING' } });
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'NETWORK_ERROR' });
      expect(result.errorMessage).toBe(`Connection refused by 127.0.0.1:${port}: nothing is listening on that port`);
      expect(result.details).toMatchObject({ errorCode: 'ECONNREFUSED' });
    });

    it('a name under .invalid fails DNS as a NETWORK_ERROR', async () => {
      const result = await run({ request: { hostname: 'no-such-host.invalid', port: 80 } });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
      expect(result.errorMessage).toBe('DNS lookup of "no-such-host.invalid" found no IPv4 address (ENOTFOUND): check the hostname, and that it has an A record');
    });

    it('a resolver that does not answer (EAI_AGAIN) is a NETWORK_ERROR', async () => {
      const down = tcpRunner({ lookup: async () => { throw Object.assign(new Error('getaddrinfo EAI_AGAIN db.internal'), { code: 'EAI_AGAIN' }); } });
      const result = await run({ request: { hostname: 'db.internal', port: 5432 } }, down);
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
      expect(result.errorMessage).toContain('failed for now (EAI_AGAIN): the DNS server did not answer');
    });

    it('a connection reset by the server is a NETWORK_ERROR', async () => {
      const server = await serve((socket) => socket.once('data', () => socket.resetAndDestroy()));
      const result = await run({ request: { port: server.port, data: 'PING' } });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
      expect(result.errorMessage).toBe(`Connection reset by 127.0.0.1:${server.port} after 0 bytes of response: the server dropped the connection (ECONNRESET)`);
    });

    it('an IPv4 address with ipFamily IPv6 is refused before connecting', async () => {
      const result = await run({ request: { hostname: '127.0.0.1', port: 80, ipFamily: 'IPv6' } });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
      expect(result.errorMessage).toBe("127.0.0.1 is an IPv4 address, but the check's ipFamily is IPv6: change one of them");
    });
  });

  describe('shouldFail', () => {
    const shouldFail = { shouldFail: true };

    it('a port that accepts the connection fails, saying the check expected the run to fail', async () => {
      const server = await serve(echo);
      const result = await run({ request: { port: server.port }, check: shouldFail });
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'ASSERTION' });
      expect(result.errorMessage).toBe('The run passed, but the check has shouldFail set: it was expected to fail');
      expect(result.details).toMatchObject({ remoteAddress: '127.0.0.1' });
      expect(result.details).not.toHaveProperty('errorCode');
    });

    it('an exchange whose assertions pass fails too', async () => {
      const server = await serve(echo);
      const result = await run({ request: { port: server.port, data: 'a', assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'a')] }, check: shouldFail });
      expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
      expect(result.assertions).toMatchObject([{ actual: 'a', passed: true }]);
    });

    it('a closed port passes, the refusal kept in details.expectedFailure', async () => {
      const port = await freePort();
      const result = await run({ request: { port }, check: shouldFail });
      expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, failureKind: null });
      expect(result.details).toMatchObject({
        errorCode: 'ECONNREFUSED',
        expectedFailure: { errorMessage: `Connection refused by 127.0.0.1:${port}: nothing is listening on that port`, failureKind: 'NETWORK_ERROR' },
      });
    });

    it('a wrong answer passes, its failed assertion still shown', async () => {
      const server = await serve(echo);
      const result = await run({ request: { port: server.port, data: 'a', assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'b')] }, check: shouldFail });
      expect(result).toMatchObject({ hasFailures: false, errorMessage: null, failureKind: null });
      expect(result.assertions).toMatchObject([{ target: 'b', actual: 'a', passed: false }]);
      expect(result.details).toMatchObject({ expectedFailure: { errorMessage: 'Assertion RESPONSE_DATA EQUALS "b" failed: the response was "a"', failureKind: 'ASSERTION' } });
    });

    it('an answer slower than maxResponseTime passes', async () => {
      const server = await serve(answer('OK', { delayMs: 150 }));
      const result = await run({ request: { port: server.port, data: 'status' }, check: { ...shouldFail, maxResponseTime: 60 } });
      expect(result).toMatchObject({ hasFailures: false, errorMessage: null, overMaxResponseTime: true });
      expect(result.details).toMatchObject({ expectedFailure: { failureKind: 'TIMEOUT' } });
    });

    it('a run stopped by its signal, and a check whose address contradicts its ipFamily, still fail', async () => {
      const server = await serve(silent);
      const controller = new AbortController();
      controller.abort();
      const aborted = await run({ request: { port: server.port }, check: shouldFail }, runner, controller.signal);
      expect(aborted).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
      expect(aborted.errorMessage).toContain('before it started');
      const wrongFamily = await run({ request: { hostname: '127.0.0.1', port: server.port, ipFamily: 'IPv6' }, check: shouldFail });
      expect(wrongFamily).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    });
  });

  describe('IPv6', () => {
    // Some CI containers have no IPv6 loopback; only then is this case skipped.
    it.skipIf(!HAS_IPV6_LOOPBACK)('connects to ::1 with ipFamily IPv6, and names it in brackets when refused', async () => {
      const server = await serve(echo, '::1');
      const result = await run({ request: { hostname: '::1', port: server.port, ipFamily: 'IPv6', data: 'v6', assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'v6')] } });
      expect(result.errorMessage).toBeNull();
      expect(result.details).toMatchObject({ ipFamily: 'IPv6', remoteAddress: '::1' });

      const port = await freePort('::1');
      const refused = await run({ request: { hostname: '[::1]', port, ipFamily: 'IPv6' } });
      expect(refused.errorMessage).toBe(`Connection refused by [::1]:${port}: nothing is listening on that port`);
    });
  });

  describe('secrets', () => {
    it('are sent to the target but never recorded', async () => {
      const server = await serve(echo);
      const secret = 'pa55-w0rd-xyz';
      const result = await run({
        request: { hostname: '127.0.0.1', port: server.port, data: 'AUTH {{SERVICE_SECRET_PW}}', assertions: [assertion('RESPONSE_DATA', 'EQUALS', 'AUTH other')] },
        job: { environment: { SERVICE_SECRET_PW: secret }, secrets: [secret] },
      });
      expect(server.received[0]).toBe(`AUTH ${secret}`);
      expect(result.failureKind).toBe('ASSERTION');
      expect(result.errorMessage).toBe('Assertion RESPONSE_DATA EQUALS "AUTH other" failed: the response was "AUTH ********"');
      expect(JSON.stringify(result)).not.toContain(secret);
    });

    it('in a hostname do not leak through a DNS error', async () => {
      const result = await run({ request: { hostname: '{{HOST}}', port: 80 }, job: { environment: { HOST: 'tok3n-abc.invalid' }, secrets: ['tok3n-abc'] } });
      expect(result.failureKind).toBe('NETWORK_ERROR');
      expect(result.errorMessage).toContain('"********.invalid"');
    });
  });

  describe('wiring', () => {
    it('registerTcpRunner puts the runner on RUNNERS of the host\'s container', async () => {
      let registered: ReturnType<typeof registerTcpRunner> | undefined;
      const vigil = createVigil({ storage: memoryStorage(), secretKey: 'ab'.repeat(32) }, (container) => {
        registered = registerTcpRunner(container, { maxResponseBytes: 4096 });
      });
      try {
        const runners = resolveAll(vigil.container, RUNNERS);
        expect(runners.find((r) => r.checkType === 'TCP')).toBe(registered);
        expect(registered?.options.maxResponseBytes).toBe(4096);
      } finally {
        await vigil.close();
      }
    });

    it('rejects options that make no sense', () => {
      expect(() => tcpRunner({ maxResponseBytes: 0 })).toThrow('maxResponseBytes must be a positive number');
    });

    it('answers a check of another type with an error, not a throw', async () => {
      const job = tcpJob({ request: { port: 1 } });
      const result = await runner.run({ ...job, check: { ...job.check, checkType: 'BROWSER' } as never }, new AbortController().signal);
      expect(result).toMatchObject({ hasErrors: true, failureKind: 'OTHER', errorMessage: 'The TCP runner cannot run a BROWSER check' });
    });
  });
});
