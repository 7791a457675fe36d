import { targetPolicy, type RunResult } from '@vigil/core';
import { afterEach, describe, expect, it } from 'vitest';
import { tcpRunner } from '../src/index.js';
import { echo, startServer, tcpJob, type TestServer } from './support.js';

const strict = targetPolicy({ refuseInternalAddresses: true });

describe('tcpRunner under a target policy', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  const serve = async () => {
    const s = await startServer('127.0.0.1', echo);
    servers.push(s);
    return s;
  };
  const runner = tcpRunner({ responseQuietMs: 20 });
  const run = (hostname: string, port: number, extra: Parameters<typeof tcpJob>[0]['job'] = {}, r = runner) =>
    r.run(tcpJob({ request: { hostname, port, data: 'PING' }, job: extra }), new AbortController().signal);
  const expectRefused = (result: RunResult, text: RegExp) => {
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER' });
    expect(result.errorMessage).toMatch(text);
    expect(result.details).toMatchObject({ errorCode: 'ETARGETPOLICY', remoteAddress: null, bytesSent: 0 });
  };

  it('reaches 127.0.0.1 when the job carries no policy, or one that refuses nothing', async () => {
    const server = await serve();
    expect((await run('127.0.0.1', server.port)).hasFailures).toBe(false);
    expect((await run('127.0.0.1', server.port, { targetPolicy: targetPolicy() })).hasFailures).toBe(false);
    expect(server.sockets).toHaveLength(2);
  });

  it('refuses 127.0.0.1 when the policy refuses internal addresses, without connecting', async () => {
    const server = await serve();
    const result = await run('127.0.0.1', server.port, { targetPolicy: strict });
    expectRefused(result, /^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/);
    expect(server.sockets).toHaveLength(0);
  });

  it('reaches an address the allow list holds', async () => {
    const server = await serve();
    const result = await run('127.0.0.1', server.port, { targetPolicy: targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.0/8'] }) });
    expect(result).toMatchObject({ hasFailures: false, details: { remoteAddress: '127.0.0.1' } });
  });

  it('refuses a name that resolves to 127.0.0.1, checking the address the lookup answered', async () => {
    const server = await serve();
    expectRefused(await run('localhost', server.port, { targetPolicy: strict }), /^The target policy refused "localhost" \(127\.0\.0\.1\): .*loopback/);
    // A resolver reads 2130706433 as 127.0.0.1; the policy judges what it resolved to.
    expectRefused(await run('2130706433', server.port, { targetPolicy: strict }), /refused "2130706433" \(127\.0\.0\.1\)/);
    expect(server.sockets).toHaveLength(0);
  });

  it('checks what a host-supplied lookup answers', async () => {
    const server = await serve();
    const lookup = async () => ({ address: '10.1.2.3', family: 4 });
    const viaLookup = tcpRunner({ responseQuietMs: 20, lookup });
    expectRefused(await run('db.internal', server.port, { targetPolicy: strict }, viaLookup), /refused "db\.internal" \(10\.1\.2\.3\): 10\.1\.2\.3 is a private address \(10\.0\.0\.0\/8\)/);
    const toLoopback = tcpRunner({ responseQuietMs: 20, lookup: async () => ({ address: '127.0.0.1', family: 4 }) });
    const allowed = targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.1'] });
    expect((await run('db.internal', server.port, { targetPolicy: allowed }, toLoopback)).hasFailures).toBe(false);
  });

  it('a refused target fails a shouldFail check too: it was not found unreachable, it was not tried', async () => {
    const server = await serve();
    const job = tcpJob({ request: { hostname: '127.0.0.1', port: server.port }, check: { shouldFail: true }, job: { targetPolicy: strict } });
    const result = await runner.run(job, new AbortController().signal);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
  });
});
