// The interactive API reference the router serves under /docs/: its page, init script and
// swagger-ui-dist's files, their headers (CSP, types, caching), the redirect from /docs, the mount
// path, and `docs: false`.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { metricsHandler, prometheusMetrics, vigilRouter, type VigilRouterOptions } from '../src/index.js';

const vigil = createVigil({ storage: memoryStorage(), secretKey: 'd'.repeat(64), metrics: prometheusMetrics() });
afterAll(() => vigil.close());

const DIST = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const VERSION = (JSON.parse(readFileSync(join(DIST, 'package.json'), 'utf8')) as { version: string }).version;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
];

const hostWith = (mount: string, options: VigilRouterOptions = {}) => express().use(mount, vigilRouter(vigil, options));

function expectSecurityHeaders(res: request.Response): void {
  expect(res.headers['content-security-policy']!.split('; ')).toEqual(CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

/** The URLs of the page's script, stylesheet and icon elements, as written. */
const pageUrls = (html: string) => [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);

describe('API reference at /docs', () => {
  const app = hostWith('/api');

  it('serves its own page with no key, with the strict CSP and no-cache', async () => {
    const res = await request(app).get('/api/docs/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expectSecurityHeaders(res);
    // Every script is a file of the host (no inline script, no inline style), at a relative URL.
    expect(pageUrls(res.text)).toEqual([
      `swagger-ui.css?v=${VERSION}`, `favicon-32x32.png?v=${VERSION}`, `favicon-16x16.png?v=${VERSION}`,
      `swagger-ui-bundle.js?v=${VERSION}`, `init.js?v=${VERSION}`,
    ]);
    expect(res.text.match(/<script\b[^>]*>/g)).toEqual([`<script src="swagger-ui-bundle.js?v=${VERSION}">`, `<script src="init.js?v=${VERSION}">`]);
    expect(res.text).not.toMatch(/<script>|<style|\bstyle=|\bon\w+=/);
    expect(res.text).not.toMatch(/https?:\/\//);
    // HEAD answers the same headers.
    const head = await request(app).head('/api/docs/').expect(200);
    expect(head.headers['content-security-policy']).toBe(res.headers['content-security-policy']);
  });

  it('redirects /docs to docs/ (relative), keeping no query', async () => {
    for (const path of ['/api/docs', '/api/docs?x=1']) {
      const res = await request(app).get(path).expect(301);
      expect(res.headers.location).toBe('docs/');
      expect(new URL(res.headers.location!, `http://127.0.0.1${path}`).pathname).toBe('/api/docs/');
    }
  });

  it('serves its init script, which starts Swagger UI on ../openapi.json with no validator badge', async () => {
    const res = await request(app).get(`/api/docs/init.js?v=${VERSION}`).expect(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expectSecurityHeaders(res);
    expect(res.text).toContain("new URL('../openapi.json', window.location.href)");
    expect(res.text).toContain('validatorUrl: null');
    expect(res.text).toContain("dom_id: '#swagger-ui'");
  });

  it.each([
    ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
    ['swagger-ui.css', 'text/css; charset=utf-8'],
    ['favicon-32x32.png', 'image/png'],
    ['favicon-16x16.png', 'image/png'],
    ['swagger-ui-bundle.js.map', 'application/json; charset=utf-8'],
  ])('serves swagger-ui-dist/%s from the host as %s', async (name, type) => {
    const versioned = await request(app).get(`/api/docs/${name}?v=${VERSION}`).buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    }).expect(200);
    expect(versioned.headers['content-type']).toBe(type);
    expect((versioned.body as Buffer).equals(readFileSync(join(DIST, name)))).toBe(true);
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(versioned.headers['x-content-type-options']).toBe('nosniff');
    // By another URL than this version's, it is revalidated, and an unchanged file answers 304.
    const plain = await request(app).head(`/api/docs/${name}`).expect(200);
    expect(plain.headers['cache-control']).toBe('no-cache');
    expect(Number(plain.headers['content-length'])).toBe(statSync(join(DIST, name)).size);
    await request(app).get(`/api/docs/${name}`).set('If-None-Match', plain.headers.etag!).expect(304);
  });

  it("answers the API's 404 for any other path under /docs/, swagger-ui-dist's own page and initializer included", async () => {
    const unknown = await request(app).get('/api/no-such-path').expect(404);
    for (const path of ['/api/docs/index.html', '/api/docs/swagger-initializer.js', '/api/docs/package.json', '/api/docs/swagger-ui.js',
      '/api/docs/init.js/', '/api/docs/%2e%2e/package.json', '/api/docs/../docs/x', '/api/docsx']) {
      const res = await request(app).get(path).expect(404);
      expect(res.headers['content-type']).toBe(unknown.headers['content-type']);
      expect(Object.keys(res.body).sort()).toEqual(Object.keys(unknown.body).sort());
      expect(res.body.statusCode).toBe(404);
    }
  });

  it('is off with docs: false, and with openapi: false, answering 404 like any unknown path', async () => {
    for (const options of [{ docs: false }, { openapi: false }, { openapi: false, docs: true }] as VigilRouterOptions[]) {
      const off = hostWith('/api', options);
      for (const path of ['/api/docs', '/api/docs/', '/api/docs/init.js', `/api/docs/swagger-ui-bundle.js?v=${VERSION}`]) {
        const res = await request(off).get(path).expect(404);
        expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: `No route GET ${path.split('?')[0]}` });
        expect(res.headers['content-security-policy']).toBeUndefined();
      }
    }
    await request(hostWith('/api', { docs: false })).get('/api/openapi.json').expect(200);
  });

  it.each(['/api', '/tenants/acme/monitoring'])('follows the mount path %s: the page, and the document its script loads, naming that server', async (mount) => {
    const host = hostWith(mount);
    const redirect = await request(host).get(`${mount}/docs`).expect(301);
    const pageUrl = new URL(redirect.headers.location!, `http://127.0.0.1${mount}/docs`);
    expect(pageUrl.pathname).toBe(`${mount}/docs/`);
    const page = await request(host).get(pageUrl.pathname).expect(200);
    for (const url of pageUrls(page.text)) await request(host).get(new URL(url, pageUrl).pathname).expect(200);
    // What init.js asks for, resolved as the browser does against the page.
    const documentUrl = new URL('../openapi.json', pageUrl);
    expect(documentUrl.pathname).toBe(`${mount}/openapi.json`);
    const doc = await request(host).get(documentUrl.pathname).expect(200);
    expect(doc.body.servers).toEqual([{ url: mount }]);
    // Authorize in the page offers what the API checks: the key as a bearer token and the account header.
    expect(doc.body.components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
      serviceAccount: { type: 'apiKey', in: 'header', name: 'x-service-account' },
    });
    expect(doc.body.security).toEqual([{ bearerAuth: [], serviceAccount: [] }]);
  });

  it("is served at /docs/ for a router at the host's root with fallthrough, leaving the host's other paths to it", async () => {
    const host = express().use(vigilRouter(vigil, { fallthrough: true }));
    host.get('/docs-of-the-host', (_req, res) => {
      res.send('host');
    });
    expect((await request(host).get('/docs').expect(301)).headers.location).toBe('docs/');
    await request(host).get('/docs/').expect(200).expect('content-type', /text\/html/);
    expect((await request(host).get('/docs-of-the-host').expect(200)).text).toBe('host');
  });

  it('counts its requests by route template, and other paths under /docs/ as unmatched', async () => {
    const host = hostWith('/api');
    host.get('/metrics', metricsHandler(vigil));
    const before = (await request(host).get('/metrics')).text;
    await request(host).get('/api/docs/').expect(200);
    await request(host).get('/api/docs/init.js').expect(200);
    await request(host).get('/api/docs/nothing-here.js').expect(404);
    const text = (await request(host).get('/metrics')).text;
    const count = (t: string, labels: string) => Number(t.split('\n').find((l) => l.startsWith(`vigil_api_requests_total{${labels}} `))?.split(' ').pop() ?? 0);
    expect(count(text, 'method="GET",route="/docs/",status="200"') - count(before, 'method="GET",route="/docs/",status="200"')).toBe(1);
    expect(count(text, 'method="GET",route="/docs/init.js",status="200"') - count(before, 'method="GET",route="/docs/init.js",status="200"')).toBe(1);
    expect(count(text, 'method="GET",route="unmatched",status="404"') - count(before, 'method="GET",route="unmatched",status="404"')).toBe(1);
    expect(text).not.toContain('nothing-here');
  });
});
