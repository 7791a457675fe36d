/**
 * The check routes of the HTTP API through the real Express router: checks (generic and per type),
 * heartbeat availability and pings, check groups, check results, check statuses and check sessions.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import type request from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkResultFixture, checkStatusFixture } from '@vigil/core/testing';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiClient, type ApiHarness } from './support/harness.js';
import { expect400, expectAuthGuards, expectError, expect404, expectHiddenFromB, call, type RouteCall } from './support/expect.js';

afterAll(dropPostgresSchema);

/** The harness clock's start: everything created before the clock moves carries this time. */
const T0 = '2026-05-01T12:00:00.000Z';
const T0_MS = Date.parse(T0);
const MASK = '********';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

type Body = Record<string, unknown>;

const tcpBody = (over: Body = {}): Body => ({ name: 'orders-db', request: { hostname: 'db.internal', port: 5432 }, ...over });
const apiBody = (over: Body = {}): Body => ({ name: 'orders API', request: { url: 'https://api.example.com/orders' }, ...over });
const browserBody = (over: Body = {}): Body => ({ name: 'home page', script: "await page.goto('https://example.com')", ...over });
const heartbeatBody = (over: Body = {}): Body => ({
  name: 'nightly backup',
  heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'hours' },
  ...over,
});

const DEFAULT_ALERT_SETTINGS = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  timeBasedEscalation: { minutesFailingThreshold: 5 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
};
const NO_ALERT_CHANNELS = { email: [], webhook: [], chat: [], sms: [] };


async function created(res: request.Test | Promise<request.Response>): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** A route, its path and a valid body (so that only the credentials can make it fail). */

/** Everything account a stores about checks, groups and statuses (to prove a request changed nothing). */
async function snapshotA(h: ApiHarness): Promise<string> {
  const s = h.vigil.storage;
  const id = h.a.accountId;
  return JSON.stringify({
    checks: await s.checks.listAll(id),
    groups: await s.checkGroups.listAll(id),
    subs: await s.alertSubscriptions.listAll(id),
    statuses: await s.checkStatuses.list(id),
  });
}

/**
 * Sends a long poll and moves the fake clock whenever the poll waits on a timer: `step` runs once
 * per wait (it advances the clock). Only the event loop is yielded to, no time is slept.
 */
async function withClock(h: ApiHarness, pending: request.Test, step: (round: number) => Promise<void> | void): Promise<request.Response> {
  let done = false;
  const settled = pending.then(
    (r) => {
      done = true;
      return r;
    },
    (e: unknown) => {
      done = true;
      throw e;
    },
  );
  let round = 0;
  while (!done) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (!done && h.clock.pendingTimers > 0) await step(round++);
  }
  return settled;
}

describe.each(BACKENDS)('check routes on %s', (backend) => {
  let h: ApiHarness;
  beforeEach(async () => {
    h = await apiHarness(backend);
  });
  afterEach(() => h.close());

  const countChecks = async (c: ApiClient = h.a) => (await h.vigil.storage.checks.listAll(c.accountId)).length;

  describe('checks', () => {
    it('POST /v1/checks/tcp answers 201 with the spec defaults; GET /v1/checks/{id} and /v1/checks/tcp/{id} read it back', async () => {
      const res = await h.a.post('/api/v1/checks/tcp', tcpBody()).expect(201);
      const check = res.body;
      expect(check).toEqual({
        id: expect.stringMatching(UUID_RE),
        checkType: 'TCP',
        name: 'orders-db',
        activated: true,
        muted: false,
        doubleCheck: true,
        shouldFail: false,
        locations: [],
        tags: [],
        alertSettings: DEFAULT_ALERT_SETTINGS,
        useGlobalAlertSettings: true,
        groupId: null,
        groupOrder: null,
        runtimeId: null,
        alertChannelSubscriptions: [],
        retryStrategy: null,
        triggerIncident: null,
        runParallel: false,
        description: null,
        frequency: 10,
        privateLocations: [],
        request: { hostname: 'db.internal', port: 5432, data: null, assertions: [], ipFamily: 'IPv4' },
        frequencyOffset: null,
        degradedResponseTime: 3000,
        maxResponseTime: 5000,
        alertChannels: NO_ALERT_CHANNELS,
        created_at: T0,
        updated_at: null,
      });
      expect((await h.a.get(`/api/v1/checks/${check.id}`).expect(200)).body).toEqual(check);
      expect((await h.a.get(`/api/v1/checks/tcp/${check.id}`).expect(200)).body).toEqual(check);
      expect(await countChecks()).toBe(1);
    });

    it('POST /v1/checks/tcp stores the given fields and ignores unknown ones', async () => {
      const body = tcpBody({
        activated: false,
        muted: true,
        tags: ['db', 'prod'],
        locations: ['eu-west-1', 'us-east-1'],
        frequency: 0,
        frequencyOffset: 20,
        degradedResponseTime: 0,
        maxResponseTime: 5000,
        description: 'd'.repeat(500),
        groupOrder: 0,
        runtimeId: '2026.04',
        retryStrategy: { type: 'LINEAR', maxRetries: 3 },
        request: { hostname: 'db.internal', port: 65535, data: 'PING\n', ipFamily: 'IPv6', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }] },
        sneaky: 'dropped',
        accountId: h.b.accountId,
      });
      const check = await created(h.a.post('/api/v1/checks/tcp', body));
      expect(check).toMatchObject({
        activated: false,
        muted: true,
        tags: ['db', 'prod'],
        locations: ['eu-west-1', 'us-east-1'],
        frequency: 0,
        frequencyOffset: 20,
        degradedResponseTime: 0,
        description: 'd'.repeat(500),
        groupOrder: 0,
        runtimeId: '2026.04',
        retryStrategy: { type: 'LINEAR', baseBackoffSeconds: 60, maxRetries: 3, maxDurationSeconds: 600, sameRegion: true, onlyOn: [] },
        request: {
          hostname: 'db.internal', port: 65535, data: 'PING\n', ipFamily: 'IPv6',
          assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG', property: '', regex: null }],
        },
      });
      expect(check).not.toHaveProperty('sneaky');
      expect(check).not.toHaveProperty('accountId');
      const stored = await h.vigil.storage.checks.get(h.a.accountId, check.id);
      expect(stored).not.toHaveProperty('sneaky');
      expect(stored?.accountId).toBe(h.a.accountId);
      expect(await countChecks(h.b)).toBe(0);
    });

    it('POST /v1/checks/tcp accepts the frequencyOffset bounds of each frequency band', async () => {
      for (const [frequency, frequencyOffset] of [[0, 10], [0, 30], [5, 1], [5, 50], [60, 600], [720, 12], [1440, 24]] as const) {
        const res = await h.a.post('/api/v1/checks/tcp', tcpBody({ frequency, frequencyOffset }));
        expect(res.status, `${frequency}/${frequencyOffset}: ${JSON.stringify(res.body)}`).toBe(201);
        expect(res.body).toMatchObject({ frequency, frequencyOffset });
      }
    });

    it('POST /v1/checks/tcp answers 400 naming each violated constraint and stores nothing', async () => {
      const { body: group } = await h.b.post('/api/v2/check-groups', { name: "b's group" }).expect(201);
      const cases: [Body, string[]][] = [
        [{ request: { hostname: 'db', port: 1 } }, ['name']],
        [tcpBody({ name: '   ' }), ['name']],
        [{ name: 'x' }, ['request']],
        [tcpBody({ request: { port: 1 } }), ['request.hostname']],
        [tcpBody({ request: { hostname: 'db', port: 0 } }), ['request.port']],
        [tcpBody({ request: { hostname: 'db', port: 65536 } }), ['request.port']],
        [tcpBody({ request: { hostname: 'db', port: 80.5 } }), ['request.port']],
        [tcpBody({ request: { hostname: 'db', port: '80' } }), ['request.port']],
        [tcpBody({ request: { hostname: 'db', port: 80, ipFamily: 'IPv5' } }), ['request.ipFamily']],
        [tcpBody({ request: { hostname: 'db', port: 80, assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS' }] } }), ['request.assertions.0.source']],
        [tcpBody({ request: { hostname: 'db', port: 80, assertions: [{ source: 'RESPONSE_DATA', comparison: 'MATCHES' }] } }), ['request.assertions.0.comparison']],
        [tcpBody({ frequency: 7 }), ['frequency']],
        [tcpBody({ frequency: 0 }), ['frequencyOffset']],
        [tcpBody({ frequency: 0, frequencyOffset: 15 }), ['frequencyOffset']],
        [tcpBody({ frequency: 5, frequencyOffset: 51 }), ['frequencyOffset']],
        [tcpBody({ frequency: 720, frequencyOffset: 13 }), ['frequencyOffset']],
        [tcpBody({ frequencyOffset: 0 }), ['frequencyOffset']],
        [tcpBody({ degradedResponseTime: 5001 }), ['degradedResponseTime']],
        [tcpBody({ maxResponseTime: -1 }), ['maxResponseTime']],
        [tcpBody({ description: 'd'.repeat(501) }), ['description']],
        [tcpBody({ locations: ['us-east-1', 'mars-1'] }), ['locations.1']],
        [tcpBody({ groupOrder: -1 }), ['groupOrder']],
        [tcpBody({ runtimeId: '2021.01' }), ['runtimeId']],
        [tcpBody({ activated: 'yes' }), ['activated']],
        [tcpBody({ tags: ['ok', ''] }), ['tags.1']],
        [tcpBody({ alertSettings: { escalationType: 'SOMETIMES' } }), ['alertSettings.escalationType']],
        [tcpBody({ alertSettings: { runBasedEscalation: { failedRunThreshold: 6 } } }), ['alertSettings.runBasedEscalation.failedRunThreshold']],
        [tcpBody({ alertSettings: { reminders: { amount: 6 } } }), ['alertSettings.reminders.amount']],
        [tcpBody({ alertSettings: { reminders: { interval: 7 } } }), ['alertSettings.reminders.interval']],
        [tcpBody({ alertSettings: { parallelRunFailureThreshold: { percentage: 15 } } }), ['alertSettings.parallelRunFailureThreshold.percentage']],
        [tcpBody({ alertSettings: { timeBasedEscalation: { minutesFailingThreshold: 20 } } }), ['alertSettings.timeBasedEscalation.minutesFailingThreshold']],
        [tcpBody({ retryStrategy: { type: 'RANDOM' } }), ['retryStrategy.type']],
        [tcpBody({ retryStrategy: { type: 'FIXED', maxRetries: 11 } }), ['retryStrategy.maxRetries']],
        [tcpBody({ retryStrategy: { type: 'FIXED', maxDurationSeconds: 601 } }), ['retryStrategy.maxDurationSeconds']],
        [tcpBody({ retryStrategy: { type: 'FIXED', onlyOn: ['NETWORK_ERROR', 'NETWORK_ERROR'] } }), ['retryStrategy.onlyOn']],
        [tcpBody({ triggerIncident: { name: 'x', description: 'y' } }), ['triggerIncident.serviceId']],
        [tcpBody({ alertChannelSubscriptions: [{ alertChannelId: 0 }] }), ['alertChannelSubscriptions.0.alertChannelId']],
        [tcpBody({ alertChannelSubscriptions: [{ alertChannelId: 987654 }] }), ['alertChannelSubscriptions.0.alertChannelId']],
        [tcpBody({ groupId: 987654 }), ['groupId']],
        [tcpBody({ groupId: group.id }), ['groupId']],
        [{ name: '', request: { hostname: '', port: 70000 }, frequency: 7 }, ['name', 'request.hostname', 'request.port', 'frequency']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v1/checks/tcp', body), 'payload', ...keys);
      }
      expect(await countChecks()).toBe(0);
      expect((await h.a.get('/api/v1/checks').expect(200)).body).toEqual([]);
    });

    it('POST /v1/checks/browser answers 201 with the browser defaults', async () => {
      const check = await created(h.a.post('/api/v1/checks/browser', browserBody({
        sslCheckDomain: 'www.example.com',
        dependencies: [{ path: 'lib/helpers.js', content: 'export const x = 1;' }],
        frequency: 1,
      })));
      expect(check).toMatchObject({
        id: expect.stringMatching(UUID_RE),
        checkType: 'BROWSER',
        name: 'home page',
        script: "await page.goto('https://example.com')",
        scriptPath: null,
        dependencies: [{ path: 'lib/helpers.js', content: 'export const x = 1;' }],
        sslCheckDomain: 'www.example.com',
        environmentVariables: [],
        frequency: 1,
        activated: true,
        doubleCheck: true,
        alertChannels: NO_ALERT_CHANNELS,
        created_at: T0,
        updated_at: null,
      });
      expect(check).not.toHaveProperty('request');
      expect((await h.a.get(`/api/v1/checks/browser/${check.id}`).expect(200)).body).toEqual(check);
    });

    it('POST /v1/checks/browser answers 400 naming each violated constraint and stores nothing', async () => {
      const vars = (n: number) => Array.from({ length: n }, (_x, i) => ({ key: `VAR_${i}`, value: String(i) }));
      const cases: [Body, string[]][] = [
        [{ script: 'x' }, ['name']],
        [{ name: 'x' }, ['script']],
        [browserBody({ script: '   ' }), ['script']],
        [browserBody({ script: null }), ['script']],
        [browserBody({ frequency: 0 }), ['frequency']],
        [browserBody({ frequency: 3 }), ['frequency']],
        [browserBody({ sslCheckDomain: 'https://example.com/' }), ['sslCheckDomain']],
        [browserBody({ sslCheckDomain: 'localhost' }), ['sslCheckDomain']],
        [browserBody({ dependencies: [{ path: '../secrets.js', content: '' }] }), ['dependencies.0.path']],
        [browserBody({ dependencies: [{ path: '/etc/passwd', content: '' }] }), ['dependencies.0.path']],
        [browserBody({ dependencies: [{ path: 'a.js' }] }), ['dependencies.0.content']],
        [browserBody({ environmentVariables: [{ key: '1BAD', value: 'x' }] }), ['environmentVariables.0.key']],
        [browserBody({ environmentVariables: [{ key: 'OK', value: 1 }] }), ['environmentVariables.0.value']],
        [browserBody({ environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }), ['environmentVariables.1.key']],
        [browserBody({ environmentVariables: vars(101) }), ['environmentVariables.100']],
        [browserBody({ description: 'd'.repeat(501) }), ['description']],
        [browserBody({ privateLocations: [''] }), ['privateLocations.0']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v1/checks/browser', body), 'payload', ...keys);
      }
      expect(await countChecks()).toBe(0);
      // Exactly 100 variables are allowed.
      await h.a.post('/api/v1/checks/browser', browserBody({ environmentVariables: vars(100) })).expect(201);
    });

    it('POST /v1/checks/heartbeat answers 201 with the heartbeat settings and its ping token', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      expect(check).toMatchObject({
        id: expect.stringMatching(UUID_RE),
        checkType: 'HEARTBEAT',
        name: 'nightly backup',
        heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'hours', pingToken: expect.any(String) },
        alertChannels: NO_ALERT_CHANNELS,
        created_at: T0,
        updated_at: null,
      });
      expect(check.heartbeat.pingToken.length).toBeGreaterThanOrEqual(16);
      const other = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody({ name: 'other' })));
      expect(other.heartbeat.pingToken).not.toBe(check.heartbeat.pingToken);
      expect((await h.a.get(`/api/v1/checks/heartbeat/${check.id}`).expect(200)).body).toEqual(check);
    });

    it('POST /v1/checks/heartbeat answers 400 naming each violated constraint and stores nothing', async () => {
      const hb = (heartbeat: Body) => heartbeatBody({ heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'hours', ...heartbeat } });
      const cases: [Body, string[]][] = [
        [{ name: 'x' }, ['heartbeat']],
        [heartbeatBody({ name: '' }), ['name']],
        [hb({ period: 29, periodUnit: 'seconds' }), ['heartbeat.period']],
        [hb({ period: 366, periodUnit: 'days' }), ['heartbeat.period']],
        [hb({ period: 0 }), ['heartbeat.period']],
        [hb({ periodUnit: 'weeks' }), ['heartbeat.periodUnit']],
        [hb({ grace: -1 }), ['heartbeat.grace']],
        [hb({ grace: 366, graceUnit: 'days' }), ['heartbeat.grace']],
        [hb({ graceUnit: 'fortnights' }), ['heartbeat.graceUnit']],
        [{ name: 'x', heartbeat: { period: 1, periodUnit: 'hours' } }, ['heartbeat.grace', 'heartbeat.graceUnit']],
        [heartbeatBody({ frequency: 0 }), ['frequency']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v1/checks/heartbeat', body), 'payload', ...keys);
      }
      expect(await countChecks()).toBe(0);
      // The bounds themselves are allowed.
      await h.a.post('/api/v1/checks/heartbeat', hb({ period: 30, periodUnit: 'seconds', grace: 365, graceUnit: 'days' })).expect(201);
    });

    it('GET /v1/checks lists every type, pages with limit/page and reports the total in Content-Range', async () => {
      const ids = [
        (await created(h.a.post('/api/v1/checks/tcp', tcpBody()))).id,
        (await created(h.a.post('/api/v1/checks/api', apiBody()))).id,
        (await created(h.a.post('/api/v1/checks/browser', browserBody()))).id,
        (await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()))).id,
      ];
      await h.b.post('/api/v1/checks/tcp', tcpBody({ name: "b's" })).expect(201);
      const all = await h.a.get('/api/v1/checks').expect(200);
      expect(all.headers['content-range']).toBe('0-3/4');
      expect(all.body.map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());
      expect(all.body.map((c: { checkType: string }) => c.checkType).sort()).toEqual(['API', 'BROWSER', 'HEARTBEAT', 'TCP']);
      const first = await h.a.get('/api/v1/checks?limit=3').expect(200);
      expect(first.headers['content-range']).toBe('0-2/4');
      expect(first.body).toHaveLength(3);
      const second = await h.a.get('/api/v1/checks?limit=3&page=2').expect(200);
      expect(second.headers['content-range']).toBe('3-3/4');
      expect(second.body).toHaveLength(1);
      expect([...first.body, ...second.body].map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());
      const beyond = await h.a.get('/api/v1/checks?limit=3&page=3').expect(200);
      expect(beyond.body).toEqual([]);
      expect(beyond.headers['content-range']).toBe('*/4');
      const third = await h.a.get('/api/v1/checks?limit=1&page=3').expect(200);
      expect(third.headers['content-range']).toBe('2-2/4');
      const mine = await h.b.get('/api/v1/checks').expect(200);
      expect(mine.headers['content-range']).toBe('0-0/1');
      expect(mine.body.map((c: { name: string }) => c.name)).toEqual(["b's"]);
    });

    it('GET /v1/checks answers 400 for limit and page out of range', async () => {
      expect400(await h.a.get('/api/v1/checks?limit=0'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/checks?limit=101'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/checks?limit=ten'), 'query', 'limit');
      expect400(await h.a.get('/api/v1/checks?page=0'), 'query', 'page');
      expect400(await h.a.get('/api/v1/checks?page=-1&limit=1000'), 'query', 'page', 'limit');
      await h.a.get('/api/v1/checks?limit=100&page=1').expect(200);
    });

    it('GET /v1/checks/{id} and the typed GET answer 404 for an unknown id and for another account\'s check', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      expect404(await h.a.get(`/api/v1/checks/${MISSING_UUID}`));
      expect404(await h.a.get('/api/v1/checks/tcp/no-such-check'));
      const res = await h.b.get(`/api/v1/checks/${tcp.id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Check not found' });
      expect404(await h.b.get(`/api/v1/checks/tcp/${tcp.id}`));
    });

    it('a typed route does not reach a check of another type: GET, PUT and DELETE answer 404 and change nothing', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const api = await created(h.a.post('/api/v1/checks/api', apiBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const byType: Record<string, { id: string }> = { tcp, api, browser, heartbeat };
      const validPut: Record<string, Body> = { tcp: { name: 'renamed' }, api: { name: 'renamed' }, browser: { name: 'renamed' }, heartbeat: { name: 'renamed' } };
      const before = await snapshotA(h);
      for (const [slug, own] of Object.entries(byType)) {
        await h.a.get(`/api/v1/checks/${slug}/${own.id}`).expect(200);
        for (const [otherSlug, other] of Object.entries(byType)) {
          if (otherSlug === slug) continue;
          expect404(await h.a.get(`/api/v1/checks/${slug}/${other.id}`));
          expect404(await h.a.put(`/api/v1/checks/${slug}/${other.id}`, validPut[slug]));
          expect404(await h.a.delete(`/api/v1/checks/${slug}/${other.id}`));
        }
      }
      expect(await snapshotA(h)).toBe(before);
      expect(await countChecks()).toBe(4);
    });

    it('PUT /v1/checks/{type}/{id} replaces the given fields, keeps the others and stamps updated_at', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ tags: ['db'], frequency: 5 })));
      h.clock.advance(60_000);
      const put = await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, { muted: true, request: { hostname: 'db2.internal', port: 6432 }, tags: [] }).expect(200);
      expect(put.body).toEqual({
        ...tcp,
        muted: true,
        tags: [],
        request: { hostname: 'db2.internal', port: 6432, data: null, assertions: [], ipFamily: 'IPv4' },
        created_at: T0,
        updated_at: new Date(T0_MS + 60_000).toISOString(),
      });
      expect((await h.a.get(`/api/v1/checks/${tcp.id}`).expect(200)).body).toEqual(put.body);

      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const browserPut = await h.a.put(`/api/v1/checks/browser/${browser.id}`, { script: 'await page.goto("https://example.org")', frequency: 60 }).expect(200);
      expect(browserPut.body).toMatchObject({ name: 'home page', script: 'await page.goto("https://example.org")', frequency: 60 });

      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const hbPut = await h.a.put(`/api/v1/checks/heartbeat/${heartbeat.id}`, {
        heartbeat: { period: 2, periodUnit: 'days', grace: 3, graceUnit: 'hours', pingToken: 'chosen-by-client' },
      }).expect(200);
      // The ping token is the service's: a PUT neither drops nor replaces it.
      expect(hbPut.body.heartbeat).toEqual({ period: 2, periodUnit: 'days', grace: 3, graceUnit: 'hours', pingToken: heartbeat.heartbeat.pingToken });
      expect(hbPut.body.name).toBe('nightly backup');
      // An empty PUT keeps everything but updated_at.
      h.clock.advance(1_000);
      const empty = await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, {}).expect(200);
      expect({ ...empty.body, updated_at: null }).toEqual({ ...put.body, updated_at: null });
    });

    it('PUT /v1/checks/{type}/{id} moves a check into and out of a group', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      expect((await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, { groupId: group.id, groupOrder: 2 }).expect(200)).body).toMatchObject({ groupId: group.id, groupOrder: 2 });
      expect((await h.a.put(`/api/v1/checks/tcp/${tcp.id}`, { groupId: null }).expect(200)).body.groupId).toBeNull();
    });

    it('PUT /v1/checks/{type}/{id} answers 400 for each violated constraint and leaves the check as it was', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ frequency: 5 })));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const { body: bGroup } = await h.b.post('/api/v2/check-groups', { name: "b's group" }).expect(201);
      const before = await snapshotA(h);
      const cases: [string, Body, string[]][] = [
        [`tcp/${tcp.id}`, { name: '' }, ['name']],
        [`tcp/${tcp.id}`, { request: { hostname: 'db', port: 70000 } }, ['request.port']],
        [`tcp/${tcp.id}`, { request: { port: 1 } }, ['request.hostname']],
        [`tcp/${tcp.id}`, { frequency: 3 }, ['frequency']],
        // Valid on its own, but not with the stored frequency 5 (max offset 50): the merged check is validated.
        [`tcp/${tcp.id}`, { frequencyOffset: 51 }, ['frequencyOffset']],
        [`tcp/${tcp.id}`, { frequency: 0 }, ['frequencyOffset']],
        [`tcp/${tcp.id}`, { maxResponseTime: 5001 }, ['maxResponseTime']],
        [`tcp/${tcp.id}`, { description: 'd'.repeat(501) }, ['description']],
        [`tcp/${tcp.id}`, { groupId: 987654 }, ['groupId']],
        [`tcp/${tcp.id}`, { groupId: bGroup.id }, ['groupId']],
        [`tcp/${tcp.id}`, { alertChannelSubscriptions: [{ alertChannelId: 987654 }] }, ['alertChannelSubscriptions.0.alertChannelId']],
        [`browser/${browser.id}`, { script: ' ' }, ['script']],
        [`browser/${browser.id}`, { frequency: 0 }, ['frequency']],
        [`browser/${browser.id}`, { environmentVariables: [{ key: 'has space', value: 'x' }] }, ['environmentVariables.0.key']],
        [`heartbeat/${heartbeat.id}`, { heartbeat: { period: 10, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' } }, ['heartbeat.period']],
        [`heartbeat/${heartbeat.id}`, { heartbeat: { period: 1, periodUnit: 'weeks', grace: 0, graceUnit: 'hours' } }, ['heartbeat.periodUnit']],
      ];
      for (const [path, body, keys] of cases) {
        expect400(await h.a.put(`/api/v1/checks/${path}`, body), 'payload', ...keys);
      }
      expect400(await h.a.put(`/api/v1/checks/tcp/${tcp.id}?autoAssignAlerts=perhaps`, { name: 'x' }), 'query', 'autoAssignAlerts');
      expect(await snapshotA(h)).toBe(before);
    });

    it('PUT, DELETE and typed DELETE of another account\'s check answer 404 and leave it unchanged', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const api = await created(h.a.post('/api/v1/checks/api', apiBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const before = await snapshotA(h);
      await expectHiddenFromB(h, [
        ['get', `/api/v1/checks/api/${api.id}`],
        ['put', `/api/v1/checks/api/${api.id}`, { name: 'taken over' }],
        ['delete', `/api/v1/checks/api/${api.id}`],
        ['get', `/api/v1/checks/${tcp.id}`],
        ['get', `/api/v1/checks/browser/${browser.id}`],
        ['get', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['put', `/api/v1/checks/tcp/${tcp.id}`, { name: 'taken over' }],
        ['put', `/api/v1/checks/browser/${browser.id}`, { name: 'taken over' }],
        ['put', `/api/v1/checks/heartbeat/${heartbeat.id}`, { name: 'taken over' }],
        ['delete', `/api/v1/checks/tcp/${tcp.id}`],
        ['delete', `/api/v1/checks/browser/${browser.id}`],
        ['delete', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['delete', `/api/v1/checks/${tcp.id}`],
        ['get', `/api/v1/checks/heartbeats/${heartbeat.id}/availability`],
      ]);
      expect(await snapshotA(h)).toBe(before);
      expect((await h.a.get(`/api/v1/checks/${tcp.id}`).expect(200)).body.name).toBe('orders-db');
    });

    it('DELETE /v1/checks/{id} and /v1/checks/{type}/{id} answer 204 with no body and remove the check, its subscriptions and status', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, checkStatusFixture(tcp.id));

      const res = await h.a.delete(`/api/v1/checks/${tcp.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect404(await h.a.get(`/api/v1/checks/${tcp.id}`));
      expect404(await h.a.delete(`/api/v1/checks/${tcp.id}`));
      expect404(await h.a.get(`/api/v1/check-statuses/${tcp.id}`));
      expect(await h.vigil.storage.checkStatuses.get(h.a.accountId, tcp.id)).toBeNull();
      expect(await h.vigil.storage.alertSubscriptions.listByCheck(h.a.accountId, tcp.id)).toEqual([]);

      await h.a.delete(`/api/v1/checks/browser/${browser.id}`).expect(204);
      expect404(await h.a.get(`/api/v1/checks/browser/${browser.id}`));
      expect404(await h.a.delete(`/api/v1/checks/browser/${browser.id}`));
      await h.a.delete(`/api/v1/checks/heartbeat/${heartbeat.id}`).expect(204);
      expect(await countChecks()).toBe(0);
      const { body: ch } = await h.a.get(`/api/v1/alert-channels/${channel.id}`).expect(200);
      expect(ch.subscriptions).toEqual([]);
      // The ping token of a deleted heartbeat no longer answers.
      expect404(await h.a.anonymous('get', `/api/ping/${heartbeat.heartbeat.pingToken}`));
    });

    it('autoAssignAlerts (default true) subscribes a new check of every type to the account\'s existing channels; false does not', async () => {
      const email = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const hook = await created(h.a.post('/api/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.example.com/x' } }));
      // Another account's channel is never assigned.
      await h.b.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'b@example.com' } }).expect(201);
      const expectedSubs = [{ alertChannelId: email.id, activated: true }, { alertChannelId: hook.id, activated: true }];
      const sortSubs = (subs: { alertChannelId: number }[]) => [...subs].sort((x, y) => x.alertChannelId - y.alertChannelId);
      const bodies: [string, Body][] = [['tcp', tcpBody()], ['api', apiBody()], ['browser', browserBody()], ['heartbeat', heartbeatBody()]];
      for (const [slug, body] of bodies) {
        for (const query of ['', '?autoAssignAlerts=true']) {
          const check = await created(h.a.post(`/api/v1/checks/${slug}${query}`, body));
          expect(sortSubs(check.alertChannelSubscriptions), `${slug}${query}`).toEqual(expectedSubs);
          expect(check.alertChannels.email).toEqual([{ address: 'ops@example.com' }]);
          expect(check.alertChannels.webhook).toEqual([{ url: 'https://hooks.example.com/x', name: 'hook', method: 'POST', headers: [], queryParameters: [] }]);
          expect(sortSubs((await h.a.get(`/api/v1/checks/${check.id}`).expect(200)).body.alertChannelSubscriptions)).toEqual(expectedSubs);
        }
        const unassigned = await created(h.a.post(`/api/v1/checks/${slug}?autoAssignAlerts=false`, body));
        expect(unassigned.alertChannelSubscriptions, slug).toEqual([]);
        expect(unassigned.alertChannels).toEqual(NO_ALERT_CHANNELS);
        // autoAssignAlerts is about new checks: a PUT does not subscribe an existing one.
        const put = await h.a.put(`/api/v1/checks/${slug}/${unassigned.id}`, { name: 'renamed' }).expect(200);
        expect(put.body.alertChannelSubscriptions).toEqual([]);
      }
      const { body: channel } = await h.a.get(`/api/v1/alert-channels/${email.id}`).expect(200);
      expect(channel.subscriptions.filter((s: { checkId: string | null }) => s.checkId !== null)).toHaveLength(8);
      // Given subscriptions are kept with autoAssignAlerts=false.
      const given = await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody({ alertChannelSubscriptions: [{ alertChannelId: hook.id, activated: false }] })));
      expect(given.alertChannelSubscriptions).toEqual([{ alertChannelId: hook.id, activated: false }]);
      expect(given.alertChannels).toEqual(NO_ALERT_CHANNELS);
      expect400(await h.a.post('/api/v1/checks/tcp?autoAssignAlerts=maybe', tcpBody()), 'query', 'autoAssignAlerts');
      expect400(await h.a.post('/api/v1/checks/browser?autoAssignAlerts=1', browserBody()), 'query', 'autoAssignAlerts');
    });

    it('autoAssignAlerts=false still subscribes a new check to a channel that has autoSubscribe on', async () => {
      const auto = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'auto@example.com' }, autoSubscribe: true }));
      await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'manual@example.com' } }));
      const check = await created(h.a.post('/api/v1/checks/tcp?autoAssignAlerts=false', tcpBody()));
      expect(check.alertChannelSubscriptions).toEqual([{ alertChannelId: auto.id, activated: true }]);
      expect(check.alertChannels.email).toEqual([{ address: 'auto@example.com' }]);
    });

    it('secret environment variables of a browser check come back masked on every read and stay usable by runs', async () => {
      const environmentVariables = [
        { key: 'BASE_URL', value: 'https://example.com' },
        { key: 'TOKEN', value: 's3cret-token', secret: true },
        { key: 'SERVICE_SECRET_PASSWORD', value: 'hunter2' },
        { key: 'LOCKED', value: 'visible', locked: true },
      ];
      const masked = [
        { key: 'BASE_URL', value: 'https://example.com', locked: false, secret: false },
        { key: 'TOKEN', value: MASK, locked: false, secret: true },
        { key: 'SERVICE_SECRET_PASSWORD', value: MASK, locked: false, secret: false },
        { key: 'LOCKED', value: 'visible', locked: true, secret: false },
      ];
      const check = await created(h.a.post('/api/v1/checks/browser', browserBody({ environmentVariables })));
      expect(check.environmentVariables).toEqual(masked);
      for (const path of [`/api/v1/checks/${check.id}`, `/api/v1/checks/browser/${check.id}`, '/api/v1/checks']) {
        const text = (await h.a.get(path).expect(200)).text;
        expect(text, path).not.toContain('s3cret-token');
        expect(text, path).not.toContain('hunter2');
        expect(text, path).toContain('https://example.com');
      }
      expect((await h.a.get(`/api/v1/checks/${check.id}`)).body.environmentVariables).toEqual(masked);
      // Stored sealed, opened for a run.
      const stored = JSON.stringify(await h.vigil.storage.checks.get(h.a.accountId, check.id));
      expect(stored).not.toContain('s3cret-token');
      expect(stored).not.toContain('hunter2');
      const run = await h.vigil.checks.getForRun(h.a.accountId, check.id);
      expect(run.environment).toMatchObject({ TOKEN: 's3cret-token', SERVICE_SECRET_PASSWORD: 'hunter2', BASE_URL: 'https://example.com' });

      // A client that echoes back what it read keeps the secrets; a new value replaces one.
      h.clock.advance(1_000);
      const echoed = await h.a.put(`/api/v1/checks/browser/${check.id}`, { environmentVariables: check.environmentVariables }).expect(200);
      expect(echoed.body.environmentVariables).toEqual(masked);
      expect((await h.vigil.checks.getForRun(h.a.accountId, check.id)).environment).toMatchObject({ TOKEN: 's3cret-token', SERVICE_SECRET_PASSWORD: 'hunter2' });
      const replaced = await h.a.put(`/api/v1/checks/browser/${check.id}`, {
        environmentVariables: [{ key: 'TOKEN', value: 'rotated', secret: true }],
      }).expect(200);
      expect(replaced.text).not.toContain('rotated');
      expect(replaced.body.environmentVariables).toEqual([{ key: 'TOKEN', value: MASK, locked: false, secret: true }]);
      expect((await h.vigil.checks.getForRun(h.a.accountId, check.id)).environment).toEqual({ TOKEN: 'rotated' });
    });
  });

  describe('heartbeats', () => {
    it('GET and POST /ping/{token} need no credentials, answer {ok, at} and record the ping', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const token: string = check.heartbeat.pingToken;
      h.clock.advance(10 * 60_000);
      const got = await h.a.anonymous('get', `/api/ping/${token}`).expect(200);
      expect(got.body).toEqual({ ok: true, at: new Date(T0_MS + 10 * 60_000).toISOString() });
      h.clock.advance(10 * 60_000);
      const posted = await h.a.anonymous('post', `/api/ping/${token}`).set('User-Agent', 'backup-script/1.0').expect(200);
      expect(posted.body).toEqual({ ok: true, at: new Date(T0_MS + 20 * 60_000).toISOString() });
      const pings = await h.vigil.storage.heartbeats.listPings(h.a.accountId, check.id, new Date(T0_MS), new Date(T0_MS + 3_600_000));
      expect(pings.map((p) => p.at)).toEqual([new Date(T0_MS + 10 * 60_000).toISOString(), new Date(T0_MS + 20 * 60_000).toISOString()]);
      expect(pings[1]?.source).toBe('backup-script/1.0');
      expect((await h.vigil.storage.heartbeats.lastPing(h.a.accountId, check.id))?.at).toBe(new Date(T0_MS + 20 * 60_000).toISOString());
    });

    it('/ping/{token} answers 404 in the spec error shape for an unknown token and for a token that is not a heartbeat\'s', async () => {
      await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      for (const method of ['get', 'post'] as const) {
        expect404(await h.a.anonymous(method, '/api/ping/not-a-token'));
      }
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      expect404(await h.a.anonymous('get', `/api/ping/${tcp.id}`));
    });

    it('GET /v1/checks/heartbeats/{checkId}/availability answers the share of periods that saw a ping, now and in the period before', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const token: string = check.heartbeat.pingToken;
      for (const minutes of [10, 10, 130]) {
        h.clock.advance(minutes * 60_000);
        await h.a.anonymous('get', `/api/ping/${token}`).expect(200);
      }
      const iso = (ms: number) => new Date(ms).toISOString();
      // Four one-hour periods from creation: pings in the first (twice) and the third.
      const windowed = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability?startTime=${T0}&endTime=${iso(T0_MS + 4 * 3_600_000)}`).expect(200);
      expect(windowed.body).toEqual({ successRatio: { previousPeriod: 0, currentPeriod: 50 }, totalEntitiesCurrentPeriod: 3 });
      // The window after it holds the previous period's pings.
      const after = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability?startTime=${iso(T0_MS + 4 * 3_600_000)}&endTime=${iso(T0_MS + 8 * 3_600_000)}`).expect(200);
      expect(after.body).toEqual({ successRatio: { previousPeriod: 50, currentPeriod: 0 }, totalEntitiesCurrentPeriod: 0 });
      // Default: the 24 hours before now (T0 + 3 h): 2 of 24 periods.
      h.clock.advance(30 * 60_000);
      const byDefault = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability`).expect(200);
      expect(byDefault.body).toEqual({ successRatio: { previousPeriod: 0, currentPeriod: 8.33 }, totalEntitiesCurrentPeriod: 3 });
    });

    it('availability answers null for a window that ends before the check existed', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const res = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability?startTime=2026-04-01T00:00:00Z&endTime=2026-04-02T00:00:00Z`).expect(200);
      expect(res.text).toBe('null');
    });

    it('availability answers 404 for a check that is not a heartbeat, an unknown id and another account\'s heartbeat', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      expect404(await h.a.get(`/api/v1/checks/heartbeats/${tcp.id}/availability`));
      expect404(await h.a.get(`/api/v1/checks/heartbeats/${MISSING_UUID}/availability`));
      expect404(await h.b.get(`/api/v1/checks/heartbeats/${heartbeat.id}/availability`));
    });

    it('availability answers 400 for a malformed startTime/endTime and for endTime not after startTime', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const path = `/api/v1/checks/heartbeats/${check.id}/availability`;
      expect400(await h.a.get(`${path}?startTime=yesterday`), 'query', 'startTime');
      expect400(await h.a.get(`${path}?endTime=2026-02-31`), 'query', 'endTime');
      expect400(await h.a.get(`${path}?startTime=2026-05-01T10:00:00Z&endTime=2026-05-01T09:00:00Z`), 'query', 'endTime');
      expect400(await h.a.get(`${path}?startTime=2026-05-01T10:00:00Z&endTime=2026-05-01T10:00:00Z`), 'query', 'endTime');
      await h.a.get(`${path}?startTime=2026-05-01&endTime=2026-05-02`).expect(200);
    });
  });

  describe('check groups', () => {
    it('POST /v2/check-groups answers 201 with the spec defaults; GET /v1 and /v2 read it back', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      expect(group).toEqual({
        id: expect.any(Number),
        name: 'backend',
        activated: true,
        muted: false,
        tags: [],
        locations: [],
        concurrency: 3,
        apiCheckDefaults: { url: '', headers: [], queryParameters: [], assertions: [], basicAuth: { username: '', password: '' } },
        browserCheckDefaults: null,
        runtimeId: null,
        environmentVariables: [],
        alertChannelSubscriptions: [],
        setupSnippetId: null,
        tearDownSnippetId: null,
        localSetupScript: null,
        localTearDownScript: null,
        privateLocations: [],
        runParallel: false,
        alertSettings: DEFAULT_ALERT_SETTINGS,
        retryStrategy: 'FALLBACK',
        useGlobalAlertSettings: true,
        doubleCheck: false,
        created_at: T0,
        updated_at: null,
      });
      expect((await h.a.get(`/api/v2/check-groups/${group.id}`).expect(200)).body).toEqual(group);
      expect((await h.a.get(`/api/v1/check-groups/${group.id}`).expect(200)).body).toEqual(group);
      // Groups are written under /v2 only.
      expect404(await h.a.post('/api/v1/check-groups', { name: 'v1' }));
      expect404(await h.a.put(`/api/v1/check-groups/${group.id}`, { name: 'v1' }));
      expect404(await h.a.delete(`/api/v1/check-groups/${group.id}`));
      expect((await h.a.get('/api/v2/check-groups').expect(200)).body).toHaveLength(1);
    });

    it('POST /v2/check-groups stores the given fields, with FALLBACK or an object as retryStrategy', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', {
        name: 'frontend',
        activated: false,
        muted: true,
        tags: ['web'],
        locations: ['eu-west-1'],
        concurrency: 1,
        apiCheckDefaults: { url: 'https://api.example.com', headers: [{ key: 'X-Env', value: 'prod' }], assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        runtimeId: '2025.04',
        retryStrategy: { type: 'EXPONENTIAL', baseBackoffSeconds: 2 },
        runParallel: true,
      }));
      expect(group).toMatchObject({
        name: 'frontend', activated: false, muted: true, tags: ['web'], locations: ['eu-west-1'], concurrency: 1, runtimeId: '2025.04', runParallel: true,
        apiCheckDefaults: { url: 'https://api.example.com', headers: [{ key: 'X-Env', value: 'prod' }], assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
        retryStrategy: { type: 'EXPONENTIAL', baseBackoffSeconds: 2, maxRetries: 2 },
      });
      const fallback = await created(h.a.post('/api/v2/check-groups', { name: 'explicit', retryStrategy: 'FALLBACK' }));
      expect(fallback.retryStrategy).toBe('FALLBACK');
    });

    it('POST /v2/check-groups answers 400 naming each violated constraint and stores nothing', async () => {
      const vars = (n: number) => Array.from({ length: n }, (_x, i) => ({ key: `VAR_${i}`, value: String(i) }));
      const cases: [Body, string[]][] = [
        [{}, ['name']],
        [{ concurrency: 3 }, ['name']],
        [{ name: ' ' }, ['name']],
        [{ name: 'g', concurrency: 0 }, ['concurrency']],
        [{ name: 'g', concurrency: 1.5 }, ['concurrency']],
        [{ name: 'g', locations: ['nowhere-1'] }, ['locations.0']],
        [{ name: 'g', runtimeId: '1999.01' }, ['runtimeId']],
        [{ name: 'g', retryStrategy: 'SOMETIMES' }, ['retryStrategy']],
        [{ name: 'g', environmentVariables: vars(101) }, ['environmentVariables.100']],
        [{ name: 'g', environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }, ['environmentVariables.1.key']],
        [{ name: 'g', apiCheckDefaults: { assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS' }] } }, ['apiCheckDefaults.assertions.0.source']],
        [{ name: 'g', apiCheckDefaults: { headers: [{ key: '', value: 'x' }] } }, ['apiCheckDefaults.headers.0.key']],
        [{ name: 'g', setupSnippetId: 0 }, ['setupSnippetId']],
        [{ name: 'g', alertSettings: { reminders: { interval: 60 } } }, ['alertSettings.reminders.interval']],
        [{ name: 'g', alertChannelSubscriptions: [{ alertChannelId: 987654 }] }, ['alertChannelSubscriptions.0.alertChannelId']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v2/check-groups', body), 'payload', ...keys);
      }
      expect400(await h.a.post('/api/v2/check-groups?autoAssignAlerts=no', { name: 'g' }), 'query', 'autoAssignAlerts');
      expect(await h.vigil.storage.checkGroups.listAll(h.a.accountId)).toEqual([]);
    });

    it('POST /v2/check-groups subscribes the new group to the account\'s channels unless autoAssignAlerts=false, and masks secret variables', async () => {
      const channel = await created(h.a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } }));
      const assigned = await created(h.a.post('/api/v2/check-groups', { name: 'g1' }));
      expect(assigned.alertChannelSubscriptions).toEqual([{ alertChannelId: channel.id, activated: true }]);
      const unassigned = await created(h.a.post('/api/v2/check-groups?autoAssignAlerts=false', { name: 'g2' }));
      expect(unassigned.alertChannelSubscriptions).toEqual([]);
      const secret = await created(h.a.post('/api/v2/check-groups', {
        name: 'g3',
        environmentVariables: [{ key: 'API_KEY', value: 'group-secret', secret: true }, { key: 'REGION', value: 'eu' }],
      }));
      expect(secret.environmentVariables).toEqual([
        { key: 'API_KEY', value: MASK, locked: false, secret: true },
        { key: 'REGION', value: 'eu', locked: false, secret: false },
      ]);
      for (const path of [`/api/v2/check-groups/${secret.id}`, `/api/v1/check-groups/${secret.id}`, '/api/v2/check-groups', '/api/v1/check-groups']) {
        expect((await h.a.get(path).expect(200)).text, path).not.toContain('group-secret');
      }
      expect(JSON.stringify(await h.vigil.storage.checkGroups.get(h.a.accountId, secret.id))).not.toContain('group-secret');
    });

    it('GET /v1/check-groups and /v2/check-groups page with limit/page and report the total in Content-Range', async () => {
      for (let i = 0; i < 3; i++) await h.a.post('/api/v2/check-groups', { name: `g${i}` }).expect(201);
      await h.b.post('/api/v2/check-groups', { name: "b's" }).expect(201);
      for (const v of ['v1', 'v2']) {
        const all = await h.a.get(`/api/${v}/check-groups`).expect(200);
        expect(all.headers['content-range'], v).toBe('0-2/3');
        expect(all.body.map((g: { name: string }) => g.name).sort()).toEqual(['g0', 'g1', 'g2']);
        const second = await h.a.get(`/api/${v}/check-groups?limit=2&page=2`).expect(200);
        expect(second.headers['content-range'], v).toBe('2-2/3');
        expect(second.body).toHaveLength(1);
        const empty = await h.a.get(`/api/${v}/check-groups?limit=2&page=9`).expect(200);
        expect(empty.body).toEqual([]);
        expect(empty.headers['content-range']).toBe('*/3');
        expect400(await h.a.get(`/api/${v}/check-groups?limit=101`), 'query', 'limit');
        expect400(await h.a.get(`/api/${v}/check-groups?page=0`), 'query', 'page');
      }
    });

    it('GET /{v}/check-groups/{id} answers 400 for a malformed id and 404 for an unknown or another account\'s group', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      for (const v of ['v1', 'v2']) {
        expect400(await h.a.get(`/api/${v}/check-groups/abc`), 'params', 'id');
        expect400(await h.a.get(`/api/${v}/check-groups/0`), 'params', 'id');
        expect400(await h.a.get(`/api/${v}/check-groups/1.5`), 'params', 'id');
        expect404(await h.a.get(`/api/${v}/check-groups/987654`));
        expect404(await h.b.get(`/api/${v}/check-groups/${group.id}`));
      }
    });

    it('PUT /v2/check-groups/{id} requires name, replaces the given fields and keeps the others', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend', tags: ['api'], concurrency: 5 }));
      h.clock.advance(5_000);
      const put = await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'backend v2', activated: false }).expect(200);
      expect(put.body).toEqual({ ...group, name: 'backend v2', activated: false, updated_at: new Date(T0_MS + 5_000).toISOString() });
      expect((await h.a.get(`/api/v1/check-groups/${group.id}`).expect(200)).body).toEqual(put.body);
      const before = JSON.stringify(await h.vigil.storage.checkGroups.get(h.a.accountId, group.id));
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { concurrency: 3 }), 'payload', 'name');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', concurrency: 0 }), 'payload', 'concurrency');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', locations: ['moon-1'] }), 'payload', 'locations.0');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', retryStrategy: { type: 'FIXED', maxRetries: 0 } }), 'payload', 'retryStrategy.maxRetries');
      expect400(await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'x', alertChannelSubscriptions: [{ alertChannelId: 987654 }] }), 'payload', 'alertChannelSubscriptions.0.alertChannelId');
      expect400(await h.a.put('/api/v2/check-groups/abc', { name: 'x' }), 'params', 'id');
      expect404(await h.a.put('/api/v2/check-groups/987654', { name: 'x' }));
      expect(JSON.stringify(await h.vigil.storage.checkGroups.get(h.a.accountId, group.id))).toBe(before);
    });

    it('PUT and DELETE of another account\'s group answer 404 and leave it unchanged', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const before = await snapshotA(h);
      await expectHiddenFromB(h, [
        ['get', `/api/v1/check-groups/${group.id}`],
        ['get', `/api/v2/check-groups/${group.id}`],
        ['put', `/api/v2/check-groups/${group.id}`, { name: 'taken over' }],
        ['delete', `/api/v2/check-groups/${group.id}`],
        ['get', `/api/v1/check-groups/${group.id}/checks`],
        ['get', `/api/v2/check-groups/${group.id}/checks`],
      ]);
      expect(await snapshotA(h)).toBe(before);
    });

    it('DELETE /v2/check-groups/{id} answers 409 while the group has checks, 204 once it is empty', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const member = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ groupId: group.id })));
      const before = await snapshotA(h);
      const conflict = await h.a.delete(`/api/v2/check-groups/${group.id}`);
      expectError(conflict, 409, 'Conflict');
      expect(await snapshotA(h)).toBe(before);
      await h.a.get(`/api/v2/check-groups/${group.id}`).expect(200);
      await h.a.put(`/api/v1/checks/tcp/${member.id}`, { groupId: null }).expect(200);
      const res = await h.a.delete(`/api/v2/check-groups/${group.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect404(await h.a.get(`/api/v2/check-groups/${group.id}`));
      expect404(await h.a.delete(`/api/v2/check-groups/${group.id}`));
      expect400(await h.a.delete('/api/v2/check-groups/abc'), 'params', 'id');
      // The former member is untouched.
      expect((await h.a.get(`/api/v1/checks/${member.id}`).expect(200)).body.groupId).toBeNull();
    });

    it('GET /{v}/check-groups/{id}/checks lists the group\'s members only, paged with Content-Range', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const other = await created(h.a.post('/api/v2/check-groups', { name: 'other' }));
      const members = [
        await created(h.a.post('/api/v1/checks/tcp', tcpBody({ groupId: group.id }))),
        await created(h.a.post('/api/v1/checks/browser', browserBody({ groupId: group.id }))),
        await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody({ groupId: group.id }))),
      ];
      await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'loner' })));
      await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'elsewhere', groupId: other.id })));
      const ids = members.map((c) => c.id).sort();
      for (const v of ['v1', 'v2']) {
        const all = await h.a.get(`/api/${v}/check-groups/${group.id}/checks`).expect(200);
        expect(all.headers['content-range'], v).toBe('0-2/3');
        expect(all.body.map((c: { id: string }) => c.id).sort()).toEqual(ids);
        expect(all.body.every((c: { groupId: number }) => c.groupId === group.id)).toBe(true);
        const page = await h.a.get(`/api/${v}/check-groups/${group.id}/checks?limit=2&page=2`).expect(200);
        expect(page.headers['content-range']).toBe('2-2/3');
        expect(page.body).toHaveLength(1);
        expect400(await h.a.get(`/api/${v}/check-groups/${group.id}/checks?limit=0`), 'query', 'limit');
        expect400(await h.a.get(`/api/${v}/check-groups/x/checks`), 'params', 'id');
        expect404(await h.a.get(`/api/${v}/check-groups/987654/checks`));
      }
      const empty = await h.a.post('/api/v2/check-groups', { name: 'empty' }).expect(201);
      const none = await h.a.get(`/api/v2/check-groups/${empty.body.id}/checks`).expect(200);
      expect(none.body).toEqual([]);
      expect(none.headers['content-range']).toBe('*/0');
    });
  });

  describe('check results and statuses', () => {
    async function seedResults() {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const at = (min: number) => new Date(T0_MS + min * 60_000).toISOString();
      const results = [
        checkResultFixture(check.id, { startedAt: at(0), name: 'orders-db' }),
        checkResultFixture(check.id, { startedAt: at(10), name: 'orders-db', hasFailures: true, errorMessage: 'Connection refused', resultType: 'ATTEMPT' }),
        checkResultFixture(check.id, { startedAt: at(20), name: 'orders-db' }),
      ];
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, results);
      return { check, results, at };
    }

    it('GET /v1/check-results/{checkId} lists a check\'s results newest first, paged with Content-Range', async () => {
      const { check, results, at } = await seedResults();
      const other = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'other' })));
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [checkResultFixture(other.id)]);
      const all = await h.a.get(`/api/v1/check-results/${check.id}`).expect(200);
      expect(all.headers['content-range']).toBe('0-2/3');
      expect(all.body.map((r: { id: string }) => r.id)).toEqual([results[2]!.id, results[1]!.id, results[0]!.id]);
      const { accountId: _ignored, ...expected } = { ...results[1]!, accountId: '' };
      expect(all.body[1]).toEqual(expected);
      expect(all.body[1]).not.toHaveProperty('accountId');
      const page2 = await h.a.get(`/api/v1/check-results/${check.id}?limit=2&page=2`).expect(200);
      expect(page2.headers['content-range']).toBe('2-2/3');
      expect(page2.body.map((r: { id: string }) => r.id)).toEqual([results[0]!.id]);
      const attempts = await h.a.get(`/api/v1/check-results/${check.id}?resultType=ATTEMPT`).expect(200);
      expect(attempts.body.map((r: { id: string }) => r.id)).toEqual([results[1]!.id]);
      expect(attempts.headers['content-range']).toBe('0-0/1');
      const windowed = await h.a.get(`/api/v1/check-results/${check.id}?from=${at(5)}&to=${at(25)}`).expect(200);
      expect(windowed.body.map((r: { id: string }) => r.id)).toEqual([results[2]!.id, results[1]!.id]);
      const none = await h.a.get(`/api/v1/check-results/${check.id}?from=2026-06-01`).expect(200);
      expect(none.body).toEqual([]);
      expect(none.headers['content-range']).toBe('*/0');
    });

    it('GET /v1/check-results/{checkId} answers 400 for a bad query and 404 for an unknown or another account\'s check', async () => {
      const { check } = await seedResults();
      const path = `/api/v1/check-results/${check.id}`;
      expect400(await h.a.get(`${path}?limit=0`), 'query', 'limit');
      expect400(await h.a.get(`${path}?limit=101`), 'query', 'limit');
      expect400(await h.a.get(`${path}?page=0`), 'query', 'page');
      expect400(await h.a.get(`${path}?resultType=FIRST`), 'query', 'resultType');
      expect400(await h.a.get(`${path}?from=last-tuesday`), 'query', 'from');
      expect400(await h.a.get(`${path}?from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z`), 'query', 'to');
      expect404(await h.a.get(`/api/v1/check-results/${MISSING_UUID}`));
      expect404(await h.b.get(path));
    });

    it('GET /v1/check-results/{checkId}/{checkResultId} answers the result, and 404 through another check, for an unknown id or for account b', async () => {
      const { check, results } = await seedResults();
      const other = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'other' })));
      const res = await h.a.get(`/api/v1/check-results/${check.id}/${results[1]!.id}`).expect(200);
      const { accountId: _ignored, ...expected } = { ...results[1]!, accountId: '' };
      expect(res.body).toEqual(expected);
      expect404(await h.a.get(`/api/v1/check-results/${other.id}/${results[1]!.id}`));
      expect404(await h.a.get(`/api/v1/check-results/${check.id}/${MISSING_UUID}`));
      expect404(await h.b.get(`/api/v1/check-results/${check.id}/${results[1]!.id}`));
    });

    it('GET /v1/check-statuses answers every check of the account: its stored status, or a no-runs-yet one', async () => {
      const failing = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'failing' })));
      const fresh = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody({ name: 'fresh' })));
      await created(h.b.post('/api/v1/checks/tcp', tcpBody({ name: "b's" })));
      const status = checkStatusFixture(failing.id, { name: 'stale name', hasFailures: true, longestRun: 900, shortestRun: 15, lastRunLocation: 'eu-west-1', updated_at: T0 });
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, status);
      const res = await h.a.get('/api/v1/check-statuses').expect(200);
      const byId = new Map<string, any>(res.body.map((s: { checkId: string }) => [s.checkId, s]));
      expect(res.body).toHaveLength(2);
      expect(byId.get(failing.id)).toEqual({
        name: 'failing',
        checkId: failing.id,
        hasFailures: true,
        hasErrors: false,
        isDegraded: false,
        longestRun: 900,
        shortestRun: 15,
        lastRunLocation: 'eu-west-1',
        lastCheckRunId: status.lastCheckRunId,
        sslDaysRemaining: null,
        created_at: status.created_at,
        updated_at: T0,
      });
      expect(byId.get(fresh.id)).toEqual({
        name: 'fresh',
        checkId: fresh.id,
        hasFailures: false,
        hasErrors: false,
        isDegraded: false,
        longestRun: null,
        shortestRun: null,
        lastRunLocation: null,
        lastCheckRunId: null,
        sslDaysRemaining: null,
        created_at: T0,
        updated_at: null,
      });
      const theirs = await h.b.get('/api/v1/check-statuses').expect(200);
      expect(theirs.body.map((s: { name: string }) => s.name)).toEqual(["b's"]);
    });

    it('GET /v1/check-statuses/{checkId} answers the check\'s status, and 404 for an unknown or another account\'s check', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const fresh = await h.a.get(`/api/v1/check-statuses/${check.id}`).expect(200);
      expect(fresh.body).toMatchObject({ checkId: check.id, name: 'orders-db', hasFailures: false, lastCheckRunId: null, updated_at: null });
      const status = checkStatusFixture(check.id, { isDegraded: true, sslDaysRemaining: 12 });
      await h.vigil.storage.checkStatuses.upsert(h.a.accountId, status);
      const res = await h.a.get(`/api/v1/check-statuses/${check.id}`).expect(200);
      expect(res.body).toMatchObject({ checkId: check.id, name: 'orders-db', isDegraded: true, sslDaysRemaining: 12, lastCheckRunId: status.lastCheckRunId });
      expect(res.body).not.toHaveProperty('accountId');
      expect404(await h.a.get(`/api/v1/check-statuses/${MISSING_UUID}`));
      expect404(await h.b.get(`/api/v1/check-statuses/${check.id}`));
    });
  });

  describe('check sessions', () => {
    const trigger = (c: ApiClient, body?: Body) => c.post('/api/v1/check-sessions/trigger', body);

    /** A session of a's first check set to a status through storage, as the engine would. */
    async function setStatus(checkSessionId: string, status: 'PASSED' | 'FAILED' | 'PROGRESS') {
      const stored = await h.vigil.storage.checkSessions.get(h.a.accountId, checkSessionId);
      expect(stored).not.toBeNull();
      const { accountId: _a, ...rest } = stored!;
      const final = status !== 'PROGRESS';
      await h.vigil.storage.checkSessions.update(h.a.accountId, {
        ...rest,
        status,
        sequences: rest.sequences.map((s) => ({ ...s, status })),
        stoppedAt: final ? h.clock.now().toISOString() : null,
        timeElapsed: final ? h.clock.now().getTime() - Date.parse(rest.startedAt) : null,
      });
    }

    it('POST /v1/check-sessions/trigger answers 201 {sessions} with one STARTED session per activated check', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody({ locations: ['eu-west-1', 'ap-south-1'] })));
      const parallel = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'parallel', locations: ['eu-west-1', 'us-west-2'], runParallel: true })));
      await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'off', activated: false })));
      const res = await trigger(h.a).expect(201);
      expect(Object.keys(res.body)).toEqual(['sessions']);
      const sessions: any[] = res.body.sessions;
      expect(sessions.map((s) => s.checkId).sort()).toEqual([tcp.id, browser.id, parallel.id].sort());
      const byCheck = new Map(sessions.map((s) => [s.checkId, s]));
      expect(byCheck.get(tcp.id)).toEqual({
        checkSessionId: expect.stringMatching(UUID_RE),
        checkId: tcp.id,
        checkType: 'TCP',
        name: 'orders-db',
        status: 'STARTED',
        startedAt: T0,
        stoppedAt: null,
        timeElapsed: null,
        runLocations: ['us-east-1'],
        runSource: 'TRIGGER_API',
        projectId: null,
        environment: null,
        sequences: [{ sequenceId: expect.stringMatching(UUID_RE), runLocation: 'us-east-1', status: 'STARTED' }],
        results: [],
      });
      // Without runParallel an on-demand run goes to one location; with it, to every one.
      expect(byCheck.get(browser.id)).toMatchObject({ checkType: 'BROWSER', runLocations: ['eu-west-1'] });
      expect(byCheck.get(browser.id).sequences).toHaveLength(1);
      expect(byCheck.get(parallel.id).runLocations).toEqual(['eu-west-1', 'us-west-2']);
      expect(byCheck.get(parallel.id).sequences.map((s: { runLocation: string }) => s.runLocation)).toEqual(['eu-west-1', 'us-west-2']);
      expect(new Set(sessions.map((s) => s.checkSessionId)).size).toBe(3);
      for (const s of sessions) {
        const stored = await h.vigil.storage.checkSessions.get(h.a.accountId, s.checkSessionId);
        expect(stored?.status).toBe('STARTED');
      }
      // An empty body and an empty target are the same as no body.
      expect((await trigger(h.a, {}).expect(201)).body.sessions).toHaveLength(3);
      expect((await trigger(h.a, { target: {} }).expect(201)).body.sessions).toHaveLength(3);
    });

    it('trigger with a projectId starts a test session (runSource TEST)', async () => {
      await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const { body } = await trigger(h.a, { projectId: 'web-app', environment: 'staging' }).expect(201);
      expect(body.sessions[0]).toMatchObject({ runSource: 'TEST', projectId: 'web-app', environment: 'staging' });
    });

    it('trigger target filters: checkId, matchTags (outer OR, inner AND, ! negates, group tags count), both together', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'g', tags: ['grouped'] }));
      const db = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'db', tags: ['prod', 'db'] })));
      const web = await created(h.a.post('/api/v1/checks/browser', browserBody({ name: 'web', tags: ['prod', 'web'] })));
      const stage = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'stage', tags: ['staging'] })));
      const member = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'member', groupId: group.id })));
      const off = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'off', tags: ['prod'], activated: false })));
      const names = async (body: Body) => {
        const res = await trigger(h.a, body);
        expect(res.status, JSON.stringify(body)).toBe(201);
        return res.body.sessions.map((s: { name: string }) => s.name).sort();
      };
      expect(await names({ target: { checkId: [db.id] } })).toEqual(['db']);
      expect(await names({ target: { checkId: [db.id.toUpperCase(), stage.id] } })).toEqual(['db', 'stage']);
      expect(await names({ target: { matchTags: [['prod']] } })).toEqual(['db', 'web']);
      expect(await names({ target: { matchTags: [['prod', 'db']] } })).toEqual(['db']);
      expect(await names({ target: { matchTags: [['prod', '!web']] } })).toEqual(['db']);
      expect(await names({ target: { matchTags: [['staging'], ['web']] } })).toEqual(['stage', 'web']);
      expect(await names({ target: { matchTags: [['!prod']] } })).toEqual(['member', 'stage']);
      expect(await names({ target: { matchTags: [['grouped']] } })).toEqual(['member']);
      expect(await names({ target: { checkId: [db.id, web.id, member.id], matchTags: [['web'], ['grouped']] } })).toEqual(['member', 'web']);
      // 404 when nothing matches: unknown tag, a deactivated check, both filters disjoint, another account's check.
      const nothing: Body[] = [
        { target: { matchTags: [['nope']] } },
        { target: { checkId: [off.id] } },
        { target: { checkId: [MISSING_UUID] } },
        { target: { checkId: [db.id], matchTags: [['web']] } },
      ];
      for (const body of nothing) expect404(await trigger(h.a, body));
      expect404(await trigger(h.b, { target: { checkId: [db.id] } }));
      expect404(await trigger(h.b));
      // A group that is deactivated stops its members.
      await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'g', activated: false }).expect(200);
      expect404(await trigger(h.a, { target: { checkId: [member.id] } }));
    });

    it('trigger answers 400 for a malformed body and starts nothing', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const cases: [unknown, string[]][] = [
        [{ target: { checkId: ['not-a-uuid'] } }, ['target.checkId.0']],
        [{ target: { checkId: [check.id, 'x'] } }, ['target.checkId.1']],
        [{ target: { checkId: [] } }, ['target.checkId']],
        [{ target: { checkId: check.id } }, ['target.checkId']],
        [{ target: { matchTags: [[]] } }, ['target.matchTags.0']],
        [{ target: { matchTags: ['prod'] } }, ['target.matchTags.0']],
        [{ target: { matchTags: [['prod', '']] } }, ['target.matchTags.0.1']],
        [{ target: 'all' }, ['target']],
        [{ projectId: '' }, ['projectId']],
        [{ projectId: 'p'.repeat(256) }, ['projectId']],
        [{ environment: 'e'.repeat(256) }, ['environment']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v1/check-sessions/trigger', body), 'payload', ...keys);
      }
    });

    it('GET /v1/check-sessions/{id} answers the session with its results; 400 for a non-UUID id; 404 unknown or for account b', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const read = await h.a.get(`/api/v1/check-sessions/${session.checkSessionId}`).expect(200);
      expect(read.body).toEqual(session);
      const result = checkResultFixture(check.id, { checkSessionId: session.checkSessionId, sequenceId: session.sequences[0].sequenceId, runSource: 'TRIGGER_API' });
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [result, checkResultFixture(check.id)]);
      const withResults = await h.a.get(`/api/v1/check-sessions/${session.checkSessionId}`).expect(200);
      expect(withResults.body.results.map((r: { id: string }) => r.id)).toEqual([result.id]);
      expect(withResults.body.results[0]).not.toHaveProperty('accountId');
      for (const path of ['/api/v1/check-sessions/not-a-uuid', '/api/v1/check-sessions/not-a-uuid/completion?maxWaitSeconds=1']) {
        expect400(await h.a.get(path), 'params', 'checkSessionId');
      }
      expect400(await h.a.post('/api/v1/check-sessions/12345/cancel', {}), 'params', 'checkSessionId');
      expect404(await h.a.get(`/api/v1/check-sessions/${MISSING_UUID}`));
      expect404(await h.a.get(`/api/v1/check-sessions/${MISSING_UUID}/completion?maxWaitSeconds=1`));
      expect404(await h.a.post(`/api/v1/check-sessions/${MISSING_UUID}/cancel`, {}));
      expect404(await h.b.get(`/api/v1/check-sessions/${session.checkSessionId}`));
    });

    it('GET .../completion answers 408 in the spec error shape once maxWaitSeconds pass with the session still pending', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const id: string = session.checkSessionId;
      const started = h.clock.now().getTime();
      const res = await withClock(h, h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=1`), () => {
        h.clock.advance(250);
      });
      expect(res.status).toBe(408);
      expect(res.body).toEqual({ statusCode: 408, error: 'Request Timeout', message: expect.stringContaining(id) });
      // It waited the whole second of clock time, not less.
      expect(h.clock.now().getTime() - started).toBe(1_000);
      expect(h.clock.pendingTimers).toBe(0);
      // A session that has moved on but is not final is still pending.
      await setStatus(id, 'PROGRESS');
      const progress = await withClock(h, h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=2`), () => {
        h.clock.advance(500);
      });
      expect(progress.status).toBe(408);
      expect(progress.body.message).toContain('PROGRESS');
    });

    it('GET .../completion answers 200 with the session as soon as it becomes final, and at once when it already is', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const id: string = session.checkSessionId;
      const started = h.clock.now().getTime();
      let finished = false;
      const res = await withClock(h, h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=30`), async () => {
        if (!finished) {
          finished = true;
          await setStatus(id, 'PASSED');
        }
        h.clock.advance(250);
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ checkSessionId: id, checkId: check.id, status: 'PASSED', results: [] });
      // It answered at the next poll, long before the 30 s were over.
      expect(h.clock.now().getTime() - started).toBe(250);
      expect(h.clock.pendingTimers).toBe(0);

      const [failed] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      await setStatus(failed.checkSessionId, 'FAILED');
      const now = h.clock.now().getTime();
      const immediate = await h.a.get(`/api/v1/check-sessions/${failed.checkSessionId}/completion?maxWaitSeconds=1`).expect(200);
      expect(immediate.body).toMatchObject({ checkSessionId: failed.checkSessionId, status: 'FAILED' });
      expect(h.clock.now().getTime()).toBe(now);
    });

    it('GET .../completion answers 400 for maxWaitSeconds outside 1..30 and 404 for account b', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const path = `/api/v1/check-sessions/${session.checkSessionId}/completion`;
      expect400(await h.a.get(`${path}?maxWaitSeconds=0`), 'query', 'maxWaitSeconds');
      expect400(await h.a.get(`${path}?maxWaitSeconds=31`), 'query', 'maxWaitSeconds');
      expect400(await h.a.get(`${path}?maxWaitSeconds=soon`), 'query', 'maxWaitSeconds');
      expect404(await h.b.get(`${path}?maxWaitSeconds=1`));
      expect(h.clock.pendingTimers).toBe(0);
    });

    it('POST .../cancel answers 202 with the session CANCELLED; the listed sequences only when sequenceId is given', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ locations: ['eu-west-1', 'us-west-2'], runParallel: true })));
      const [all] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      h.clock.advance(3_000);
      const cancelled = await h.a.post(`/api/v1/check-sessions/${all.checkSessionId}/cancel`, {});
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202);
      expect(cancelled.body).toEqual({
        ...all,
        status: 'CANCELLED',
        stoppedAt: new Date(T0_MS + 3_000).toISOString(),
        timeElapsed: 3_000,
        sequences: all.sequences.map((s: Body) => ({ ...s, status: 'CANCELLED' })),
      });
      expect((await h.a.get(`/api/v1/check-sessions/${all.checkSessionId}`).expect(200)).body).toEqual(cancelled.body);
      expect((await h.a.get(`/api/v1/check-sessions/${all.checkSessionId}/completion?maxWaitSeconds=1`).expect(200)).body.status).toBe('CANCELLED');
      // Without a body at all, too.
      const [bare] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      expect((await h.a.post(`/api/v1/check-sessions/${bare.checkSessionId}/cancel`).expect(202)).body.status).toBe('CANCELLED');

      const [some] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const [first, second] = some.sequences;
      const partial = await h.a.post(`/api/v1/check-sessions/${some.checkSessionId}/cancel`, { sequenceId: [first.sequenceId] }).expect(202);
      expect(partial.body.sequences).toEqual([{ ...first, status: 'CANCELLED' }, second]);
      expect(partial.body).toMatchObject({ status: 'PROGRESS', stoppedAt: null, timeElapsed: null });
      const rest = await h.a.post(`/api/v1/check-sessions/${some.checkSessionId}/cancel`, { sequenceId: [second.sequenceId] }).expect(202);
      expect(rest.body.status).toBe('CANCELLED');
    });

    it('POST .../cancel leaves a final session as it is', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      await setStatus(session.checkSessionId, 'PASSED');
      const before = await h.vigil.storage.checkSessions.get(h.a.accountId, session.checkSessionId);
      h.clock.advance(1_000);
      const res = await h.a.post(`/api/v1/check-sessions/${session.checkSessionId}/cancel`, {}).expect(202);
      expect(res.body.status).toBe('PASSED');
      expect(res.body.sequences.every((s: { status: string }) => s.status === 'PASSED')).toBe(true);
      expect(await h.vigil.storage.checkSessions.get(h.a.accountId, session.checkSessionId)).toEqual(before);
    });

    it('POST .../cancel answers 400 for a bad sequenceId and 404 for account b, leaving the session running', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const path = `/api/v1/check-sessions/${session.checkSessionId}/cancel`;
      expect400(await h.a.post(path, { sequenceId: [] }), 'payload', 'sequenceId');
      expect400(await h.a.post(path, { sequenceId: ['seq-1'] }), 'payload', 'sequenceId.0');
      expect400(await h.a.post(path, { sequenceId: session.sequences[0].sequenceId }), 'payload', 'sequenceId');
      expect404(await h.b.post(path, {}));
      expect404(await h.b.get(`/api/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=1`));
      const stored = await h.vigil.storage.checkSessions.get(h.a.accountId, session.checkSessionId);
      expect(stored?.status).toBe('STARTED');
      expect(stored?.sequences.map((s) => s.status)).toEqual(['STARTED']);
    });
  });

  describe('credentials', () => {
    /** One of everything in account a, and every route of this file with a's ids and a valid body. */
    async function routesOfA(): Promise<RouteCall[]> {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'backend' }));
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ groupId: group.id })));
      const api = await created(h.a.post('/api/v1/checks/api', apiBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const result = checkResultFixture(tcp.id);
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [result]);
      const [session] = (await h.a.post('/api/v1/check-sessions/trigger', { target: { checkId: [tcp.id] } }).expect(201)).body.sessions;
      const sid = session.checkSessionId as string;
      return [
        ['get', '/api/v1/checks'],
        ['get', `/api/v1/checks/${tcp.id}`],
        ['delete', `/api/v1/checks/${tcp.id}`],
        ['post', '/api/v1/checks/tcp', tcpBody({ name: 'new' })],
        ['post', '/api/v1/checks/api', apiBody({ name: 'new' })],
        ['post', '/api/v1/checks/browser', browserBody({ name: 'new' })],
        ['post', '/api/v1/checks/heartbeat', heartbeatBody({ name: 'new' })],
        ['get', `/api/v1/checks/tcp/${tcp.id}`],
        ['put', `/api/v1/checks/tcp/${tcp.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/tcp/${tcp.id}`],
        ['get', `/api/v1/checks/api/${api.id}`],
        ['put', `/api/v1/checks/api/${api.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/api/${api.id}`],
        ['get', `/api/v1/checks/browser/${browser.id}`],
        ['put', `/api/v1/checks/browser/${browser.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/browser/${browser.id}`],
        ['get', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['put', `/api/v1/checks/heartbeat/${heartbeat.id}`, { name: 'changed' }],
        ['delete', `/api/v1/checks/heartbeat/${heartbeat.id}`],
        ['get', `/api/v1/checks/heartbeats/${heartbeat.id}/availability`],
        ['get', '/api/v1/check-groups'],
        ['get', '/api/v2/check-groups'],
        ['get', `/api/v1/check-groups/${group.id}`],
        ['get', `/api/v2/check-groups/${group.id}`],
        ['get', `/api/v1/check-groups/${group.id}/checks`],
        ['get', `/api/v2/check-groups/${group.id}/checks`],
        ['post', '/api/v2/check-groups', { name: 'new' }],
        ['put', `/api/v2/check-groups/${group.id}`, { name: 'changed' }],
        ['delete', `/api/v2/check-groups/${group.id}`],
        ['get', `/api/v1/check-results/${tcp.id}`],
        ['get', `/api/v1/check-results/${tcp.id}/${result.id}`],
        ['get', '/api/v1/check-statuses'],
        ['get', `/api/v1/check-statuses/${tcp.id}`],
        ['post', '/api/v1/check-sessions/trigger', {}],
        ['get', `/api/v1/check-sessions/${sid}`],
        ['get', `/api/v1/check-sessions/${sid}/completion?maxWaitSeconds=1`],
        ['post', `/api/v1/check-sessions/${sid}/cancel`, {}],
      ];
    }

    it('every route answers 401 without credentials and 403 with a\'s key under b\'s account header, changing nothing', async () => {
      const routes = await routesOfA();
      const before = await snapshotA(h);
      const sessionIds = routes.flatMap(([, path]) => /check-sessions\/([0-9a-f-]{36})$/.exec(path)?.[1] ?? []);
      await expectAuthGuards(h, routes);
      expect(await snapshotA(h)).toBe(before);
      for (const id of sessionIds) {
        expect((await h.vigil.storage.checkSessions.get(h.a.accountId, id))?.status).toBe('STARTED');
      }
      expect(await h.vigil.storage.checks.listAll(h.b.accountId)).toEqual([]);
      expect(await h.vigil.storage.checkGroups.listAll(h.b.accountId)).toEqual([]);
      // The pending completion polls never started a timer.
      expect(h.clock.pendingTimers).toBe(0);
    });

    it('every route with an id answers 404 to account b for a\'s id and changes nothing', async () => {
      const withoutId = new Set([
        'get /api/v1/checks', 'post /api/v1/checks/tcp', 'post /api/v1/checks/api', 'post /api/v1/checks/browser', 'post /api/v1/checks/heartbeat',
        'get /api/v1/check-groups', 'get /api/v2/check-groups', 'post /api/v2/check-groups', 'get /api/v1/check-statuses',
        'post /api/v1/check-sessions/trigger',
      ]);
      const routes = (await routesOfA()).filter(([method, path]) => !withoutId.has(`${method} ${path}`));
      expect(routes.length).toBeGreaterThan(20);
      const before = await snapshotA(h);
      await expectHiddenFromB(h, routes);
      expect(await snapshotA(h)).toBe(before);
    });
  });
});
