/**
 * A multi-step check end to end, as a host runs it: made through the public HTTP API on SQLite
 * and PostgreSQL with the multi-step runner registered, scheduled against a shop API on 127.0.0.1
 * (log in, read the profile with the token, list the orders); its steps, status and analytics
 * read back; a profile that refuses the token alerts a webhook, and the recovery follows; a test
 * session of a project groups the failure under the project.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { alertTransports } from '@vigil/alert-channels';
import { multiStepRunner } from '@vigil/runner-http';
import { advanceUntil, engineTrouble, startedProcess, STORES, webhookServer } from './support/engine-stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The shop: POST /login answers a token; /profile and /orders want it as a Bearer token. */
async function shop(state: { profileBroken: boolean }) {
  const token = `tok-${Math.random().toString(36).slice(2)}-secret`;
  const server = http.createServer((req, res) => {
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const authorized = req.headers.authorization === `Bearer ${token}`;
    if (req.method === 'POST' && req.url === '/login') return void req.resume().on('end', () => json(200, { token }));
    if (req.url === '/profile') return json(authorized && !state.profileBroken ? 200 : 401, authorized ? { name: 'Ada' } : { error: 'no token' });
    if (req.url === '/orders') return json(authorized ? 200 : 401, [{ id: 1 }, { id: 2 }]);
    json(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, token, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const SCRIPT = `
const base = process.env.SHOP_URL;
const token = await step('Log in', async () => {
  const res = await request.post(base + '/login', { data: { user: 'ada', password: process.env.SHOP_PASSWORD } });
  expect(res.status()).toBe(200);
  return (await res.json()).token;
});
await step('Read the profile', async () => {
  const res = await request.get(base + '/profile', { headers: { Authorization: 'Bearer ' + token } });
  expect(res.status()).toBe(200);
});
await step('List the orders', async () => {
  const res = await request.get(base + '/orders', { headers: { Authorization: 'Bearer ' + token } });
  expect(await res.json()).toHaveLength(2);
});
`;

describe.each(STORES)('a multi-step check made through the HTTP API (%s)', (kind) => {
  it('runs its steps on schedule, reads back steps, status and analytics, alerts on a failing step and its recovery, and groups a session\'s failure', async () => {
    const state = { profileBroken: false };
    const api$ = await shop(state);
    cleanups.push(api$.close);
    const hook = await webhookServer();
    cleanups.push(() => hook.close());
    const { vigil, lines, clock, api, close } = await startedProcess(kind, 'vigil_multistep_e2e', { runners: [multiStepRunner()], transports: alertTransports() });
    cleanups.push(close);

    const { body: channel } = await api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hook.url } }).expect(201);
    const { body: check } = await api('post', '/v1/checks/multistep', {
      name: 'shop login flow', frequency: 1, doubleCheck: false, script: SCRIPT,
      environmentVariables: [{ key: 'SHOP_URL', value: api$.url }, { key: 'SHOP_PASSWORD', value: 'hunter2-password', secret: true }],
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
    }).expect(201);
    expect(check).toMatchObject({ checkType: 'MULTI_STEP', degradedResponseTime: 10_000, maxResponseTime: 30_000 });
    expect(check.environmentVariables[1]).toEqual({ key: 'SHOP_PASSWORD', value: '********', locked: false, secret: true });
    const refused = await api('post', '/v1/checks/multistep', { name: 'broken', script: 'await step("x", async () => {' }).expect(400);
    expect(refused.body.message).toContain('script');

    const results = async () => (await api('get', `/v1/check-results/${check.id}?limit=100`).expect(200)).body as Record<string, any>[];
    await advanceUntil(clock, [vigil], async () => (await results()).length > 0);
    const [first] = await results();
    expect(first).toMatchObject({ checkType: 'MULTI_STEP', hasFailures: false, runSource: 'SCHEDULER' });
    const { body: full } = await api('get', `/v1/check-results/${check.id}/${first!.id}`).expect(200);
    expect(full.details.steps.map((s: { name: string; status: string }) => `${s.name}: ${s.status}`)).toEqual(['Log in: passed', 'Read the profile: passed', 'List the orders: passed']);
    expect(full.phases).toMatchObject({ total: full.responseTime, step1: expect.any(Number), step2: expect.any(Number), step3: expect.any(Number) });
    // The token the flow carried and the secret variable are in no stored result.
    expect(JSON.stringify(full)).not.toContain(api$.token);
    expect(JSON.stringify(full)).not.toContain('hunter2-password');
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: false });

    state.profileBroken = true;
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 0);
    expect(hook.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_ID])).toEqual([['ALERT_FAILURE', check.id]]);
    const failing = (await results()).find((r) => r.hasFailures === true)!;
    expect(failing.errorMessage).toContain('Read the profile');
    const { body: failed } = await api('get', `/v1/check-results/${check.id}/${failing.id}`).expect(200);
    expect(failed.details.steps.map((s: { status: string }) => s.status)).toEqual(['passed', 'failed', 'not run']);

    // A test session of a project: its failure is grouped under the project too.
    const { body: triggered } = await api('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id] }, projectId: 'shop-web' }).expect(201);
    await advanceUntil(clock, [vigil], async () => {
      const { body } = await api('get', `/v1/check-sessions/${triggered.sessions[0].checkSessionId}`).expect(200);
      return body.status === 'FAILED';
    });
    const { body: projectGroups } = await api('get', '/v1/test-session-error-groups/projects/shop-web').expect(200);
    expect(projectGroups[0].rawErrorMessage).toContain('Read the profile');

    state.profileBroken = false;
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 1);
    expect(hook.bodies.map((b) => b.ALERT_TYPE)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);

    // Analytics of its runs: the total and each step's time, by position.
    const { body: analytics } = await api('get', `/v1/analytics/multistep-checks/${check.id}?metrics=availability,responseTime_max,step2_max`).expect(200);
    const all = (await results()).filter((r) => String(r.startedAt) < analytics.to);
    expect(all.length).toBeGreaterThan(1);
    expect(analytics.series[0].responseTime_max).toBe(Math.max(...all.map((r) => r.responseTime as number)));
    expect(analytics.series[0].step2_max).toBeGreaterThan(0);
    expect(analytics.metadata.step2_max.label).toBe('Step 2 (maximum)');
    await api('get', `/v1/analytics/multistep-checks/${check.id}?metrics=step21`).expect(400);
    expect(engineTrouble(lines)).toEqual([]);
  });
});
