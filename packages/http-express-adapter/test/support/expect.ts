import type request from 'supertest';
import { expect } from 'vitest';
import type { ApiClient } from './harness.js';

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
