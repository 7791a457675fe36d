import { describe, expect, it } from 'vitest';
import { multiStepRunner } from '../src/index.js';
import { multiStepJob, stepsOf } from './multistep-support.js';
import { json, localServers, type Handler } from './support.js';

// `request` of a multi-step script against real local servers: what goes on the wire, what the
// response object answers, redirects, time and size limits.

describe('multi-step scripts: request', () => {
  const serve = localServers();
  const runner = multiStepRunner({ maxResponseBytes: 64 * 1024 });
  const run = (script: string) => runner.run(multiStepJob(script), new AbortController().signal);
  /** The script's console lines (what it read of the responses). */
  const printed = (result: Awaited<ReturnType<typeof run>>) => (result.details!.logs as { text: string }[]).map((l) => l.text);
  const echo: Handler = (req, res, body) => json(201, { method: req.method, url: req.url, headers: req.headers, body }, { 'x-trace': 'abc', 'set-cookie': 'sid=cookie-value-123456; Path=/' })(req, res, body);

  it('sends methods, headers, params and data as Playwright does, and answers with its response methods', async () => {
    const api = await serve(echo);
    const result = await run(`
      const base = '${api.origin}';
      const json = await request.post(base + '/items?a=1', { data: { name: 'book', tags: ['x'] }, params: { b: 2, c: 'x y' }, headers: { 'X-Custom': 'yes' } });
      console.log(JSON.stringify([json.status(), json.statusText(), json.ok(), json.url(), json.headers()['x-trace'], json.headers()['content-type']]));
      const seen = await json.json();
      console.log(JSON.stringify([seen.method, seen.url, seen.body, seen.headers['content-type'], seen.headers['x-custom'], seen.headers['user-agent']]));
      const text = await request.put(base + '/raw', { data: 'plain text', headers: { 'content-type': 'text/plain' } });
      console.log(JSON.stringify((await text.json()).body), (await text.body()).length > 0, typeof (await text.text()));
      for (const method of ['patch', 'delete']) console.log((await (await request[method](base + '/m')).json()).method);
      console.log((await (await request.fetch(base + '/f', { method: 'OPTIONS' })).json()).method);
      const head = await request.head(base + '/h');
      console.log(head.status(), JSON.stringify(await head.text()));
    `);
    expect(result).toMatchObject({ hasFailures: false, errorMessage: null });
    expect(printed(result)).toEqual([
      JSON.stringify([201, 'Created', true, `${api.origin}/items?a=1&b=2&c=x+y`, 'abc', 'application/json; charset=utf-8']),
      JSON.stringify(['POST', '/items?a=1&b=2&c=x+y', '{"name":"book","tags":["x"]}', 'application/json', 'yes', 'Vigil-Multi-Step-Check/0.1']),
      '"plain text" true string',
      'PATCH',
      'DELETE',
      'OPTIONS',
      '201 ""',
    ]);
    expect(result.details!.requests).toHaveLength(6);
    // The cookie the server set is a credential of the run: scrubbed from what it recorded.
    expect(JSON.stringify(result)).not.toContain('cookie-value-123456');
  });

  it('follows redirects (303 turns a POST into a GET, credentials stay with their origin), or not with maxRedirects 0', async () => {
    const other = await serve(echo);
    const api = await serve((req, res, body) => {
      if (req.url === '/old') return json(303, {}, { location: '/new' })(req, res, body);
      if (req.url === '/away') return json(302, {}, { location: `${other.origin}/there` })(req, res, body);
      if (req.url === '/loop') return json(302, {}, { location: '/loop' })(req, res, body);
      return echo(req, res, body);
    });
    const result = await run(`
      const moved = await request.post('${api.origin}/old', { data: { a: 1 } });
      const seen = await moved.json();
      console.log(moved.url(), seen.method, JSON.stringify(seen.body));
      const away = await (await request.get('${api.origin}/away', { headers: { authorization: 'Bearer t-123456' } })).json();
      console.log(away.url, String(away.headers.authorization));
      const kept = await request.get('${api.origin}/old', { maxRedirects: 0 });
      console.log(kept.status(), kept.headers().location);
      await request.get('${api.origin}/loop', { maxRedirects: 3 });
    `);
    expect(printed(result)).toEqual([`${api.origin}/new GET ""`, '/there undefined', '303 /new']);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe(`GET ${api.origin}/loop: more than 3 redirects (maxRedirects), the last to ${api.origin}/loop (line 9)`);
  });

  it('a request past its timeout fails with TIMEOUT; one the script catches does not fail the run', async () => {
    const slow = await serve((req, res, body) => setTimeout(() => json(200, {})(req, res, body), 1_000));
    const timedOut = await run(`await step('Slow', () => request.get('${slow.origin}/', { timeout: 200 }));`);
    expect(timedOut).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT', errorMessage: `Step "Slow": GET ${slow.origin}/: no complete response within its timeout of 200 ms (line 1)` });
    expect(stepsOf(timedOut.details)[0]!.requests[0]).toMatchObject({ status: null, error: `GET ${slow.origin}/: no complete response within its timeout of 200 ms` });

    const caught = await run(`await step('Slow', async () => {
      const outcome = await request.get('${slow.origin}/', { timeout: 200 }).then(() => 'answered', (err) => err.code);
      expect(outcome).toBe('ETIMEDOUT');
    });`);
    expect(caught).toMatchObject({ hasFailures: false, errorMessage: null });
  });

  it("a body larger than the runner's maxResponseBytes fails the request with a clear error", async () => {
    const big = 'x'.repeat(100 * 1024);
    const api = await serve((req, res) => {
      // Chunked, so that the size is known only while reading.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(big.slice(0, 50 * 1024));
      res.end(big.slice(50 * 1024));
    });
    const result = await run(`await step('Big', () => request.get('${api.origin}/big'));`);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'OTHER' });
    expect(result.errorMessage).toBe(`Step "Big": GET ${api.origin}/big: the response body is larger than 65536 bytes, the most a multi-step check reads of one response (the runner's maxResponseBytes) (line 1)`);
    expect(stepsOf(result.details)[0]!.requests[0]).toMatchObject({ status: 200 });
  });

  it('bounds what it records: 50 steps, 100 requests, 200 assertions, and phases for the first 20 steps', async () => {
    const api = await serve(json(200, {}));
    const result = await run(`
      for (let i = 0; i < 60; i++) await step('s' + i, async () => { expect(i).toBeGreaterThanOrEqual(0); expect(i).toBeLessThan(60); expect(i).toBe(i); expect(i).not.toBe(-1); });
      for (let i = 0; i < 105; i++) await request.get('${api.origin}/' + i);
    `);
    expect(result.hasFailures).toBe(false);
    const steps = stepsOf(result.details);
    expect(steps).toHaveLength(50);
    expect(steps.flatMap((s) => s.assertions)).toHaveLength(200);
    expect(steps[49]!.assertions).toHaveLength(4);
    expect(steps[0]!.assertions.map((a) => a.matcher)).toEqual(['toBeGreaterThanOrEqual', 'toBeLessThan', 'toBe', 'not.toBe']);
    expect(result.details!.requests).toHaveLength(100);
    expect(result.details!.notRecorded).toEqual({ steps: 10, requests: 5, assertions: 40 });
    expect(Object.keys(result.phases)).toHaveLength(21);
  });
});
