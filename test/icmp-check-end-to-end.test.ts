/**
 * An ICMP check end to end, as a host runs it: made through the public HTTP API on SQLite and
 * PostgreSQL with the ICMP runner registered, scheduled against 127.0.0.1 with the system's ping;
 * its results and status read back through the API; a host that never answers alerts a webhook,
 * and answering again sends the recovery; the analytics of its runs read back.
 *
 * The runner pings through the loopback interface (`sourceInterface: 'lo'`), so the unanswered
 * host (203.0.113.1, a documentation address) stays on this machine: nobody on `lo` answers it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alertTransports } from '@vigil/alert-channels';
import { icmpRunner } from '@vigil/runner-icmp';
import { advanceUntil, engineTrouble, startedProcess, STORES, webhookServer } from './support/engine-stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(STORES)('an ICMP check made through the HTTP API (%s)', (kind) => {
  it('runs on its schedule, reads back its results and status, and alerts when the host stops answering and on its recovery', async () => {
    const hook = await webhookServer();
    cleanups.push(() => hook.close());
    const runner = icmpRunner({ sourceInterface: 'lo', intervalMs: 20 });
    const { vigil, lines, clock, api, close } = await startedProcess(kind, 'vigil_icmp_e2e', { runners: [runner], transports: alertTransports() });
    cleanups.push(close);

    const { body: channel } = await api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hook.url } }).expect(201);
    const { body: check } = await api('post', '/v1/checks/icmp', {
      name: 'loopback', frequency: 1, doubleCheck: false,
      alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
      request: { hostname: '127.0.0.1', pingCount: 3, timeout: 300, assertions: [{ source: 'LATENCY', property: 'max', comparison: 'LESS_THAN', target: '250' }] },
    }).expect(201);
    expect(check).toMatchObject({
      checkType: 'ICMP', degradedResponseTime: 500, maxResponseTime: 1000, degradedPacketLossThreshold: 10, maxPacketLossThreshold: 20,
      request: { hostname: '127.0.0.1', ipFamily: 'IPv4', pingCount: 3, timeout: 300 },
    });
    expect((await api('get', `/v1/checks/icmp/${check.id}`).expect(200)).body).toMatchObject({ id: check.id, checkType: 'ICMP' });
    const refused = await api('post', '/v1/checks/icmp', { name: 'bad', request: { hostname: '127.0.0.1', pingCount: 11 } }).expect(400);
    expect(refused.body.message).toContain('request.pingCount');

    const results = async () => (await api('get', `/v1/check-results/${check.id}?limit=100`).expect(200)).body as Record<string, unknown>[];
    await advanceUntil(clock, [vigil], async () => (await results()).length > 0);
    const [first] = await results();
    expect(first).toMatchObject({ checkType: 'ICMP', hasFailures: false, runSource: 'SCHEDULER', phases: { packetLoss: 0 } });
    expect(first!.responseTime).toBe((first!.phases as Record<string, number>).latencyAvg);
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: false });

    await api('put', `/v1/checks/icmp/${check.id}`, { request: { hostname: '203.0.113.1', pingCount: 3, timeout: 300 } }).expect(200);
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 0);
    expect(hook.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_ID])).toEqual([['ALERT_FAILURE', check.id]]);
    const failing = (await results()).find((r) => r.hasFailures === true);
    expect(failing).toMatchObject({ phases: { packetLoss: 100 } });
    expect(String(failing?.errorMessage)).toContain('203.0.113.1');
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: true });

    await api('put', `/v1/checks/icmp/${check.id}`, { request: { hostname: '127.0.0.1', pingCount: 3, timeout: 300 } }).expect(200);
    await advanceUntil(clock, [vigil], () => hook.bodies.length > 1);
    expect(hook.bodies.map((b) => b.ALERT_TYPE)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    expect((await api('get', `/v1/check-statuses/${check.id}`).expect(200)).body).toMatchObject({ hasFailures: false });

    // Analytics of its runs: availability is the share of passing runs; packet loss and latency theirs.
    const { body: analytics } = await api('get', `/v1/analytics/icmp-checks/${check.id}?metrics=availability,packetLoss_max,latencyMax_max`).expect(200);
    // The window ends now, exclusive: a run that started this instant is not in it.
    const all = (await results()).filter((r) => String(r.startedAt) < analytics.to);
    const phases = all.map((r) => r.phases as Record<string, number>);
    expect(all.length).toBeGreaterThan(1);
    expect(analytics.series).toHaveLength(1);
    expect(analytics.series[0].availability).toBeCloseTo((all.filter((r) => r.hasFailures === false).length / all.length) * 100, 6);
    expect(analytics.series[0].packetLoss_max).toBe(100);
    expect(analytics.series[0].latencyMax_max).toBe(Math.max(...phases.flatMap((p) => (p.latencyMax === undefined ? [] : [p.latencyMax]))));
    expect(analytics.metadata.packetLoss_max).toMatchObject({ unit: 'percent' });
    await api('get', `/v1/analytics/dns-checks/${check.id}?metrics=availability`).expect(404);
    await api('get', `/v1/analytics/icmp-checks/${check.id}?metrics=responseTime`).expect(400);
    expect(engineTrouble(lines)).toEqual([]);
  });
});
