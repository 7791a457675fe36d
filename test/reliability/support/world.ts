/**
 * One account with one of every resource the API serves, made through the API, and the run data
 * the engine makes for it: a failing TCP run in a check session of a test project (result, check
 * status, error group, test-session error group, alert state, outbox row, webhook delivery), and
 * heartbeat pings.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { statusPageSubscriberFixture } from '@vigil/core/testing';
import type request from 'supertest';
import type { Account, Stack } from './stack.js';
import { KINDS, type Ids } from './routes.js';

export interface World {
  account: Account;
  /** Part of every name the account gives its resources. */
  marker: string;
  ids: Ids;
  /** The account's id and the string ids of its resources: none may appear in another account's answers. */
  strings: string[];
  /** The sequences of its check sessions. */
  sequences: string[];
}

export interface Pem {
  cert: string;
  key: string;
}

/** A self-signed certificate and its unencrypted key (openssl, as the other packages' TLS tests do). */
export function selfSigned(cn: string): Pem {
  const out = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', `/CN=${cn}`, '-days', '2', '-keyout', '-', '-out', '-'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const block = (re: RegExp) => `${out.match(re)![0]}\n`;
  return { cert: block(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/), key: block(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/) };
}

/** A port on 127.0.0.1 that nothing listens on: TCP runs to it fail at once. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export function expectStatus(res: request.Response, status: number): any {
  expect(res.status, `${res.status} ${res.text}`).toBe(status);
  return res.body;
}

export interface WorldEnv {
  /** Where the account's alert channels post (a local receiver). */
  hookUrl: string;
  /** A TCP port nothing listens on. */
  port: number;
  pem: Pem;
}

const CHANNEL_CONFIGS = (hookUrl: string, marker: string): { type: string; config: Record<string, unknown> }[] => [
  { type: 'WEBHOOK', config: { name: `${marker} hook`, url: `${hookUrl}/hook`, webhookSecret: `${marker}-signing` } },
  { type: 'EMAIL', config: { address: `${marker}@example.com` } },
  { type: 'SMS', config: { number: '+14155550100', name: `${marker} sms` } },
  { type: 'CALL', config: { number: '+14155550101', name: `${marker} call` } },
  { type: 'CHAT', config: { url: `${hookUrl}/chat`, channel: `#${marker}` } },
  { type: 'CHAT_APP', config: { url: `${hookUrl}/chat-app` } },
  { type: 'PAGING_A', config: { serviceKey: `${marker}-routing-key`, serviceName: `${marker} service` } },
  { type: 'PAGING_B', config: { name: `${marker} ops`, apiKey: `${marker}-api-key`, region: 'EU' } },
];

/**
 * Makes the account's world through the API. The engine must be running: the account's TCP check
 * runs once in a session, fails, raises an alert, and its webhook channel gets it.
 */
export async function seedWorld(stack: Stack, account: Account, env: WorldEnv): Promise<World> {
  const marker = `acct${randomBytes(4).toString('hex')}`;
  const call = (method: 'get' | 'post' | 'put', path: string, body?: unknown) => stack.api(method, path, account.credentials, body);
  const made = async (path: string, body?: unknown) => expectStatus(await call('post', path, body), 201);

  const channels = [];
  for (const c of CHANNEL_CONFIGS(env.hookUrl, marker)) channels.push(await made('/v1/alert-channels', c));
  const webhook = channels[0];
  const snippet = await made('/v1/snippets', { name: `${marker} snippet`, script: 'request.headers["X-Seeded"] = "1";' });
  // Only the webhook is subscribed, here and below: it is the one channel this host delivers to,
  // so no alert stays in the outbox for a later engine to retry.
  const onlyWebhook = '?autoAssignAlerts=false';
  const subs = [{ alertChannelId: webhook.id, activated: true }];
  const group = await made(`/v2/check-groups${onlyWebhook}`, {
    name: `${marker} group`,
    tags: [marker],
    environmentVariables: [{ key: 'PLAIN', value: `${marker}-plain` }, { key: 'TOKEN', value: `${marker}-token`, secret: true }],
    apiCheckDefaults: { url: `http://127.0.0.1:${env.port}/v1` },
    setupSnippetId: snippet.id,
    alertChannelSubscriptions: subs,
  });
  const tcp = await made(`/v1/checks/tcp${onlyWebhook}`, {
    name: `${marker} tcp`, groupId: group.id, frequency: 1440, request: { hostname: '127.0.0.1', port: env.port },
    alertChannelSubscriptions: subs, retryStrategy: null, doubleCheck: false, tags: [marker],
  });
  const api = await made(`/v1/checks/api${onlyWebhook}`, { name: `${marker} api`, groupId: group.id, frequency: 1440, request: { url: '/orders' }, alertChannelSubscriptions: subs });
  const browser = await made(`/v1/checks/browser${onlyWebhook}`, {
    name: `${marker} browser`, activated: false, script: 'await page.goto(process.env.URL)',
    environmentVariables: [{ key: 'URL', value: 'http://127.0.0.1:1/' }, { key: 'SERVICE_SECRET_TOKEN', value: `${marker}-browser-token` }],
  });
  const heartbeat = await made(`/v1/checks/heartbeat${onlyWebhook}`, {
    name: `${marker} heartbeat`, heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' },
  });
  const dashboard = await made('/v1/dashboards', { header: `${marker} dashboard`, customUrl: `${marker}-board`, isPrivate: true, tags: [marker] });
  const keyed = await made(`/v1/dashboards/${dashboard.id}/keys`);
  const window = await made('/v1/maintenance-windows', {
    name: `${marker} window`, startsAt: '2030-01-01T00:00:00.000Z', endsAt: '2030-01-01T01:00:00.000Z', repeatUnit: 'WEEK', tags: [marker],
  });
  const incident = await made('/v1/incidents', {
    name: `${marker} incident`, dashboardId: dashboard.id, incidentUpdates: [{ status: 'INVESTIGATING', description: `${marker} looking` }],
  });
  await made(`/v1/incidents/${incident.id}/updates`, { status: 'IDENTIFIED', description: `${marker} found it` });
  const service = await made('/v1/status-pages/services', { name: `${marker} service` });
  const page = await made('/v1/status-pages', { name: `${marker} page`, url: `${marker}-page`, cards: [{ name: `${marker} card`, serviceIds: [service.id] }] });
  // A confirmed email subscriber of the page (the stack's pages take none, so it is stored as the service stores one).
  const subscriber = await stack.vigil.storage.statusPageSubscribers.insert(account.id, statusPageSubscriberFixture({
    statusPageId: page.id, email: `${marker}@example.com`, confirmed: true, tokenSealed: stack.vigil.deps.secretBox.encrypt(`${marker}-subscriber-token`),
  }));
  const spIncident = await made('/v1/status-pages/incidents', { name: `${marker} sp incident`, serviceIds: [service.id], incidentUpdate: { description: `${marker} slow` } });
  await made(`/v1/status-pages/incidents/${spIncident.id}/updates`, { description: `${marker} better`, status: 'MONITORING' });
  const certificate = await made('/v1/client-certificates', { host: `*.${marker}.internal`, cert: env.pem.cert, key: env.pem.key });

  const project = `${marker}-project`;
  const { sessions } = await made('/v1/check-sessions/trigger', { target: { checkId: [tcp.id] }, projectId: project, environment: 'staging' });
  const session = expectStatus(await call('get', `/v1/check-sessions/${sessions[0].checkSessionId}/completion?maxWaitSeconds=20`), 200);
  expect(session.status).toBe('FAILED');
  for (const method of ['get', 'post'] as const) {
    expectStatus(await stack.api(method, `/ping/${heartbeat.heartbeat.pingToken}`, {}), 200);
  }
  // The alert of the failed run reaches the webhook, and its delivery is logged.
  await until(async () => (await call('get', `/v1/alert-channels/${webhook.id}/deliveries`)).body.length > 0, 'a webhook delivery');

  const results = expectStatus(await call('get', `/v1/check-results/${tcp.id}?limit=100`), 200) as { id: string }[];
  const errorGroups = expectStatus(await call('get', `/v1/error-groups/checks/${tcp.id}`), 200) as { id: string }[];
  expect(results.length).toBeGreaterThan(0);
  expect(errorGroups.length).toBeGreaterThan(0);
  const testGroups = expectStatus(await call('get', `/v1/test-session-error-groups/projects/${project}`), 200) as unknown[];
  expect(testGroups.length).toBeGreaterThan(0);

  const ids: Ids = {
    check: [tcp.id, api.id, browser.id, heartbeat.id],
    group: [String(group.id)],
    channel: channels.map((c: { id: number }) => String(c.id)),
    dashboard: [String(dashboard.id)],
    dashboardKey: keyed.keys.map((k: { id: string }) => k.id),
    window: [String(window.id)],
    incident: [incident.id],
    service: [service.id],
    statusPage: [page.id],
    statusPageIncident: [spIncident.id],
    subscriber: [subscriber.id],
    certificate: [certificate.id],
    snippet: [String(snippet.id)],
    errorGroup: errorGroups.map((g) => g.id),
    result: results.map((r) => r.id),
    session: [session.checkSessionId],
    project: [project],
  };
  for (const kind of KINDS) expect(ids[kind].length, kind).toBeGreaterThan(0);
  const strings = [account.id, ...Object.values(ids).flat().filter((id) => !/^\d+$/.test(id))];
  return { account, marker, ids, strings, sequences: (session.sequences as { sequenceId: string }[]).map((s) => s.sequenceId) };
}

/** Polls `cond` every 25 ms until it holds (10 s at most). */
export async function until(cond: () => Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
