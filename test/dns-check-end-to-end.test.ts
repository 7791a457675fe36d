/**
 * A DNS check end to end, as a host runs it: made through the public HTTP API on SQLite and
 * PostgreSQL with the DNS runner registered, scheduled against a name server on 127.0.0.1; its
 * results and status read back through the API; a wrong answer alerts a webhook, and the right one
 * again sends the recovery; the analytics of its runs read back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alertTransports } from '@vigil/alert-channels';
import { dnsRunner } from '@vigil/runner-dns';
import { startDnsServer, type ZoneRecord } from '../packages/runner-dns/test/support/dns-server.js';
import { advanceUntil, engineTrouble, startedProcess, STORES, webhookServer } from './support/engine-stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(STORES)('a DNS check made through the HTTP API (%s)', (kind) => {
  it('runs on its schedule, reads back its results and status, and alerts on a wrong answer and on its recovery', async () => {
    const zone: Record<string, ZoneRecord[]> = { 'shop.test': [{ type: 'A', data: '192.0.2.10' }] };
    const dns = await startDnsServer({ zone });
    cleanups.push(() => dns.close());
    const hook = await webhookServer();
    cleanups.push(() => hook.close());

    const { vigil, lines, clock, api, close } = await startedProcess(kind, 'vigil_dns_e2e', { runners: [dnsRunner()], transports: alertTransports() });
    cleanups.push(close);

    const { body: channel } = await api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hook.url } }).expect(201);
    const { body: check } = await api('post', '/v1/checks/dns', {
      name: 'shop A record', frequency: 1, doubleCheck: false,
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      request: { query: 'shop.test', nameServer: '127.0.0.1', port: dns.port, assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: '192.0.2.10' }] },
    }).expect(201);
    expect(check).toMatchObject({
      checkType: 'DNS', degradedResponseTime: 1000, maxResponseTime: 3000,
      request: { recordType: 'A', query: 'shop.test', nameServer: '127.0.0.1', port: dns.port, protocol: 'UDP' },
    });
    expect((await api('get', `/v1/checks/dns/${check.id}`).expect(200)).body).toMatchObject({ id: check.id, checkType: 'DNS' });
    await api('post', '/v1/checks/dns', { name: 'bad', request: { query: 'shop.test', recordType: 'AXFR' } }).expect(400);

    const results = async () => (await api('get', `/v1/check-results/${check.id}?limit=100`).expect(200)).body as Record<string, unknown>[];
    await advanceUntil(clock, [vigil], async () => (await results()).length > 0);
    const [first] = await results();
    expect(first).toMatchObject({ checkType: 'DNS', hasFailures: false, runSource: 'SCHEDULER' });
    expect(dns.received).toContain('UDP A shop.test');
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: false });

    zone['shop.test'] = [{ type: 'A', data: '203.0.113.9' }];
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 0);
    expect(hook.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_ID])).toEqual([['ALERT_FAILURE', check.id]]);
    const failing = (await results()).find((r) => r.hasFailures === true);
    expect(failing?.errorMessage ?? JSON.stringify(failing)).toContain('Assertion TEXT_ANSWER CONTAINS "192.0.2.10" failed: the answers were "203.0.113.9"');
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: true });

    zone['shop.test'] = [{ type: 'A', data: '192.0.2.10' }];
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 1);
    expect(hook.bodies.map((b) => b.ALERT_TYPE)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: false });

    // Analytics of its runs: availability is the share of passing runs, the response time theirs.
    const { body: analytics } = await api('get', `/v1/analytics/dns-checks/${check.id}?metrics=availability,responseTime_max`).expect(200);
    // The window ends now, exclusive: a run that started this instant is not in it.
    const all = (await results()).filter((r) => String(r.startedAt) < analytics.to);
    expect(all.length).toBeGreaterThan(1);
    expect(analytics.series).toHaveLength(1);
    expect(analytics.series[0].availability).toBeCloseTo((all.filter((r) => r.hasFailures === false).length / all.length) * 100, 6);
    expect(analytics.series[0].responseTime_max).toBe(Math.max(...all.map((r) => r.responseTime as number)));
    await api('get', `/v1/analytics/tcp-checks/${check.id}?metrics=availability`).expect(404);
    await api('get', `/v1/analytics/dns-checks/${check.id}?metrics=total_avg`).expect(400);
    expect(engineTrouble(lines)).toEqual([]);
  });
});
