/**
 * A URL check end to end, as a host runs it: made through the public HTTP API on SQLite and
 * PostgreSQL with the HTTP package's runners registered, scheduled against an HTTP server on
 * 127.0.0.1; a 503 alerts a webhook and a 200 again sends the recovery; its results, status and
 * analytics read back.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { alertTransports } from '@vigil/alert-channels';
import { httpRunner, urlRunner } from '@vigil/runner-http';
import { advanceUntil, engineTrouble, startedProcess, STORES, webhookServer } from './support/engine-stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(STORES)('a URL check made through the HTTP API (%s)', (kind) => {
  it('runs on its schedule, alerts on an unexpected status and on its recovery, and reads back results and analytics', async () => {
    let status = 200;
    const seen: string[] = [];
    const site = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(status, { 'content-type': 'text/plain' }).end('shop');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => {
      site.closeAllConnections();
      site.close(() => resolve());
    }));
    const hook = await webhookServer();
    cleanups.push(() => hook.close());

    const { vigil, lines, clock, api, close } = await startedProcess(kind, 'vigil_url_e2e', { runners: [httpRunner(), urlRunner()], transports: alertTransports() });
    cleanups.push(close);

    const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/health`;
    const { body: channel } = await api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hook.url } }).expect(201);
    const { body: check } = await api('post', '/v1/checks/url', {
      name: 'shop home', frequency: 1, doubleCheck: false, alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      request: { url, method: 'HEAD' },
    }).expect(201);
    expect(check).toMatchObject({
      checkType: 'URL', degradedResponseTime: 5000, maxResponseTime: 10000,
      request: { url, method: 'HEAD', followRedirects: true, skipSSL: false, ipFamily: 'IPv4', expectedStatus: '2xx' },
    });
    await api('post', '/v1/checks/url', { name: 'bad', request: { url: 'ftp://shop.example.com/', expectedStatus: '2xx' } }).expect(400);
    await api('post', '/v1/checks/url', { name: 'bad', request: { url, expectedStatus: '299-200' } }).expect(400);

    const results = async () => (await api('get', `/v1/check-results/${check.id}?limit=100`).expect(200)).body as Record<string, unknown>[];
    await advanceUntil(clock, [vigil], async () => (await results()).length > 0);
    expect((await results())[0]).toMatchObject({ checkType: 'URL', hasFailures: false, runSource: 'SCHEDULER' });
    expect(seen[0]).toBe('HEAD /health');

    status = 503;
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 0);
    expect(hook.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_ID])).toEqual([['ALERT_FAILURE', check.id]]);
    const failing = (await results()).find((r) => r.hasFailures === true);
    expect(failing?.errorMessage ?? JSON.stringify(failing)).toContain('the status code was 503');
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: true });

    status = 200;
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 1);
    expect(hook.bodies.map((b) => b.ALERT_TYPE)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);

    const { body: analytics } = await api('get', `/v1/analytics/url-checks/${check.id}?metrics=availability,responseTime_max`).expect(200);
    // The window ends now, exclusive: a run that started this instant is not in it.
    const all = (await results()).filter((r) => String(r.startedAt) < analytics.to);
    expect(all.length).toBeGreaterThan(1);
    expect(analytics.series[0].availability).toBeCloseTo((all.filter((r) => r.hasFailures === false).length / all.length) * 100, 6);
    await api('get', `/v1/analytics/api-checks/${check.id}?metrics=availability`).expect(404);
    expect(engineTrouble(lines)).toEqual([]);
  });
});
