import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { checkResultFixture, statusPageSubscriberFixture } from '@vigil/core/testing';
import { API_ROUTES } from '../src/index.js';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiClient, type ApiHarness } from './support/harness.js';

afterAll(dropPostgresSchema);

// A real certificate and key for the client-certificate routes.
let pem: { cert: string; key: string };
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-pem-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=api.internal', '-days', '2',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    pem = { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function expect400(res: request.Response, ...keys: string[]): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.any(String), validation: { source: expect.any(String) } });
  expect(res.body.validation.keys).toEqual(expect.arrayContaining(keys));
}

/** One of every resource in an account, made through the API; the ids each route's path needs. */
async function seed(h: ApiHarness, c: ApiClient) {
  const ok = (res: request.Response) => {
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  const channel = ok(await c.post('/api/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.example.com/x' } }));
  const group = ok(await c.post('/api/v2/check-groups', { name: 'backend' }));
  const tcp = ok(await c.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: 'db.internal', port: 5432 }, groupId: group.id, tags: ['db'] }));
  const api = ok(await c.post('/api/v1/checks/api', { name: 'orders', request: { url: 'https://api.internal/orders' } }));
  const browser = ok(await c.post('/api/v1/checks/browser', {
    name: 'home', script: 'await page.goto(process.env.URL)',
    environmentVariables: [{ key: 'URL', value: 'https://example.com' }, { key: 'TOKEN', value: 's3cret-token', secret: true }],
  }));
  const heartbeat = ok(await c.post('/api/v1/checks/heartbeat', { name: 'backup', heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' } }));
  const dashboard = ok(await c.post('/api/v1/dashboards', { header: 'Status', customUrl: `status-${c.accountId.slice(0, 8)}`.toLowerCase() }));
  const keyed = ok(await c.post(`/api/v1/dashboards/${dashboard.id}/keys`));
  const window = ok(await c.post('/api/v1/maintenance-windows', { name: 'upgrade', startsAt: '2026-06-01T00:00:00.000Z', endsAt: '2026-06-01T02:00:00.000Z', repeatUnit: 'WEEK' }));
  const incident = ok(await c.post('/api/v1/incidents', { name: 'outage', dashboardId: dashboard.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'looking' }] }));
  const service = ok(await c.post('/api/v1/status-pages/services', { name: 'API' }));
  const page = ok(await c.post('/api/v1/status-pages', { name: 'Public', url: `public-${c.accountId.slice(0, 8)}`.toLowerCase(), cards: [{ name: 'Core', serviceIds: [service.id] }] }));
  const subscriber = await h.vigil.storage.statusPageSubscribers.insert(c.accountId, statusPageSubscriberFixture({ statusPageId: page.id, confirmed: true }));
  const spIncident = ok(await c.post('/api/v1/status-pages/incidents', { name: 'slow', serviceIds: [service.id], incidentUpdate: { description: 'slow API' } }));
  const certificate = ok(await c.post('/api/v1/client-certificates', { host: '*.internal', cert: pem.cert, key: pem.key, passphrase: 'pw' }));
  const snippet = ok(await c.post('/api/v1/snippets', { name: 'sign', script: "request.headers['X-Signed'] = '1';" }));
  await h.vigil.storage.checkResults.insertMany(c.accountId, [{ ...checkResultFixture(tcp.id), errorMessage: 'Connection refused' }]);
  const [result] = (await h.vigil.storage.checkResults.listByCheck(c.accountId, tcp.id, { limit: 1, offset: 0 })).items;
  const errorGroup = await h.vigil.errorGroups.recordOccurrence(c.accountId, tcp.id, 'Connection refused by 10.0.0.1', '2026-05-01T12:00:00.000Z');
  const session = ok(await c.post('/api/v1/check-sessions/trigger', { target: { checkId: [tcp.id] } })).sessions[0];
  return {
    channel, group, tcp, api, browser, heartbeat, dashboard, window, incident, service, page, subscriber, spIncident, certificate, snippet, result: result!, errorGroup, session,
    dashboardKeyId: keyed.keys[0].id as string,
  };
}
type Seeded = Awaited<ReturnType<typeof seed>>;

/** The ids that fill a route's path with the seeded resources of one account. */
function pathFor(routePath: string, s: Seeded): string {
  const byPrefix: [RegExp, Record<string, string>][] = [
    [/^\/v1\/checks\/api/, { id: s.api.id }],
    [/^\/v1\/checks\/browser/, { id: s.browser.id }],
    [/^\/v1\/checks\/heartbeats/, { checkId: s.heartbeat.id }],
    [/^\/v1\/checks\/heartbeat/, { id: s.heartbeat.id }],
    [/^\/v1\/checks/, { id: s.tcp.id }],
    [/^\/v[12]\/check-groups/, { id: String(s.group.id) }],
    [/^\/v1\/alert-channels/, { id: String(s.channel.id) }],
    [/^\/v1\/dashboards/, { id: String(s.dashboard.id), keyId: s.dashboardKeyId }],
    [/^\/v1\/maintenance-windows/, { id: String(s.window.id) }],
    [/^\/v1\/incidents/, { id: s.incident.id }],
    [/^\/v1\/status-pages\/services/, { id: s.service.id }],
    [/^\/v1\/status-pages\/incidents/, { id: s.spIncident.id }],
    [/^\/v1\/status-pages/, { statusPageId: s.page.id, subscriberId: s.subscriber.id }],
    [/^\/v1\/client-certificates/, { id: s.certificate.id }],
    [/^\/v1\/snippets/, { id: String(s.snippet.id) }],
    [/^\/v1\/error-groups/, { id: s.errorGroup.id, checkId: s.tcp.id }],
    [/^\/v1\/check-results/, { checkId: s.tcp.id, checkResultId: s.result.id }],
    [/^\/v1\/check-statuses/, { checkId: s.tcp.id }],
    [/^\/v1\/analytics/, { id: s.tcp.id }],
    [/^\/v1\/check-sessions/, { checkSessionId: s.session.checkSessionId }],
    [/^\/v1\/test-session-error-groups/, { projectId: 'project-1' }],
  ];
  const ids = byPrefix.find(([re]) => re.test(routePath))?.[1] ?? {};
  return routePath.replace(/:(\w+)/g, (_m, name: string) => {
    if (!(name in ids)) throw new Error(`no seeded id for ${name} in ${routePath}`);
    return encodeURIComponent(ids[name]!);
  });
}

describe.each(BACKENDS)('every route on %s', (backend) => {
  let h: ApiHarness;
  let a: Seeded;
  beforeAll(async () => {
    h = await apiHarness(backend, { rateLimit: false });
    a = await seed(h, h.a);
  }, 60_000);
  afterAll(() => h.close());

  const routes = API_ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const);

  it.each(routes)('%s: 401 without a key, 403 with another account\'s header', async (_n, route) => {
    const path = `/api${pathFor(route.path, a)}`;
    const none = await h.a.anonymous(route.method, path);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    const other = await h.a.asAccount(h.b.accountId, route.method, path);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String) });
  });

  const withIds = routes.filter(([, r]) => r.params && !r.path.startsWith('/v1/test-session-error-groups'));
  it.each(withIds)('%s: another account\'s id answers 404 and changes nothing', async (_n, route) => {
    const path = `/api${pathFor(route.path, a)}`;
    const before = JSON.stringify(await h.vigil.storage.checks.listAll(h.a.accountId));
    // A valid body where the route checks it before it looks the id up.
    const body = route.method === 'patch' ? { archivedUntilNextEvent: true } : {};
    const res = route.method === 'get' || route.method === 'delete' ? await h.b[route.method](path) : await h.b[route.method](path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: expect.any(String) });
    expect(JSON.stringify(await h.vigil.storage.checks.listAll(h.a.accountId))).toBe(before);
  });

  it('lists answer only the asking account\'s rows', async () => {
    const lists = ['/v1/checks', '/v1/check-groups', '/v2/check-groups', '/v1/alert-channels', '/v1/dashboards', '/v1/maintenance-windows',
      '/v1/incidents', '/v1/status-pages', '/v1/client-certificates', '/v1/snippets', '/v1/check-statuses'];
    for (const path of lists) {
      const mine = await h.a.get(`/api${path}`);
      const theirs = await h.b.get(`/api${path}`);
      expect(mine.status, path).toBe(200);
      expect(mine.body.length, path).toBeGreaterThan(0);
      expect(theirs.body, path).toEqual([]);
    }
    for (const path of ['/v1/status-pages/services', '/v1/status-pages/incidents']) {
      expect((await h.a.get(`/api${path}`)).body.length).toBeGreaterThan(0);
      expect((await h.b.get(`/api${path}`)).body).toEqual({ length: 0, entries: [], nextId: null });
    }
    expect((await h.b.get('/api/v1/reporting')).body).toEqual([]);
  });

  it('never returns a certificate key or passphrase, and masks secret variables', async () => {
    for (const path of ['/v1/client-certificates', `/v1/client-certificates/${a.certificate.id}`]) {
      const res = await h.a.get(`/api${path}`);
      const text = JSON.stringify(res.body);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain('"passphrase"');
      expect(text).not.toContain('"key"');
    }
    expect(Object.keys(a.certificate).sort()).toEqual(['ca', 'cert', 'created_at', 'host', 'id']);
    for (const path of [`/v1/checks/${a.browser.id}`, '/v1/checks', `/v1/checks/browser/${a.browser.id}`]) {
      const text = JSON.stringify((await h.a.get(`/api${path}`)).body);
      expect(text).not.toContain('s3cret-token');
      expect(text).toContain('https://example.com');
    }
  });
});

describe.each(BACKENDS)('resources on %s', (backend) => {
  let h: ApiHarness;
  beforeEach(async () => {
    h = await apiHarness(backend, { rateLimit: false });
  });
  afterEach(() => h.close());

  it('checks: typed routes, PUT merges, autoAssignAlerts, and the constraints of each type', async () => {
    const channel = (await h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } })).body;
    const assigned = await h.a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: 'db', port: 5432 } }).expect(201);
    expect(assigned.body.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
    expect(assigned.body.alertChannels.email).toEqual([{ address: 'ops@example.com' }]);
    const unassigned = await h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', { name: 'db2', request: { hostname: 'db', port: 5432 } }).expect(201);
    expect(unassigned.body.alertChannelSubscriptions).toEqual([]);
    expect400(await h.a.post('/api/v1/checks/tcp?autoAssignAlerts=maybe', { name: 'x', request: { hostname: 'db', port: 1 } }), 'autoAssignAlerts');
    const put = await h.a.put(`/api/v1/checks/tcp/${assigned.body.id}`, { muted: true }).expect(200);
    expect(put.body).toMatchObject({ name: 'db', muted: true, request: { hostname: 'db', port: 5432 } });
    await h.a.get(`/api/v1/checks/browser/${assigned.body.id}`).expect(404);
    await h.a.put(`/api/v1/checks/browser/${assigned.body.id}`, { name: 'x' }).expect(404);
    expect400(await h.a.post('/api/v1/checks/tcp', { request: { hostname: 'db', port: 0 } }), 'name', 'request.port');
    expect400(await h.a.post('/api/v1/checks/tcp', { name: 'x', request: { hostname: 'db', port: 1 }, frequency: 0 }), 'frequencyOffset');
    expect400(await h.a.post('/api/v1/checks/browser', { name: 'x' }), 'script');
    expect400(await h.a.post('/api/v1/checks/heartbeat', { name: 'x', heartbeat: { period: 10, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' } }), 'heartbeat.period');
    expect400(await h.a.put(`/api/v1/checks/tcp/${assigned.body.id}`, { request: { hostname: 'db', port: 'x' } }), 'request.port');
    await h.a.delete(`/api/v1/checks/tcp/${assigned.body.id}`).expect(204);
    await h.a.get(`/api/v1/checks/${assigned.body.id}`).expect(404);
  });

  it('check groups: v2 writes, v1 and v2 reads, their checks, 409 while not empty', async () => {
    const group = (await h.a.post('/api/v2/check-groups', { name: 'backend', concurrency: 3 }).expect(201)).body;
    expect(group).toMatchObject({ name: 'backend', activated: true, concurrency: 3 });
    expect400(await h.a.post('/api/v2/check-groups', { concurrency: 3 }), 'name');
    expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { concurrency: 3 }), 'name');
    const check = (await h.a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: 'db', port: 1 }, groupId: group.id }).expect(201)).body;
    expect((await h.a.get(`/api/v1/check-groups/${group.id}/checks`).expect(200)).body.map((c: { id: string }) => c.id)).toEqual([check.id]);
    expect((await h.a.get(`/api/v2/check-groups/${group.id}`).expect(200)).body.name).toBe('backend');
    const conflict = await h.a.delete(`/api/v2/check-groups/${group.id}`).expect(409);
    expect(conflict.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'renamed', activated: false }).expect(200);
    expect((await h.a.get('/api/v1/check-groups').expect(200)).body[0]).toMatchObject({ name: 'renamed', activated: false });
    await h.a.delete(`/api/v1/checks/${check.id}`).expect(204);
    await h.a.delete(`/api/v2/check-groups/${group.id}`).expect(204);
  });

  it('snippets, and the setup/teardown fields of groups that name them', async () => {
    const snippet = (await h.a.post('/api/v1/snippets', { name: 'sign', script: "request.headers['X-Signed'] = '1';" }).expect(201)).body;
    expect(snippet).toEqual({ id: expect.any(Number), name: 'sign', script: "request.headers['X-Signed'] = '1';", created_at: expect.any(String), updated_at: null });
    expect400(await h.a.post('/api/v1/snippets', { name: 'x', script: '  ' }), 'script');
    expect400(await h.a.post('/api/v1/snippets', { name: 'x', script: 'request.headers[' }), 'script');
    expect400(await h.a.put(`/api/v1/snippets/${snippet.id}`, { script: 'if (' }), 'script');
    const renamed = (await h.a.put(`/api/v1/snippets/${snippet.id}`, { name: 'sign v2' }).expect(200)).body;
    expect(renamed).toMatchObject({ id: snippet.id, name: 'sign v2', script: snippet.script, updated_at: expect.any(String) });
    expect((await h.a.get('/api/v1/snippets').expect(200)).body.map((x: { id: number }) => x.id)).toContain(snippet.id);

    // Another account's snippet is as unknown as a missing one.
    const theirs = (await h.b.post('/api/v1/snippets', { name: 'theirs', script: 'return;' }).expect(201)).body;
    expect400(await h.a.post('/api/v2/check-groups', { name: 'g', setupSnippetId: theirs.id, tearDownSnippetId: 999_999 }), 'setupSnippetId', 'tearDownSnippetId');
    expect400(await h.a.post('/api/v2/check-groups', { name: 'g', localSetupScript: 'const = 1', localTearDownScript: 'ok()' }), 'localSetupScript');
    const group = (await h.a.post('/api/v2/check-groups', { name: 'g', setupSnippetId: snippet.id, localTearDownScript: 'assert.ok(response)' }).expect(201)).body;
    expect(group).toMatchObject({ setupSnippetId: snippet.id, tearDownSnippetId: null, localSetupScript: null, localTearDownScript: 'assert.ok(response)' });
    expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'g', tearDownSnippetId: theirs.id }), 'tearDownSnippetId');

    expect((await h.a.delete(`/api/v1/snippets/${snippet.id}`).expect(409)).body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'g', setupSnippetId: null }).expect(200);
    await h.a.delete(`/api/v1/snippets/${snippet.id}`).expect(204);
    await h.a.get(`/api/v1/snippets/${snippet.id}`).expect(404);
    await h.a.delete(`/api/v2/check-groups/${group.id}`).expect(204);
  });

  it('alert channels, dashboards, maintenance windows and incidents', async () => {
    const channel = (await h.a.post('/api/v1/alert-channels', { type: 'SMS', config: { number: '+15550100', name: 'on call' } }).expect(201)).body;
    expect400(await h.a.post('/api/v1/alert-channels', { type: 'PIGEON', config: {} }), 'type');
    const check = (await h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', { name: 'db', request: { hostname: 'db', port: 1 } })).body;
    const subs = await h.a.put(`/api/v1/alert-channels/${channel.id}/subscriptions`, [{ checkId: check.id, activated: true }]);
    expect(subs.status, JSON.stringify(subs.body)).toBe(200);
    expect((await h.a.get(`/api/v1/checks/${check.id}`)).body.alertChannels.sms).toEqual([{ number: '+15550100', name: 'on call' }]);

    const dashboard = (await h.a.post('/api/v1/dashboards', { header: 'Status', customUrl: 'acme-status' }).expect(201)).body;
    expect(dashboard).toMatchObject({ header: 'Status', customUrl: 'acme-status' });
    expect(dashboard.dashboardId).toBeDefined();
    expect400(await h.a.post('/api/v1/dashboards', { customUrl: 'other' }), 'header');
    expect((await h.b.post('/api/v1/dashboards', { header: 'Mine', customUrl: 'acme-status' })).status).toBe(409);

    const window = (await h.a.post('/api/v1/maintenance-windows', { name: 'w', startsAt: '2026-06-01T00:00:00.000Z', endsAt: '2026-06-01T01:00:00.000Z', repeatUnit: 'DAY' }).expect(201)).body;
    expect400(await h.a.put(`/api/v1/maintenance-windows/${window.id}`, { name: 'w' }), 'startsAt', 'endsAt', 'repeatUnit');
    const replaced = await h.a.put(`/api/v1/maintenance-windows/${window.id}`, { name: 'w2', startsAt: '2026-06-02T00:00:00.000Z', endsAt: '2026-06-02T01:00:00.000Z', repeatUnit: 'MONTH' }).expect(200);
    expect(replaced.body).toMatchObject({ id: window.id, name: 'w2', repeatUnit: 'MONTH', updated_at: expect.any(String) });

    expect400(await h.a.post('/api/v1/incidents', { name: 'x', dashboardId: dashboard.id, incidentUpdates: [] }), 'incidentUpdates');
    const incident = (await h.a.post('/api/v1/incidents', { name: 'down', dashboardId: dashboard.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'on it' }] }).expect(201)).body;
    const updated = (await h.a.post(`/api/v1/incidents/${incident.id}/updates`, { status: 'RESOLVED', description: 'fixed' }).expect(201)).body;
    expect(updated.stoppedAt).toEqual(expect.any(String));
    expect(updated.incidentUpdates.map((u: { status: string }) => u.status)).toEqual(expect.arrayContaining(['INVESTIGATING', 'RESOLVED']));
  });

  it('status pages, services and their incidents with cursor lists', async () => {
    const services = [];
    for (let i = 0; i < 3; i++) services.push((await h.a.post('/api/v1/status-pages/services', { name: `svc ${i}` }).expect(201)).body);
    const first = (await h.a.get('/api/v1/status-pages/services?limit=2').expect(200)).body;
    expect(first.length).toBe(2);
    expect(first.nextId).toEqual(expect.any(String));
    const second = (await h.a.get(`/api/v1/status-pages/services?limit=2&nextId=${first.nextId}`).expect(200)).body;
    expect(second).toMatchObject({ length: 1, nextId: null });
    expect((await h.a.get('/api/v1/status-pages/services?paginated=false').expect(200)).body.length).toBe(3);
    expect400(await h.a.get('/api/v1/status-pages/services?limit=0'), 'limit');
    const page = (await h.a.post('/api/v1/status-pages', { name: 'Public', url: 'acme', cards: [{ name: 'Core', serviceIds: [services[0].id] }] }).expect(201)).body;
    expect((await h.a.get(`/api/v1/status-pages/${page.id}`).expect(200)).body.cards[0].services.map((x: { id: string }) => x.id)).toEqual([services[0].id]);
    expect400(await h.a.post('/api/v1/status-pages', { name: 'Bad', url: 'Not A Subdomain!' }), 'url');
    const incident = (await h.a.post('/api/v1/status-pages/incidents', { name: 'slow', serviceIds: [services[0].id], incidentUpdate: { description: 'slow' } }).expect(201)).body;
    await h.a.post(`/api/v1/status-pages/incidents/${incident.id}/updates`, { description: 'better' }).expect(201);
    expect((await h.a.get('/api/v1/status-pages/incidents').expect(200)).body.length).toBe(1);
  });

  it('results, statuses, error groups, reporting and analytics', async () => {
    const check = (await h.a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: 'db', port: 1 } })).body;
    await h.vigil.storage.checkResults.insertMany(h.a.accountId, [checkResultFixture(check.id, { hasFailures: true, errorMessage: 'Connection refused' })]);
    const results = (await h.a.get(`/api/v1/check-results/${check.id}`).expect(200));
    expect(results.headers['content-range']).toBe('0-0/1');
    await h.a.get(`/api/v1/check-results/${check.id}/${results.body[0].id}`).expect(200);
    const other = (await h.a.post('/api/v1/checks/tcp', { name: 'other', request: { hostname: 'db', port: 1 } })).body;
    await h.a.get(`/api/v1/check-results/${other.id}/${results.body[0].id}`).expect(404);
    expect400(await h.a.get(`/api/v1/check-results/${check.id}?from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z`), 'to');
    const group = await h.vigil.errorGroups.recordOccurrence(h.a.accountId, check.id, 'Connection refused by 10.0.0.1', '2026-05-01T12:00:00.000Z');
    const patched = await h.a.patch(`/api/v1/error-groups/${group.id}`, { archivedUntilNextEvent: true }).expect(200);
    expect(patched.body.archivedUntilNextEvent).toBe(true);
    expect((await h.a.get(`/api/v1/error-groups/checks/${check.id}`).expect(200)).body).toHaveLength(1);
    expect((await h.a.get('/api/v1/reporting?quickRange=last7Days').expect(200)).body.map((e: { checkId?: string; name?: string }) => e.name)).toContain('db');
    expect400(await h.a.get('/api/v1/reporting?quickRange=last24Hours'), 'quickRange');
    await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total_p95,availability`).expect(200);
    expect400(await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}`), 'metrics');
    expect400(await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=responseTime`), 'metrics');
    expect400(await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&aggregationInterval=43201`), 'aggregationInterval');
    expect400(await h.a.get(`/api/v1/analytics/tcp-checks/${check.id}?metrics=total&groupBy=statusCode`), 'groupBy');
  });

  it('check sessions: trigger, read, completion and cancel', async () => {
    const check = (await h.a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: 'db', port: 1 }, tags: ['prod'] })).body;
    await h.a.post('/api/v1/check-sessions/trigger', { target: { matchTags: [['staging']] } }).expect(404);
    expect400(await h.a.post('/api/v1/check-sessions/trigger', { target: { checkId: ['nope'] } }), 'target.checkId.0');
    const { sessions } = (await h.a.post('/api/v1/check-sessions/trigger', { target: { matchTags: [['prod']] } }).expect(201)).body;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ checkId: check.id, status: 'STARTED', runSource: 'TRIGGER_API' });
    const id = sessions[0].checkSessionId;
    await h.a.get(`/api/v1/check-sessions/${id}`).expect(200);
    await h.a.get('/api/v1/check-sessions/not-a-uuid').expect(400);
    expect400(await h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=31`), 'maxWaitSeconds');
    // Nothing runs sessions in this harness: the poll ends after its wait with 408.
    const poll = h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=1`);
    const done = poll.then((r) => r);
    await new Promise((r) => setTimeout(r, 50));
    h.clock.advance(1_000);
    const pending = await done;
    expect(pending.status).toBe(408);
    expect(pending.body).toEqual({ statusCode: 408, error: 'Request Timeout', message: expect.stringContaining(id) });
    expect400(await h.a.post(`/api/v1/check-sessions/${id}/cancel`, { sequenceId: [] }), 'sequenceId');
    const cancelled = await h.a.post(`/api/v1/check-sessions/${id}/cancel`, {}).expect(202);
    expect(cancelled.body.status).toBe('CANCELLED');
    expect((await h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=1`).expect(200)).body.status).toBe('CANCELLED');
  });
});
