import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { targetPolicy, type RunResult } from '@vigil/core';
import { FIXTURE_TIME, runJobFixture, runnerSuite } from '@vigil/core/testing';
import { smtpCheckType, smtpRunner, type SmtpCheck, type SmtpRunnerOptions } from '../src/index.js';
import { freePort, selfSigned, startSmtpServer, type Pem, type SmtpServerOptions, type TestSmtpServer } from './support/smtp-server.js';

/** A stored SMTP check made from a create body, as the engine would hand it to the runner. */
function smtpCheck(request: Record<string, unknown>, fields: Record<string, unknown> = {}): SmtpCheck {
  const body = v.parse(smtpCheckType.createSchema, { name: 'mail', request, ...fields });
  return v.parse(smtpCheckType.checkSchema, { ...body, id: randomUUID(), accountId: 'account-1', checkType: 'SMTP', created_at: FIXTURE_TIME, updated_at: null });
}

const job = (request: Record<string, unknown>, fields: Record<string, unknown> = {}, overrides: Parameters<typeof runJobFixture>[1] = {}) =>
  runJobFixture(smtpCheck({ hostname: '127.0.0.1', ...request }, fields), overrides);

const strict = targetPolicy({ refuseInternalAddresses: true });
/** Resolves every name to 127.0.0.1, as a host's own lookup might, so no query leaves the machine. */
const toLoopback: SmtpRunnerOptions['lookupAll'] = async () => [{ address: '127.0.0.1', family: 4 }];

let pem: Pem;
beforeAll(() => {
  pem = selfSigned();
});

describe('SMTP runner conformance', () => {
  runnerSuite(it, async () => {
    const server = await startSmtpServer({ banner: 'Vigil test' });
    const silent = await startSmtpServer({ greet: 'never' });
    return {
      runner: smtpRunner(),
      passing: job({ port: server.port, expectedBanner: 'ESMTP Vigil test' }),
      failing: job({ port: await freePort() }),
      hanging: job({ port: silent.port }, { maxResponseTime: null }, { timeoutMs: 20_000 }),
      // The expected banner is in the failure's message unless the frame scrubs it.
      leakingSecret: job({ port: server.port, expectedBanner: 'tk-s3cr3t' }, {}, { secrets: ['tk-s3cr3t'] }),
      invalidCheck: { checkType: 'SMTP', name: 'mail', request: { hostname: 'mx.example.test', port: 465, tls: 'STARTTLS' } },
      cleanup: async () => {
        await server.close();
        await silent.close();
      },
    };
  });
});

describe('smtpRunner', () => {
  const servers: TestSmtpServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const serve = async (options: SmtpServerOptions = {}) => {
    const server = await startSmtpServer({ banner: 'Vigil test', ...options });
    servers.push(server);
    return server;
  };
  const run = (j: ReturnType<typeof job>, options: SmtpRunnerOptions = {}, signal = new AbortController().signal) => smtpRunner(options).run(j, signal);
  const expectFailure = (result: RunResult, failureKind: string, message: string | RegExp) => {
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, isDegraded: false, failureKind });
    if (typeof message === 'string') expect(result.errorMessage).toBe(message);
    else expect(result.errorMessage).toMatch(message);
  };

  it('reads the greeting, says EHLO vigil.local, reads the extensions and says QUIT, timing each phase', async () => {
    const server = await serve();
    const result = await run(job({ port: server.port, expectedBanner: 'ESMTP Vigil' }));
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, isDegraded: false, overMaxResponseTime: false, errorMessage: null, failureKind: null });
    expect(result.details).toMatchObject({ address: '127.0.0.1', port: server.port, tls: 'NONE', greeting: '220 mx.example.test ESMTP Vigil test' });
    expect(result.details!.extensions).toEqual(expect.arrayContaining(['PIPELINING', '8BITMIME']));
    expect(result.details!.extensions).not.toContain('STARTTLS');
    const { connection = NaN, banner = NaN, ehlo = NaN, total = NaN } = result.phases;
    expect(Object.keys(result.phases).sort()).toEqual(['banner', 'connection', 'ehlo', 'total']);
    expect(Math.min(connection, banner, ehlo)).toBeGreaterThan(0);
    expect(total).toBe(result.responseTime);
    expect(Math.abs(connection + banner + ehlo - total)).toBeLessThan(0.05);
    await vi.waitFor(() => expect(server.sessions).toEqual([{ ehloName: 'vigil.local', secure: false }]));
  });

  it('fails when the greeting lacks the expected banner, or is not a 220', async () => {
    const server = await serve();
    expectFailure(await run(job({ port: server.port, expectedBanner: 'Postfix' })), 'ASSERTION',
      `The greeting of 127.0.0.1:${server.port}, "220 mx.example.test ESMTP Vigil test", does not contain "Postfix"`);
    const busy = await serve({ greet: { code: 554, message: 'No SMTP service here' } });
    const refused = await run(job({ port: busy.port }));
    expectFailure(refused, 'ASSERTION', `127.0.0.1:${busy.port} greeted with "554 No SMTP service here" instead of 220`);
    expect(refused.details).toMatchObject({ greeting: '554 No SMTP service here', errorCode: 'EGREETING' });
  });

  it('with STARTTLS, upgrades after EHLO, verifies the certificate, and reads the extensions again over TLS', async () => {
    const server = await serve({ tls: pem });
    const result = await run(job({ port: server.port, tls: 'STARTTLS' }), { ca: pem.cert });
    expect(result.errorMessage).toBeNull();
    expect(result).toMatchObject({ hasFailures: false, details: { tls: 'STARTTLS', tlsProtocol: expect.stringMatching(/^TLSv1\.[23]$/) } });
    // Over TLS the server no longer offers STARTTLS: these are the second EHLO's extensions.
    expect(result.details!.extensions).toEqual(expect.arrayContaining(['PIPELINING']));
    expect(result.details!.extensions).not.toContain('STARTTLS');
    await vi.waitFor(() => expect(server.sessions).toEqual([{ ehloName: 'vigil.local', secure: true }]));

    // A name is checked against the certificate (and sent as SNI); the lookup answers 127.0.0.1.
    const byName = await run(job({ hostname: 'mx.example.test', port: server.port, tls: 'STARTTLS' }), { ca: pem.cert, lookupAll: toLoopback });
    expect(byName).toMatchObject({ hasFailures: false, details: { address: '127.0.0.1' } });
  });

  it('with STARTTLS, fails when the server does not offer it, or its certificate is not trusted', async () => {
    const plain = await serve();
    expectFailure(await run(job({ port: plain.port, tls: 'STARTTLS' })), 'ASSERTION',
      new RegExp(`^127\\.0\\.0\\.1:${plain.port} does not offer STARTTLS \\(its EHLO lists .*PIPELINING.*\\)$`));
    const tls = await serve({ tls: pem });
    const untrusted = await run(job({ port: tls.port, tls: 'STARTTLS' }));
    expectFailure(untrusted, 'ASSERTION', new RegExp(`^The certificate of 127\\.0\\.0\\.1:${tls.port} was refused after STARTTLS: self[- ]signed certificate`));
    const wrongName = await run(job({ hostname: 'mail.example.test', port: tls.port, tls: 'STARTTLS' }), { ca: pem.cert, lookupAll: toLoopback });
    expectFailure(wrongName, 'ASSERTION', /^The certificate of mail\.example\.test:\d+ \(127\.0\.0\.1\) was refused after STARTTLS: .*ERR_TLS_CERT_ALTNAME_INVALID/);
  });

  it('fails a refused port as a network error, so onlyOn NETWORK_ERROR retries it', async () => {
    const port = await freePort();
    const result = await run(job({ port }));
    expectFailure(result, 'NETWORK_ERROR', `Connection refused by 127.0.0.1:${port}: nothing is listening on that port`);
    expect(result.details).toMatchObject({ address: '127.0.0.1', greeting: null, errorCode: 'ECONNREFUSED' });
  });

  it('gives up on a server that never greets at maxResponseTime, or at the run\'s time limit', async () => {
    const server = await serve({ greet: 'never' });
    const result = await run(job({ port: server.port }, { maxResponseTime: 200 }));
    expectFailure(result, 'TIMEOUT', `Gave up after 200 ms (the check's maxResponseTime of 200 ms) waiting for the greeting of 127.0.0.1:${server.port}`);
    expect(result.overMaxResponseTime).toBe(true);
    const limited = await run(job({ port: server.port }, { maxResponseTime: null }, { timeoutMs: 200 }));
    expectFailure(limited, 'TIMEOUT', `Gave up after 200 ms (the run's time limit of 200 ms) waiting for the greeting of 127.0.0.1:${server.port}`);
    expect(limited.overMaxResponseTime).toBe(false);
  });

  it('ends at once when its signal aborts, as a failure that shouldFail does not turn round', async () => {
    const server = await serve({ greet: 'never' });
    for (const shouldFail of [false, true]) {
      const controller = new AbortController();
      const pending = run(job({ port: server.port }, { shouldFail, maxResponseTime: null }, { timeoutMs: 60_000 }), {}, controller.signal);
      await vi.waitFor(() => expect(server.connections).toBe(shouldFail ? 2 : 1));
      controller.abort();
      expectFailure(await pending, 'TIMEOUT', `The run was aborted while waiting for the greeting of 127.0.0.1:${server.port}`);
    }
    const before = new AbortController();
    before.abort();
    expectFailure(await run(job({ port: server.port }), {}, before.signal), 'TIMEOUT', /^The run was aborted while looking up the address of 127\.0\.0\.1:\d+$/);
    expect(server.connections).toBe(2);
  });

  it('marks a slow greeting degraded; a slow failure is a failure only', async () => {
    const server = await serve({ greet: 150 });
    const limits = { degradedResponseTime: 50, maxResponseTime: 5000 };
    expect(await run(job({ port: server.port }, limits))).toMatchObject({ hasFailures: false, isDegraded: true, overMaxResponseTime: false });
    const wrong = await run(job({ port: server.port, expectedBanner: 'Postfix' }, limits));
    expect(wrong).toMatchObject({ hasFailures: true, isDegraded: false, failureKind: 'ASSERTION' });
  });

  it('with shouldFail, passes when the server is down and fails when it greets', async () => {
    const port = await freePort();
    const down = await run(job({ port }, { shouldFail: true }));
    expect(down).toMatchObject({ hasFailures: false, errorMessage: null, failureKind: null });
    expect(down.details!.expectedFailure).toMatchObject({ failureKind: 'NETWORK_ERROR', errorMessage: expect.stringContaining('Connection refused') });
    const server = await serve();
    expectFailure(await run(job({ port: server.port }, { shouldFail: true })), 'ASSERTION', /expected to fail/);
  });

  describe('under a target policy', () => {
    const expectRefused = (result: RunResult, text: RegExp) => {
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER', details: { address: null, errorCode: 'ETARGETPOLICY' } });
      expect(result.errorMessage).toMatch(text);
    };

    it('refuses 127.0.0.1 and names resolving to it without connecting, even with shouldFail', async () => {
      const server = await serve();
      expectRefused(await run(job({ port: server.port }, {}, { targetPolicy: strict })), /^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/);
      expectRefused(await run(job({ hostname: 'mx.example.test', port: server.port }, {}, { targetPolicy: strict }), { lookupAll: toLoopback }),
        /^The target policy refused "mx\.example\.test" \(127\.0\.0\.1\)/);
      const private10 = async () => [{ address: '127.0.0.1', family: 4 }, { address: '10.1.2.3', family: 4 }];
      expectRefused(await run(job({ hostname: 'mx.example.test', port: server.port }, {}, { targetPolicy: targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.1'] }) }), { lookupAll: private10 }),
        /refused "mx\.example\.test" \(10\.1\.2\.3\): 10\.1\.2\.3 is a private address/);
      expectRefused(await run(job({ port: server.port }, { shouldFail: true }, { targetPolicy: strict })), /^The target policy refused 127\.0\.0\.1/);
      expect(server.connections).toBe(0);
    });

    it('reaches an address the allow list holds, or any address when the policy refuses nothing', async () => {
      const server = await serve();
      const allowed = targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8'] });
      expect(await run(job({ port: server.port }, {}, { targetPolicy: allowed }))).toMatchObject({ hasFailures: false, details: { address: '127.0.0.1' } });
      expect((await run(job({ port: server.port }, {}, { targetPolicy: targetPolicy() }))).hasFailures).toBe(false);
      expect(server.connections).toBe(2);
    });
  });

  it('validates its fields: the schema refuses what it can state, the runner refuses port 465', () => {
    const keysOf = (request: Record<string, unknown>) => {
      const parsed = v.safeParse(smtpCheckType.createSchema, { name: 'mail', request });
      if (!parsed.success) return parsed.issues.map((i) => v.getDotPath(i));
      try {
        smtpRunner().validate!(parsed.output);
        return [];
      } catch (err) {
        return (err as { keys: string[] }).keys;
      }
    };
    expect(keysOf({ hostname: 'mx.example.test' })).toEqual([]);
    expect(keysOf({ hostname: '[2001:db8::25]', port: 587, tls: 'STARTTLS', expectedBanner: 'ESMTP' })).toEqual([]);
    expect(keysOf({ hostname: 'smtp://mx.example.test' })).toEqual(['request.hostname']);
    expect(keysOf({ hostname: 'mx.example.test', port: 0, tls: 'SSL', expectedBanner: 'a\r\nQUIT' })).toEqual(['request.port', 'request.tls', 'request.expectedBanner']);
    expect(keysOf({ hostname: 'mx.example.test', port: 465 })).toEqual(['request.port']);
    expect(v.parse(smtpCheckType.createSchema, { name: 'mail', request: { hostname: 'mx.example.test' } })).toMatchObject({
      request: { hostname: 'mx.example.test', port: 25, tls: 'NONE', expectedBanner: null }, degradedResponseTime: 2000, maxResponseTime: 5000,
    });
  });
});
