import type { MultiStepCheck, RunJob } from '@vigil/core';
import { multiStepCheckFixture, runJobFixture } from '@vigil/core/testing';
import type { Handler } from './support.js';

// What the multi-step tests share: a job for a script, and a small API with a login flow.

export function multiStepJob(script: string, check: Partial<MultiStepCheck> = {}, job: Partial<Omit<RunJob, 'check'>> = {}): RunJob {
  const base = multiStepCheckFixture();
  return runJobFixture({ ...base, accountId: 'account-1', script, ...check } as MultiStepCheck, { timeoutMs: 20_000, ...job });
}

/** The token the login API hands out: each test reads it from the result to prove it was scrubbed. */
export const TOKEN = 'tok-5f2c9a81e7d34b06';

/**
 * POST /login with `{"user":"ada","password":"..."}` answers `{ token }`; GET /profile and GET
 * /orders want `Authorization: Bearer <token>` and answer 401 without it.
 */
export const loginApi: Handler = (req, res, body) => {
  const send = (status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const authorized = req.headers.authorization === `Bearer ${TOKEN}`;
  if (req.method === 'POST' && req.url === '/login') {
    const { user } = JSON.parse(body || '{}') as { user?: string };
    return user === 'ada' ? send(200, { token: TOKEN }) : send(403, { error: 'who are you' });
  }
  if (req.url === '/profile') return authorized ? send(200, { name: 'Ada', token: TOKEN }) : send(401, { error: 'no token' });
  if (req.url?.startsWith('/orders')) return authorized ? send(200, { orders: [{ id: 1 }, { id: 2 }] }) : send(401, { error: 'no token' });
  return send(404, { error: 'not found' });
};

/** The login flow in three steps, carrying the token from step to step; `base` is the server's origin. */
export const loginFlow = (base: string, { profileStatus = 200 }: { profileStatus?: number } = {}) => `
const base = ${JSON.stringify(base)};
const token = await step('Log in', async () => {
  const res = await request.post(base + '/login', { data: { user: 'ada', password: process.env.PASSWORD } });
  expect(res.status()).toBe(200);
  return (await res.json()).token;
});
await step('Get profile', async () => {
  const res = await request.get(base + '/profile', { headers: { Authorization: 'Bearer ' + token } });
  expect(res.status()).toBe(${profileStatus});
  console.log('profile', await res.text());
});
await step('List orders', async () => {
  const res = await request.get(base + '/orders', { headers: { Authorization: 'Bearer ' + token }, params: { page: 2 } });
  expect((await res.json()).orders).toHaveLength(2);
});
`;

export type Step = { name: string; status: string; durationMs: number; error: string | null; requests: Record<string, unknown>[]; assertions: Record<string, unknown>[] };
export const stepsOf = (details: Record<string, unknown> | null | undefined) => (details?.steps ?? []) as Step[];
