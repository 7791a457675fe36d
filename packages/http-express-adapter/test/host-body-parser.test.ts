// A host app with its own body parser in front of the router, over real HTTP on 127.0.0.1: what the
// host's parser rejects is answered in the API's JSON error body (with `bodyErrors` after the
// router), and what it accepted is held to the router's own limit and content types.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { vigilRouter, type VigilRouterOptions } from '../src/index.js';

const servers: Server[] = [];
const vigils: Vigil[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  for (const v of vigils.splice(0)) await v.close();
});

interface Host {
  vigil: Vigil;
  app: Express;
  creds: Record<string, string>;
}

async function host(): Promise<Host> {
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'b'.repeat(64) });
  vigils.push(vigil);
  const account = await vigil.accounts.ensure();
  const { key } = await vigil.apiKeys.create(account.id, 'k');
  return { vigil, app: express(), creds: { authorization: `Bearer ${key}`, 'x-service-account': account.id } };
}

/** Starts the host app on a port of 127.0.0.1 and returns a client of it (closed after the test). */
async function listen(app: Express) {
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, { method, body, headers: { 'content-type': 'application/json', ...headers } });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', text, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  };
}

/** A browser check of about `kb` KB: a script and dependencies of up to 100,000 characters each. */
function browserCheck(kb: number): string {
  const script = `await page.goto('https://example.com'); // ${'x'.repeat(90_000)}`;
  const dependencies = [];
  for (let left = kb * 1024 - script.length; left > 0; left -= 100_000) {
    dependencies.push({ path: `lib/part-${dependencies.length}.js`, content: 'y'.repeat(Math.min(left, 100_000)) });
  }
  return JSON.stringify({ name: 'home page', script, dependencies });
}

/** The host's parser, then the router at /api (with its `bodyErrors` after it, unless `errors: false`). */
function mountBehindParser(h: Host, parser: express.RequestHandler, options: VigilRouterOptions = {}, errors = true): void {
  h.app.use(parser);
  const api = vigilRouter(h.vigil, options);
  if (errors) h.app.use('/api', api, api.bodyErrors);
  else h.app.use('/api', api);
}

describe("a host's body parser in front of the router", () => {
  it("answers a body over the host parser's limit with the API's JSON 413, saying which limit applied and how to fix it", async () => {
    const h = await host();
    mountBehindParser(h, express.json());
    const call = await listen(h.app);
    const body = browserCheck(200);
    expect(body.length).toBeGreaterThan(200 * 1024);

    const res = await call('POST', '/api/v1/checks/browser', body, h.creds);
    expect(res.status).toBe(413);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: expect.any(String) });
    expect(res.body.message).toContain('its limit is 102400 bytes, the API\'s 1048576');
    expect(res.body.message).toMatch(/mount the API's router before that parser, or raise its limit/);

    // Over the router's own limit too: the answer is that limit.
    const huge = await call('POST', '/api/v1/checks/browser', browserCheck(1100), h.creds);
    expect(huge.status).toBe(413);
    expect(huge.body.message).toMatch(/^Request body is too large: \d+ bytes, over the limit of 1048576 bytes$/);
    expect(await h.vigil.storage.checks.listAll((await h.vigil.accounts.ensure()).id)).toEqual([]);
  });

  it('takes the same 200 KB body when the router is mounted before the host parser, which keeps its limit for the host', async () => {
    const h = await host();
    h.app.use('/api', vigilRouter(h.vigil));
    h.app.use(express.json());
    h.app.post('/echo', (req, res) => {
      res.json({ size: JSON.stringify(req.body).length });
    });
    const call = await listen(h.app);
    const created = await call('POST', '/api/v1/checks/browser', browserCheck(200), h.creds);
    expect(created.status).toBe(201);
    expect(created.body.dependencies).toHaveLength(2);
    const hostBig = await call('POST', '/echo', browserCheck(200));
    expect(hostBig.status).toBe(413);
    expect(hostBig.type).toMatch(/^text\/html/);

    // The same host with the parser first answers the API's JSON, not the host's page.
    const first = await host();
    mountBehindParser(first, express.json());
    const other = await listen(first.app);
    const res = await other('POST', '/api/v1/checks/browser', browserCheck(200), first.creds);
    expect([res.status, res.type.split(';')[0]]).toEqual([413, 'application/json']);
  });

  it("answers malformed JSON the host's parser rejected with the API's JSON 400", async () => {
    const h = await host();
    mountBehindParser(h, express.json());
    const call = await listen(h.app);
    const res = await call('POST', '/api/v1/checks/tcp', '{"name": ', h.creds);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Malformed JSON in request body' });
    const charset = await call('POST', '/api/v1/checks/tcp', '{}', { ...h.creds, 'content-type': 'application/json; charset=latin-9' });
    expect(charset.status).toBe(415);
    expect(charset.body).toMatchObject({ statusCode: 415, message: 'Unsupported charset' });
  });

  it("uses a body the host parser read, under the router's own limit and content types", async () => {
    const h = await host();
    mountBehindParser(h, express.json({ limit: '5mb' }), {}, false);
    const call = await listen(h.app);

    const created = await call('POST', '/api/v1/checks/browser', browserCheck(200), h.creds);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ checkType: 'BROWSER', name: 'home page' });

    // Within the host's 5 MB, over the router's 1 MB.
    const big = await call('POST', '/api/v1/checks/browser', browserCheck(2048), h.creds);
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ statusCode: 413, error: 'Payload Too Large', message: expect.stringMatching(/over the limit of 1048576 bytes$/) });

    // The router's own `bodyLimit` below the host's 100 KB.
    const tight = await host();
    mountBehindParser(tight, express.json(), { bodyLimit: '10kb' }, false);
    const tightCall = await listen(tight.app);
    const over = await tightCall('POST', '/api/v1/checks/tcp', JSON.stringify({ name: 'x'.repeat(20_000), request: { hostname: 'db', port: 1 } }), tight.creds);
    expect(over.status).toBe(413);
    expect(over.body.message).toMatch(/over the limit of 10240 bytes$/);
  });

  it('refuses a form body a host parser in front read, as it does without one', async () => {
    const h = await host();
    mountBehindParser(h, express.urlencoded({ extended: false }), {}, false);
    const call = await listen(h.app);
    const form = await call('POST', '/api/v1/checks/tcp', 'name=db&request=x', { ...h.creds, 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(400);
    expect(form.body).toMatchObject({ statusCode: 400, message: 'must be a JSON object sent with Content-Type: application/json' });
  });

  it('with fallthrough, answers parser failures on API paths and leaves the host its own', async () => {
    const h = await host();
    h.app.use(express.json());
    const api = vigilRouter(h.vigil, { fallthrough: true });
    h.app.use(api, api.bodyErrors);
    h.app.post('/echo', (req, res) => {
      res.json(req.body);
    });
    h.app.use(((_err, _req, res, _next) => {
      res.status(418).type('text').send('host error page');
    }) as express.ErrorRequestHandler);
    const call = await listen(h.app);
    const onApi = await call('POST', '/v1/checks/tcp', '{bad', h.creds);
    expect(onApi.status).toBe(400);
    expect(onApi.body).toMatchObject({ statusCode: 400, message: 'Malformed JSON in request body' });
    const onHost = await call('POST', '/echo', '{bad');
    expect([onHost.status, onHost.text]).toEqual([418, 'host error page']);
  });
});
