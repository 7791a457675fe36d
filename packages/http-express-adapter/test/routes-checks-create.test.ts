/**
 * The check create routes of the HTTP API through the real Express router: POST of each type with
 * its defaults, the given fields and the constraints of its schema.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import type request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from './support/harness.js';
import { expect400 } from './support/expect.js';
import { T0, UUID_RE, type Body, created, tcpBody, describeOnBackends } from './support/routes.js';
import { CHECK_DEFAULTS } from '@vigil/core/testing';
import { browserBody, heartbeatBody, NO_ALERT_CHANNELS } from './support/checks.js';

describeOnBackends('check routes on %s', {}, (h) => {
  const countChecks = async (c: ApiClient = h.a) => (await h.vigil.storage.checks.listAll(c.accountId)).length;

  describe('checks', () => {
    it('POST /v1/checks/tcp answers 201 with the spec defaults; GET /v1/checks/{id} and /v1/checks/tcp/{id} read it back', async () => {
      const res = await h.a.post('/api/v1/checks/tcp', tcpBody()).expect(201);
      const check = res.body;
      expect(check).toEqual({
        id: expect.stringMatching(UUID_RE),
        checkType: 'TCP',
        name: 'orders-db',
        ...CHECK_DEFAULTS,
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

  });
});
