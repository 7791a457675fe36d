import express from 'express';
import request from 'supertest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { openApiDocument, vigilRouter } from '../src/index.js';

type Doc = { openapi: string; paths: Record<string, Record<string, { operationId: string; parameters?: { name: string; in: string }[]; requestBody?: unknown }>>; components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> } };

const vigil = createVigil({ storage: memoryStorage(), secretKey: 'e'.repeat(64) });

/** Method and path of every route the router mounts, in OpenAPI path syntax. */
function mountedRoutes(router: express.Router): string[] {
  const out: string[] = [];
  for (const layer of router.stack as { route?: { path: string; methods: Record<string, boolean> } }[]) {
    if (!layer.route) continue;
    for (const method of Object.keys(layer.route.methods)) out.push(`${method} ${layer.route.path.replace(/:(\w+)/g, '{$1}')}`);
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is served without credentials and is a valid OpenAPI 3.1 document', async () => {
    const app = express().use('/api', vigilRouter(vigil));
    const res = await request(app).get('/api/openapi.json').expect(200);
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('covers exactly the routes the router mounts, with unique operation ids and every path parameter', () => {
    const doc = openApiDocument() as unknown as Doc;
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    const mounted = mountedRoutes(vigilRouter(vigil));
    expect([...new Set(mounted)].sort()).toEqual([...new Set(documented)].sort());
    expect(mounted.length).toBeGreaterThan(80);
    const ops = Object.values(doc.paths).flatMap((o) => Object.values(o));
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
    for (const [path, byMethod] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const op of Object.values(byMethod)) {
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        expect(declared.sort(), `${op.operationId} path parameters`).toEqual([...names].sort());
      }
    }
  });

  it('states the spec\'s required fields and query parameters from the same schemas that validate requests', () => {
    const doc = openApiDocument() as unknown as Doc;
    expect(doc.components.schemas.TcpCheckCreate!.required).toEqual(expect.arrayContaining(['name', 'request']));
    expect(doc.components.schemas.MaintenanceWindowUpdate!.required).toEqual(expect.arrayContaining(['name', 'startsAt', 'endsAt', 'repeatUnit']));
    const analytics = doc.paths['/v1/analytics/tcp-checks/{id}']!.get!;
    const metrics = analytics.parameters!.find((p) => p.name === 'metrics') as { required: boolean } | undefined;
    expect(metrics?.required).toBe(true);
    const createTcp = doc.paths['/v1/checks/tcp']!.post!;
    expect((createTcp.parameters ?? []).map((p) => p.name)).toContain('autoAssignAlerts');
    expect(createTcp.requestBody).toBeDefined();
  });

  it('says what a compact result answers: the same shape, its details null', () => {
    const doc = openApiDocument() as unknown as { paths: Record<string, { get?: { description?: string } }> };
    for (const path of ['/v1/check-results/{checkId}', '/v1/check-results/{checkId}/{checkResultId}']) {
      expect(doc.paths[path]!.get!.description).toMatch(/compact.*`details` and `errorMessage` null/);
    }
  });

  it('documents the API check type like the others: its routes, and its request under the spec\'s field names', () => {
    const doc = openApiDocument() as unknown as Doc;
    for (const type of ['tcp', 'api', 'browser', 'heartbeat']) {
      expect(Object.keys(doc.paths[`/v1/checks/${type}`] ?? {}), type).toEqual(['post']);
      expect(Object.keys(doc.paths[`/v1/checks/${type}/{id}`] ?? {}).sort(), type).toEqual(['delete', 'get', 'put']);
    }
    expect(doc.paths['/v1/checks/api']!.post!.operationId).toBe('createApiCheck');
    expect(doc.components.schemas.ApiCheckCreate!.required).toEqual(expect.arrayContaining(['name', 'request']));
    const request = doc.components.schemas.ApiCheckCreate!.properties!.request as { $ref?: string; required?: string[]; properties?: Record<string, unknown> };
    expect(request.required).toEqual(['url']);
    expect(Object.keys(request.properties ?? {}).sort()).toEqual([
      'assertions', 'basicAuth', 'body', 'bodyType', 'followRedirects', 'headers', 'ipFamily', 'method', 'queryParameters', 'skipSSL', 'url',
    ]);
    expect(Object.keys(doc.components.schemas.ApiCheck!.properties ?? {})).toEqual(expect.arrayContaining(['checkType', 'degradedResponseTime', 'maxResponseTime', 'frequencyOffset']));
  });
});
