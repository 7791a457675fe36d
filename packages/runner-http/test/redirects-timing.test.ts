import { gzipSync } from 'node:zlib';
import type { RetryStrategyInput } from '@vigil/core';
import { nextRetry } from '@vigil/core/internals';
import { describe, expect, it } from 'vitest';
import { httpRunner } from '../src/index.js';
import { apiJob, assertion, json, localServers, startHttp, type ApiJobOptions, type Handler } from './support.js';

const serve = localServers();
const runner = httpRunner();
const run = (job: ApiJobOptions, r = runner, signal = new AbortController().signal) => r.run(apiJob(job), signal);
const redirect = (status: number, location: string): Handler => (_req, res) => {
  res.writeHead(status, { location });
  res.end(`moved to ${location}`);
};
const later = (ms: number, handler: Handler): Handler => (req, res, body) => setTimeout(() => handler(req, res, body), ms);

describe('redirects', () => {
  it('are followed by default: the final answer is asserted on and every hop is recorded', async () => {
    const final = await serve(json(200, { page: 'final' }));
    const hop = await serve((req, res, body) => (req.url === '/start' ? redirect(302, '/next')(req, res, body) : redirect(301, `${final.origin}/final`)(req, res, body)));
    const result = await run({ request: { url: `${hop.origin}/start`, assertions: [assertion('JSON_BODY', 'EQUALS', 'final', { property: 'page' })] } });
    expect(result).toMatchObject({ hasFailures: false, statusCode: 200, errorMessage: null });
    expect((result.details as { redirects: unknown }).redirects).toEqual([
      { statusCode: 302, url: `${hop.origin}/next` },
      { statusCode: 301, url: `${final.origin}/final` },
    ]);
    expect(hop.seen.map((s) => s.url)).toEqual(['/start', '/next']);
    expect(final.seen.map((s) => s.url)).toEqual(['/final']);
  });

  it('with followRedirects false, the redirect itself is the answer', async () => {
    const hop = await serve(redirect(301, '/elsewhere'));
    const result = await run({
      request: { url: `${hop.origin}/old`, followRedirects: false, assertions: [assertion('HEADERS', 'EQUALS', '/elsewhere', { property: 'location' })] },
    });
    expect(result).toMatchObject({ hasFailures: false, statusCode: 301, errorMessage: null });
    expect(hop.seen.map((s) => s.url)).toEqual(['/old']);
    expect((result.details as { redirects: unknown[] }).redirects).toEqual([]);
  });

  it('303 turns a POST into a GET without its body; 307 keeps both', async () => {
    const server = await serve((req, res, body) => {
      if (req.url === '/see-other') return redirect(303, '/result')(req, res, body);
      if (req.url === '/temporary') return redirect(307, '/kept')(req, res, body);
      json(200, { method: req.method, body })(req, res, body);
    });
    const post = { method: 'POST' as const, body: '{"a":1}', bodyType: 'JSON' as const };
    await run({ request: { url: `${server.origin}/see-other`, ...post } });
    await run({ request: { url: `${server.origin}/temporary`, ...post } });
    expect(server.seen.map((s) => [s.method, s.url, s.body, s.headers['content-type'] ?? null])).toEqual([
      ['POST', '/see-other', '{"a":1}', 'application/json'],
      ['GET', '/result', '', null],
      ['POST', '/temporary', '{"a":1}', 'application/json'],
      ['POST', '/kept', '{"a":1}', 'application/json'],
    ]);
  });

  it('credentials stay with their origin: a redirect to another origin drops Authorization', async () => {
    const other = await serve(json(200, {}));
    const first = await serve(redirect(302, `${other.origin}/landing`));
    await run({ request: { url: `${first.origin}/`, basicAuth: { username: 'ops', password: 'pw' }, headers: [{ key: 'X-Trace', value: 't' }] } });
    expect(first.seen[0]!.headers.authorization).toBeDefined();
    expect(other.seen[0]!.headers.authorization).toBeUndefined();
    expect(other.seen[0]!.headers['x-trace']).toBe('t');
  });

  it('a redirect loop ends after maxRedirects with a message', async () => {
    const loop = await serve((req, res, body) => redirect(302, req.url === '/a' ? '/b' : '/a')(req, res, body));
    const result = await run({ request: { url: `${loop.origin}/a` } }, httpRunner({ maxRedirects: 3 }));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER', statusCode: 302 });
    expect(result.errorMessage).toBe(`More than 3 redirects, the last from ${loop.origin}/b to ${loop.origin}/a: the redirects may go round in a loop`);
    expect(loop.seen).toHaveLength(4);
  });
});

describe('response times', () => {
  it('a slow answer over degradedResponseTime is degraded but passes', async () => {
    const server = await serve(later(120, json(200, {})));
    const result = await run({ request: { url: `${server.origin}/` }, check: { degradedResponseTime: 50, maxResponseTime: 5000 } });
    expect(result).toMatchObject({ hasFailures: false, isDegraded: true, overMaxResponseTime: false, errorMessage: null });
    expect(result.responseTime).toBeGreaterThan(50);
  });

  it('a slow answer that fails (an error status) is a failure, not also degraded', async () => {
    const server = await serve(later(120, json(503, {})));
    const result = await run({ request: { url: `${server.origin}/` }, check: { degradedResponseTime: 50, maxResponseTime: 5000 } });
    expect(result).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: false, failureKind: 'ASSERTION', statusCode: 503 });
    expect(result.responseTime).toBeGreaterThan(50);
  });

  it('an answer that would come after maxResponseTime fails at maxResponseTime, without waiting for it', async () => {
    const server = await serve(later(1500, json(200, {})));
    const started = Date.now();
    const result = await run({ request: { url: `${server.origin}/` }, check: { degradedResponseTime: 50, maxResponseTime: 150 }, job: { timeoutMs: 10_000 } });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ hasFailures: true, isDegraded: false, overMaxResponseTime: true, failureKind: 'TIMEOUT' });
    expect(result.errorMessage).toBe(`No complete response within the check's maxResponseTime of 150 ms: the run stopped while waiting for the response of 127.0.0.1:${server.port}`);
    expect(result.phases.firstByte).toBeGreaterThan(100);
  });

  it('a run with no maxResponseTime stops at the job\'s time limit', async () => {
    const server = await serve(() => undefined);
    const result = await run({ request: { url: `${server.origin}/` }, check: { maxResponseTime: null }, job: { timeoutMs: 100 } });
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', overMaxResponseTime: false });
    expect(result.errorMessage).toContain("within the run's time limit of 100 ms");
  });

  it('phases are present and consistent: they add up to total, which is the response time', async () => {
    const server = await serve(later(30, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part ');
      setTimeout(() => res.end('second part'), 30);
    }));
    const result = await run({ request: { url: `http://localhost:${server.port}/` } });
    expect(result.errorMessage).toBeNull();
    const p = result.phases;
    expect(Object.keys(p).sort()).toEqual(['dns', 'download', 'firstByte', 'tcp', 'total', 'wait']);
    expect(p.total).toBe(result.responseTime);
    expect(p.dns).toBeGreaterThan(0);
    expect(p.tcp).toBeGreaterThan(0);
    expect(p.firstByte).toBeGreaterThanOrEqual(25);
    expect(p.download).toBeGreaterThanOrEqual(25);
    expect(p.total).toBeGreaterThanOrEqual(p.firstByte! + p.download!);
    const sum = p.wait! + p.dns! + p.tcp! + p.firstByte! + p.download!;
    expect(Math.abs(sum - p.total!)).toBeLessThan(0.05);
  });

  it('an IP address takes no DNS time; a redirect to the same origin reuses the connection', async () => {
    const server = await serve((req, res, body) => (req.url === '/a' ? redirect(302, '/b')(req, res, body) : json(200, {})(req, res, body)));
    const result = await run({ request: { url: `${server.origin}/a` } });
    expect(result.phases.dns).toBe(0);
    expect(result.errorMessage).toBeNull();
    expect((result.details as { redirects: unknown[] }).redirects).toHaveLength(1);
    const sum = ['wait', 'dns', 'tcp', 'firstByte', 'download'].reduce((s, k) => s + result.phases[k]!, 0);
    expect(Math.abs(sum - result.phases.total!)).toBeLessThan(0.05);
  });
});

describe('network errors, limits and retries', () => {
  const onlyNetwork: RetryStrategyInput = { type: 'FIXED', baseBackoffSeconds: 1, maxRetries: 2, maxDurationSeconds: 600, sameRegion: true, onlyOn: ['NETWORK_ERROR'] };
  const retried = (kind: string | null) => nextRetry(onlyNetwork, { retriesSoFar: 0, elapsedMs: 0, failureKind: kind as never }).retry;

  it('a refused connection is a NETWORK_ERROR, which a strategy with onlyOn NETWORK_ERROR retries; a failed assertion is not', async () => {
    const closed = await startHttp(json(200, {}));
    await closed.close();
    const refused = await run({ request: { url: `${closed.origin}/` } });
    expect(refused).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR', statusCode: null, errorMessage: `Connection refused by 127.0.0.1:${closed.port}: nothing is listening on that port` });
    expect(retried(refused.failureKind)).toBe(true);
    const server = await serve(json(500, {}));
    const wrong = await run({ request: { url: `${server.origin}/` } });
    expect(wrong.failureKind).toBe('ASSERTION');
    expect(retried(wrong.failureKind)).toBe(false);
  });

  it('a name that does not resolve and a connection the server drops are NETWORK_ERRORs', async () => {
    const dns = await run({ request: { url: 'http://api.example.invalid/' } });
    expect(dns).toMatchObject({ failureKind: 'NETWORK_ERROR', errorMessage: 'DNS lookup of "api.example.invalid" found no IPv4 address (ENOTFOUND): check the host name in the url' });
    const dropper = await serve((req) => req.socket.destroy());
    const dropped = await run({ request: { url: `${dropper.origin}/` } });
    expect(dropped).toMatchObject({ failureKind: 'NETWORK_ERROR' });
    expect(dropped.errorMessage).toBe(`The connection to 127.0.0.1:${dropper.port} was closed by the server while waiting for the response of 127.0.0.1:${dropper.port} (UND_ERR_SOCKET)`);
  });

  it('a run aborted through its signal ends at once as a TIMEOUT', async () => {
    const server = await serve(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const result = await run({ request: { url: `${server.origin}/` }, job: { timeoutMs: 10_000 } }, runner, controller.signal);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', errorMessage: expect.stringMatching(/^The run was stopped after \d+ ms while waiting for the response/) });
  });

  it('reads a body only up to maxResponseBytes and asserts on what arrived', async () => {
    const server = await serve((_req, res) => res.end('x'.repeat(10_000)));
    const result = await run({ request: { url: `${server.origin}/`, assertions: [assertion('TEXT_BODY', 'EQUALS', 'x'.repeat(100))] } }, httpRunner({ maxResponseBytes: 100 }));
    expect(result.errorMessage).toBeNull();
    expect(result.details).toMatchObject({ response: { truncated: true } });
  });

  it('decompresses a gzip body the check asked for with Accept-Encoding', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ status: 'ok' })));
    });
    const result = await run({
      request: { url: `${server.origin}/`, headers: [{ key: 'Accept-Encoding', value: 'gzip' }], assertions: [assertion('JSON_BODY', 'EQUALS', 'ok', { property: 'status' })] },
    });
    expect(result.errorMessage).toBeNull();
  });
});
