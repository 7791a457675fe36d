/**
 * A check type a plugin adds (`defineCheckType`) gets the same routes a built-in type has, from
 * the router of a Vigil that registered it, and its place in the OpenAPI document.
 */
import * as v from 'valibot';
import express from 'express';
import request from 'supertest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, defineCheckType, integerBetween, modelObject, NonEmptyStringSchema, type CheckTypeDefinition, type Vigil } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import { openApiDocument, vigilRouter } from '../src/index.js';
import { expect400, expect404 } from './support/expect.js';

const echo = defineCheckType({
  checkType: 'ECHO',
  entries: { request: modelObject({ hostname: NonEmptyStringSchema, pings: v.optional(integerBetween(1, 10), 3) }) },
});

let vigil: Vigil | undefined;
afterEach(async () => {
  await vigil?.close();
  vigil = undefined;
});

async function host(checkTypes: CheckTypeDefinition[] = [echo]) {
  const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
  await storage.migrate();
  vigil = createVigil({ storage, secretKey: 'f'.repeat(64), checkTypes });
  const account = await vigil.accounts.ensure();
  const { key } = await vigil.apiKeys.create(account.id, { name: 'test' });
  const app = express().use('/api', vigilRouter(vigil));
  const auth = (t: request.Test) => t.set('Authorization', `Bearer ${key}`).set('x-service-account', account.id);
  return {
    get: (path: string) => auth(request(app).get(`/api${path}`)),
    post: (path: string, body: object) => auth(request(app).post(`/api${path}`)).send(body),
    put: (path: string, body: object) => auth(request(app).put(`/api${path}`)).send(body),
    delete: (path: string) => auth(request(app).delete(`/api${path}`)),
  };
}

describe('routes of a plugin\'s check type', () => {
  it('POST /v1/checks/echo, GET|PUT|DELETE /v1/checks/echo/{id} behave as a built-in type\'s routes', async () => {
    const api = await host();
    const created = await api.post('/v1/checks/echo', { name: 'gateway', request: { hostname: '10.0.0.1' } }).expect(201);
    expect(created.body).toMatchObject({ checkType: 'ECHO', name: 'gateway', request: { hostname: '10.0.0.1', pings: 3 }, frequency: 10 });
    const id = created.body.id as string;
    expect((await api.get(`/v1/checks/echo/${id}`).expect(200)).body).toEqual(created.body);
    expect((await api.get(`/v1/checks/${id}`).expect(200)).body).toEqual(created.body);
    expect((await api.put(`/v1/checks/echo/${id}`, { request: { hostname: '10.0.0.2' } }).expect(200)).body.request).toEqual({ hostname: '10.0.0.2', pings: 3 });

    expect400(await api.post('/v1/checks/echo', { name: 'x', request: { hostname: 'h', pings: 0 } }), 'payload', 'request.pings');
    expect400(await api.put(`/v1/checks/echo/${id}`, { request: {} }), 'payload', 'request.hostname');
    // A typed route reaches only checks of its type.
    const tcp = await api.post('/v1/checks/tcp', { name: 'db', request: { hostname: '10.0.0.3', port: 5432 } }).expect(201);
    expect404(await api.get(`/v1/checks/echo/${tcp.body.id}`));
    expect404(await api.delete(`/v1/checks/echo/${tcp.body.id}`));

    await api.delete(`/v1/checks/echo/${id}`).expect(204);
    expect404(await api.get(`/v1/checks/${id}`));
  });

  it('AGENTIC, in the spec\'s enum but not built in, answers a 400 saying no runner serves it and how a plugin adds one', async () => {
    const api = await host();
    const res = await api.post('/v1/checks/agentic', { name: 'triage agent' });
    expect400(res, 'params', 'checkType');
    expect(res.body.message).toContain('no runner for them is installed');
    expect(res.body.message).toContain("defineCheckType({ checkType: 'AGENTIC'");
    expect((await api.get('/v1/checks')).body).toEqual([]);
    await vigil?.close();
    // A plugin that serves AGENTIC takes the route over.
    const agentic = defineCheckType({ checkType: 'AGENTIC', entries: { request: modelObject({ goal: NonEmptyStringSchema }) } });
    const served = await host([agentic]);
    const made = await served.post('/v1/checks/agentic', { name: 'triage agent', request: { goal: 'check the checkout' } }).expect(201);
    expect(made.body).toMatchObject({ checkType: 'AGENTIC', request: { goal: 'check the checkout' } });
  });

  it('a router without the type answers 404 for its paths', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: ':memory:' });
    await storage.migrate();
    vigil = createVigil({ storage, secretKey: 'f'.repeat(64) });
    const account = await vigil.accounts.ensure();
    const { key } = await vigil.apiKeys.create(account.id, { name: 'test' });
    const app = express().use('/api', vigilRouter(vigil));
    const res = await request(app).post('/api/v1/checks/echo').set('Authorization', `Bearer ${key}`).set('x-service-account', account.id).send({ name: 'x' });
    expect404(res);
  });

  it('are in the OpenAPI document the router serves, which stays valid', async () => {
    const api = await host();
    const doc = (await api.get('/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths['/v1/checks/echo'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/checks/echo/{id}']).sort()).toEqual(['delete', 'get', 'put']);
    expect(doc.paths['/v1/checks/echo'].post).toMatchObject({ operationId: 'createEchoCheck', summary: 'Create an ECHO check' });
    expect(doc.components.schemas.EchoCheckCreate.required).toEqual(expect.arrayContaining(['name', 'request']));
    const validator = new Validator();
    expect((await validator.validate(doc)).valid).toBe(true);
    expect(openApiDocument().paths).not.toHaveProperty('/v1/checks/echo');
  });
});
