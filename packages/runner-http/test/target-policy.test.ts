import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { targetPolicy, type RunResult } from '@vigil/core';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRunner } from '../src/index.js';
import { apiJob, json, localServers, type ApiJobOptions, type Handler } from './support.js';

const serve = localServers();
const runner = httpRunner();
const strict = targetPolicy({ refuseInternalAddresses: true });
const onlyLocal = targetPolicy({ refuseInternalAddresses: true, allow: ['127.0.0.1/32'] });
const run = (job: ApiJobOptions, r = runner) => r.run(apiJob(job), new AbortController().signal);
const redirect = (status: number, location: string): Handler => (_req, res) => {
  res.writeHead(status, { location });
  res.end();
};

function expectRefused(result: RunResult, text: RegExp) {
  expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'OTHER', statusCode: null });
  expect(result.errorMessage).toMatch(text);
  expect(result.details).toMatchObject({ errorCode: 'ETARGETPOLICY' });
}

/** A server on another loopback address (127.0.0.2): internal, and outside an allow list of 127.0.0.1/32. */
const others: http.Server[] = [];
afterEach(async () => {
  for (const s of others.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});
async function serveOn127002(seen: string[]): Promise<string> {
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    res.end('{}');
  });
  others.push(server);
  server.listen(0, '127.0.0.2');
  await once(server, 'listening');
  return `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
}

describe('httpRunner under a target policy', () => {
  it('reaches 127.0.0.1 without a policy, or with one that refuses nothing', async () => {
    const server = await serve(json(200, {}));
    expect((await run({ request: { url: `${server.origin}/` } })).hasFailures).toBe(false);
    expect((await run({ request: { url: `${server.origin}/` }, job: { targetPolicy: targetPolicy() } })).hasFailures).toBe(false);
    expect(server.seen).toHaveLength(2);
  });

  it('refuses 127.0.0.1 when the policy refuses internal addresses, before connecting', async () => {
    const server = await serve(json(200, {}));
    const result = await run({ request: { url: `${server.origin}/` }, job: { targetPolicy: strict } });
    expectRefused(result, /^The target policy refused 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/);
    expect(result.details).toMatchObject({ remoteAddress: null });
    expect(server.seen).toHaveLength(0);
  });

  it('refuses the forms the URL parser reads as 127.0.0.1 (0x7f.1, 2130706433)', async () => {
    const server = await serve(json(200, {}));
    for (const host of ['0x7f.1', '2130706433']) {
      expectRefused(await run({ request: { url: `http://${host}:${server.port}/` }, job: { targetPolicy: strict } }), /refused 127\.0\.0\.1: .*loopback/);
    }
    expect(server.seen).toHaveLength(0);
  });

  it('reaches an address the allow list holds', async () => {
    const server = await serve(json(200, { ok: true }));
    const result = await run({ request: { url: `${server.origin}/` }, job: { targetPolicy: onlyLocal } });
    expect(result).toMatchObject({ hasFailures: false, statusCode: 200, details: { remoteAddress: '127.0.0.1' } });
  });

  it('refuses a name that resolves to 127.0.0.1 (localhost), checking the address looked up', async () => {
    const server = await serve(json(200, {}));
    const result = await run({ request: { url: `http://localhost:${server.port}/` }, job: { targetPolicy: strict } });
    expectRefused(result, /^The target policy refused "localhost" \(127\.0\.0\.1\): 127\.0\.0\.1 is a loopback address/);
    expect(server.seen).toHaveLength(0);
  });

  it('checks what a host-supplied lookup answers', async () => {
    const server = await serve(json(200, {}));
    const viaLookup = httpRunner({ lookup: async () => ({ address: '127.0.0.1', family: 4 }) });
    expectRefused(await run({ request: { url: `http://api.internal:${server.port}/` }, job: { targetPolicy: strict } }, viaLookup), /refused "api\.internal" \(127\.0\.0\.1\)/);
    expect((await run({ request: { url: `http://api.internal:${server.port}/` }, job: { targetPolicy: onlyLocal } }, viaLookup)).hasFailures).toBe(false);
  });

  it('refuses a redirect hop: from an allowed host to a refused one, the redirect is not followed', async () => {
    const seenThere: string[] = [];
    const there = await serveOn127002(seenThere);
    const start = await serve(redirect(302, `${there}/internal`));
    // Without a policy the hop is followed (the second server is real and answers).
    expect((await run({ request: { url: `${start.origin}/go` } })).hasFailures).toBe(false);
    expect(seenThere).toEqual(['/internal']);

    const result = await run({ request: { url: `${start.origin}/go` }, job: { targetPolicy: onlyLocal } });
    expectRefused(result, new RegExp(`^Redirect 1 \\(to ${there.replace(/\./g, '\\.')}/internal\\) was not followed: The target policy refused 127\\.0\\.0\\.2: 127\\.0\\.0\\.2 is a loopback address`));
    expect((result.details as { redirects: unknown }).redirects).toEqual([{ statusCode: 302, url: `${there}/internal` }]);
    expect(start.seen.map((s) => s.url)).toEqual(['/go', '/go']);
    expect(seenThere).toEqual(['/internal']);
  });

  it('refuses a redirect to a name that resolves to an internal address', async () => {
    const final = await serve(json(200, {}));
    const hop = await serve(redirect(301, `http://intranet.test:${final.port}/`));
    // public.test stands for an allowed host; intranet.test resolves to a private address.
    const mapped = httpRunner({ lookup: async (name) => ({ address: name === 'public.test' ? '127.0.0.1' : '10.0.0.7', family: 4 }) });
    const result = await run({ request: { url: `http://public.test:${hop.port}/` }, job: { targetPolicy: onlyLocal } }, mapped);
    expectRefused(result, /^Redirect 1 .* was not followed: The target policy refused "intranet\.test" \(10\.0\.0\.7\): 10\.0\.0\.7 is a private address \(10\.0\.0\.0\/8\)/);
    expect(hop.seen).toHaveLength(1);
    expect(final.seen).toHaveLength(0);
  });
});
