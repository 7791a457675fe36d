// The OpenAPI document's `servers` entry is the path the host mounted the router on, asked over
// real HTTP on 127.0.0.1, so a client generated from it calls the right URLs.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { openApiDocument, vigilRouter } from '../src/index.js';

const vigil = createVigil({ storage: memoryStorage(), secretKey: 'c'.repeat(64) });
const servers: Server[] = [];

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  await vigil.close();
});

async function getJson(app: Express, path: string): Promise<{ status: number; body: any }> {
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await once(server, 'listening');
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
  return { status: res.status, body: await res.json() };
}

describe('OpenAPI servers', () => {
  it.each(['/api', '/tenants/acme/monitoring'])('names the mount path %s as the server', async (mount) => {
    const app = express();
    app.use(mount, vigilRouter(vigil));
    const { status, body } = await getJson(app, `${mount}/openapi.json`);
    expect(status).toBe(200);
    expect(body.servers).toEqual([{ url: mount }]);
    expect(Object.keys(body).slice(0, 3)).toEqual(['openapi', 'info', 'servers']);
  });

  it('follows the router when one router object is mounted on two paths, and under a sub-app', async () => {
    const router = vigilRouter(vigil);
    const app = express();
    app.use('/one', router);
    app.use('/two', router);
    const sub = express();
    sub.use('/api', router);
    app.use('/team', sub);
    expect((await getJson(app, '/one/openapi.json')).body.servers).toEqual([{ url: '/one' }]);
    expect((await getJson(app, '/two/openapi.json')).body.servers).toEqual([{ url: '/two' }]);
    expect((await getJson(app, '/team/api/openapi.json')).body.servers).toEqual([{ url: '/team/api' }]);
  });

  it("is `/` for a router at the host's root, and the document stays valid OpenAPI 3.1", async () => {
    const app = express().use(vigilRouter(vigil, { fallthrough: true }));
    const { body } = await getJson(app, '/openapi.json');
    expect(body.servers).toEqual([{ url: '/' }]);
    const result = await new Validator().validate(body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is stated by openApiDocument({ serverUrl }) outside a router, and left out without it', async () => {
    const doc = openApiDocument({ serverUrl: 'https://monitor.example.com/api' });
    expect(doc.servers).toEqual([{ url: 'https://monitor.example.com/api' }]);
    expect((await new Validator().validate(doc)).valid).toBe(true);
    expect('servers' in openApiDocument()).toBe(false);
  });
});
