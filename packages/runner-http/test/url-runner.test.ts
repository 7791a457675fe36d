import type { RunJob, UrlCheck, UrlRequest } from '@vigil/core';
import { PUBLIC_ONLY_TARGET_POLICY } from '@vigil/core';
import { runJobFixture, runnerSuite, urlCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { expectedStatusAssertions, urlRunner } from '../src/index.js';
import { json, localServers, startHttp } from './support.js';

function urlJob(request: Partial<UrlRequest> & { url: string }, check: Partial<UrlCheck> = {}, job: Partial<RunJob> = {}): RunJob {
  const base = urlCheckFixture();
  return runJobFixture({ ...base, accountId: 'account-1', ...check, request: { ...base.request, ...request } } as UrlCheck, job);
}

describe('URL runner conformance', () => {
  runnerSuite(it, async () => {
    const ok = await startHttp(json(200, { status: 'ok' }));
    const down = await startHttp(json(503, { status: 'down' }));
    const silent = await startHttp(() => undefined);
    return {
      runner: urlRunner(),
      passing: urlJob({ url: `${ok.origin}/health` }),
      failing: urlJob({ url: `${down.origin}/health` }),
      hanging: urlJob({ url: `${silent.origin}/` }, { maxResponseTime: null }, { timeoutMs: 20_000 }),
      cleanup: async () => {
        for (const s of [ok, down, silent]) await s.close();
      },
    };
  });
});

describe('urlRunner', () => {
  const serve = localServers();
  const runner = urlRunner();
  const run = (job: RunJob) => runner.run(job, new AbortController().signal);

  it('passes on a 2xx by default, with the HTTP phases timed', async () => {
    const server = await serve(json(200, { status: 'ok' }));
    const result = await run(urlJob({ url: `${server.origin}/health` }));
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false, errorMessage: null, statusCode: 200 });
    expect(Object.keys(result.phases)).toEqual(expect.arrayContaining(['dns', 'tcp', 'firstByte', 'total']));
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /health']);
  });

  it('fails on a status outside the expected one, saying which status came', async () => {
    const server = await serve(json(503, { status: 'down' }));
    const result = await run(urlJob({ url: `${server.origin}/` }));
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION', statusCode: 503 });
    expect(result.errorMessage).toBe('Assertion STATUS_CODE LESS_THAN 300 failed: the status code was 503');
  });

  it.each([
    ['503', 503, false], ['5xx', 502, false], ['200-399', 302, false], ['200-399', 404, true], ['204', 200, true],
  ])('expectedStatus %s with a %d: failing %s', async (expectedStatus, status, failing) => {
    const server = await serve(json(status, {}));
    const result = await run(urlJob({ url: `${server.origin}/`, expectedStatus, followRedirects: false }));
    expect(result.hasFailures).toBe(failing);
  });

  it('sends HEAD when asked, with no body and no headers of its own beyond the defaults', async () => {
    const server = await serve(json(200, {}));
    await run(urlJob({ url: `${server.origin}/ping`, method: 'HEAD' }));
    expect(server.seen[0]).toMatchObject({ method: 'HEAD', url: '/ping', body: '' });
  });

  it('inverts the verdict on an answer with shouldFail; no answer still fails', async () => {
    const gone = await serve(json(410, {}));
    const up = await serve(json(200, {}));
    expect(await run(urlJob({ url: `${gone.origin}/old` }, { shouldFail: true }))).toMatchObject({ hasFailures: false, statusCode: 410 });
    expect(await run(urlJob({ url: `${up.origin}/` }, { shouldFail: true }))).toMatchObject({ hasFailures: true, failureKind: 'ASSERTION' });
    const closed = await startHttp(json(200, {}));
    await closed.close();
    expect(await run(urlJob({ url: `${closed.origin}/` }, { shouldFail: true }))).toMatchObject({ hasFailures: true, failureKind: 'NETWORK_ERROR' });
  });

  it('follows redirects unless told not to', async () => {
    const target = await serve(json(200, {}));
    const redirect = await serve((_req, res) => {
      res.writeHead(301, { location: `${target.origin}/moved` });
      res.end();
    });
    expect(await run(urlJob({ url: `${redirect.origin}/old` }))).toMatchObject({ hasFailures: false, statusCode: 200 });
    expect(await run(urlJob({ url: `${redirect.origin}/old`, followRedirects: false }))).toMatchObject({ hasFailures: true, statusCode: 301 });
    expect(await run(urlJob({ url: `${redirect.origin}/old`, followRedirects: false, expectedStatus: '3xx' }))).toMatchObject({ hasFailures: false });
  });

  it('ignores a group\'s API defaults and scripts', async () => {
    const server = await serve(json(200, {}));
    const group = { apiCheckDefaults: { url: 'https://elsewhere.example.com', headers: [{ key: 'X-Group', value: '1' }] }, setupSnippetId: 1 } as never;
    const result = await run(urlJob({ url: `${server.origin}/` }, {}, { group }));
    expect(result).toMatchObject({ hasFailures: false, hasErrors: false });
    expect(server.seen[0]!.headers['x-group']).toBeUndefined();
  });

  it('refuses a target the policy refuses, without a request', async () => {
    const server = await serve(json(200, {}));
    const result = await run(urlJob({ url: `${server.origin}/` }, {}, { targetPolicy: PUBLIC_ONLY_TARGET_POLICY }));
    expect(result.hasFailures || result.hasErrors).toBe(true);
    expect(result.errorMessage).toMatch(/target policy refused/);
    expect(server.seen).toEqual([]);
  });
});

describe('expectedStatusAssertions', () => {
  it.each([
    ['200', ['EQUALS 200']],
    ['2xx', ['GREATER_THAN 199', 'LESS_THAN 300']],
    ['200-399', ['GREATER_THAN 199', 'LESS_THAN 400']],
  ])('%s', (expected, assertions) => {
    expect(expectedStatusAssertions(expected).map((a) => `${a.comparison} ${a.target}`)).toEqual(assertions);
  });
});
