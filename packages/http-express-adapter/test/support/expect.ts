import type request from 'supertest';
import { expect } from 'vitest';
import type { ApiClient, ApiHarness } from './harness.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A 400 in the DECISIONS shape whose validation names exactly `keys` (in any order). */
export function expect400(res: request.Response, source: 'payload' | 'query' | 'params', ...keys: string[]): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({
    statusCode: 400,
    error: 'Bad Request',
    message: expect.any(String),
    validation: { source, keys: expect.any(Array) },
  });
  expect([...res.body.validation.keys].sort(), JSON.stringify(res.body)).toEqual([...keys].sort());
}

export function expectError(res: request.Response, status: number, error: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ statusCode: status, error, message: expect.any(String) });
}

export const expect404 = (res: request.Response) => expectError(res, 404, 'Not Found');
export const expect409 = (res: request.Response) => expectError(res, 409, 'Conflict');

export function send(test: request.Test, body: unknown): request.Test {
  return body === undefined ? test : test.send(body as object);
}

/** The request of a client, with a JSON body for the writing methods. */
export function call(c: ApiClient, method: Method, path: string, body?: unknown): request.Test {
  if (method === 'get' || method === 'delete') return c[method](path);
  return c[method](path, body);
}

/** A route as the guard helpers take it: method, path and an optional body. */
export type RouteCall = [Method, string, unknown?];

/** 401 without credentials and 403 with a's key under b's account header, for every route given. */
export async function expectAuthGuards(h: ApiHarness, routes: RouteCall[]): Promise<void> {
  for (const [method, path, body] of routes) {
    const anonymous = await send(h.a.anonymous(method, path), body);
    expect(anonymous.status, `${method.toUpperCase()} ${path} anonymous`).toBe(401);
    expect(anonymous.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    const foreign = await send(h.a.asAccount(h.b.accountId, method, path), body);
    expect(foreign.status, `${method.toUpperCase()} ${path} with b's header`).toBe(403);
    expect(foreign.body).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String) });
  }
}

/** 404 (spec error shape) for b asking for, changing or deleting a's ids, on every route given. */
export async function expectHiddenFromB(h: ApiHarness, routes: RouteCall[]): Promise<void> {
  for (const [method, path, body] of routes) {
    const res = await call(h.b, method, path, body);
    expect(res.status, `${method.toUpperCase()} ${path} by b: ${JSON.stringify(res.body)}`).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: expect.any(String) });
  }
}
