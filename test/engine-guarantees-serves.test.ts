/**
 * The engine's own jobs run in every process, whatever locations it serves: a process serving
 * every data-center location and no private one, and a process serving no location at all (an
 * API host beside the agents that run the checks), each send a failing check's reminders to a
 * webhook, look at a certificate and apply retention. Seen through the public HTTP API on SQLite
 * and PostgreSQL, with the real engine on a fake clock, a real webhook receiver, a real TLS server
 * whose certificate the real probe reads, and a TCP port that refuses connections.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServedLocations, Vigil } from '@vigil/core';
import { FakeClock } from '@vigil/core/testing';
import { registerAlertChannels } from '@vigil/alert-channels';
import { httpRunner } from '@vigil/runner-http';
import { tcpRunner } from '@vigil/runner-tcp';
import {
  advance, advanceUntil, apiOf, closedPort, DAY, engineTrouble, freshStore, HOUR, MINUTE, quiet, selfSignedCertificate, STORES,
  vigilProcess, webhookServer, type LogLine, type TestServer,
} from './support/engine-stack.js';

const DOMAIN = 'shop.test';
// On the hour, so that the hourly check's slot (6 s past it) comes at once; near the real time,
// so that the certificate made now has its days left.
const T0 = Math.floor(Date.now() / HOUR) * HOUR;
const CERT_DAYS = 10;

let tlsServer: https.Server;
let tlsPort: number;
let notAfter: Date;

beforeAll(async () => {
  const made = selfSignedCertificate(DOMAIN, CERT_DAYS);
  notAfter = made.notAfter;
  tlsServer = https.createServer({ cert: made.cert, key: made.key }, (_req, res) => res.end('ok')).listen(0, '127.0.0.1');
  await once(tlsServer, 'listening');
  tlsPort = (tlsServer.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (tlsServer ? tlsServer.close(() => resolve()) : resolve()));
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function keep<T extends TestServer>(server: T): T {
  cleanups.push(() => server.close());
  return server;
}

/** Stops (or closes) Vigils whose running jobs wait on the fake clock, moving it until they are done. */
async function endWhileAdvancing(clock: FakeClock, vigils: Vigil[], end: () => Promise<unknown>): Promise<void> {
  let done = false;
  const ending = end().finally(() => {
    done = true;
  });
  for (let i = 0; i < 100 && !done; i++) {
    clock.advance(1_000);
    await quiet(vigils, 50);
  }
  await ending;
}

type Body = Record<string, unknown>;
const alertTypes = (bodies: readonly Body[]) => bodies.map((b) => b.ALERT_TYPE);

describe.each(STORES)('the engine\'s own jobs in a process of any serves, on %s', (kind) => {
  it.each<[string, ServedLocations]>([
    ['every data-center location and no private one', { locations: 'all', privateLocations: [] }],
    ['no location at all', { locations: [], privateLocations: [] }],
  ])('a process serving %s sends reminders, looks at a certificate and applies retention', async (_what, serves) => {
    const storage = await freshStore(kind, 'vigil_serves');
    await storage.migrate();
    const clock = new FakeClock(T0);
    const alerting = (c: Parameters<typeof registerAlertChannels>[0]) => {
      // The certificate of shop.test is read from the local TLS server.
      registerAlertChannels(c, { certificates: { target: () => ({ host: '127.0.0.1', port: tlsPort }) } });
    };
    const { vigil, lines } = vigilProcess({
      storage, clock, serves,
      runners: [tcpRunner(), httpRunner({ lookup: async () => ({ address: '127.0.0.1', family: 4 }) })],
      engine: { retention: { days: 1 } },
    }, alerting);
    // Where this process runs no location, another one runs the failing check's first slot and then stops.
    const runsHere = serves.locations !== undefined && serves.locations.length > 0;
    const runner = runsHere ? null : vigilProcess({ storage, clock }, alerting);
    const vigils = [vigil, ...(runner ? [runner.vigil] : [])];
    cleanups.push(() => endWhileAdvancing(clock, vigils, async () => {
      await runner?.vigil.stop();
      await vigil.close();
    }));
    const { api, accountId } = await apiOf(vigil);
    for (const v of vigils) await v.start();

    const hook = keep(await webhookServer());
    const certs = keep(await webhookServer());
    const { body: onCall } = await api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'on-call', url: hook.url } }).expect(201);
    const { body: certChannel } = await api('post', '/v1/alert-channels', {
      type: 'WEBHOOK', config: { name: 'certificates', url: certs.url }, sendFailure: false, sendRecovery: false, sslExpiry: true, sslExpiryThreshold: 30,
    }).expect(201);
    // Hourly, so that the reminders a minute and two minutes after the failure come from alert ticks, not runs.
    const { body: check } = await api('post', '/v1/checks/tcp', {
      name: 'payments', frequency: 60, frequencyOffset: 1, locations: ['us-east-1'], doubleCheck: false,
      request: { hostname: '127.0.0.1', port: await closedPort() },
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 2, interval: 1 } },
      alertChannelSubscriptions: [{ alertChannelId: onCall.id, activated: true }],
    }).expect(201);

    await advanceUntil(clock, vigils, () => hook.bodies.length > 0, { stepMs: 500 });
    expect(alertTypes(hook.bodies)).toEqual(['ALERT_FAILURE']);
    const { body: firstResults } = await api('get', `/v1/check-results/${check.id}`).expect(200);
    expect(firstResults).toHaveLength(1);
    expect(firstResults[0]).toMatchObject({ hasFailures: true, runLocation: 'us-east-1', runSource: 'SCHEDULER' });
    if (runner) {
      await endWhileAdvancing(clock, [runner.vigil], () => runner.vigil.stop());
      vigils.pop();
    }

    // The certificate look of a check made now is due at once: this process takes it.
    const { body: site } = await api('post', '/v1/checks/api', {
      name: 'shop', frequency: 1440, locations: ['us-east-1'],
      request: { url: `https://${DOMAIN}:${tlsPort}/`, skipSSL: true, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      alertChannelSubscriptions: [{ alertChannelId: certChannel.id, activated: true }],
    }).expect(201);
    await advanceUntil(clock, vigils, () => certs.bodies.length > 0, { stepMs: 500, limitMs: MINUTE });
    expect(certs.bodies).toHaveLength(1);
    expect(certs.bodies[0]).toMatchObject({ ALERT_TYPE: 'ALERT_SSL', CHECK_ID: site.id, SSL_CHECK_DOMAIN: DOMAIN });
    const daysLeft = Math.floor((notAfter.getTime() - clock.now().getTime()) / DAY);
    expect([daysLeft, daysLeft + 1]).toContain(Number(certs.bodies[0]!.SSL_DAYS_REMAINING));

    // Two reminders, a minute apart, then no more (amount 2); the next run is an hour away.
    await advanceUntil(clock, vigils, () => hook.bodies.length >= 3, { stepMs: 5_000, limitMs: 5 * MINUTE });
    await advance(clock, vigils, 3 * MINUTE, 5_000);
    expect(alertTypes(hook.bodies)).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN']);
    expect(hook.bodies.slice(1).map((b) => [b.CHECK_ID, b.IS_REMINDER, Number(b.REMINDER_SEQUENCE)])).toEqual([[check.id, true, 1], [check.id, true, 2]]);

    // Retention of one day: after a day and two hours the first run's result is gone.
    await advance(clock, vigils, 26 * HOUR, HOUR);
    const { body: kept } = await api('get', `/v1/check-results/${check.id}?limit=100`).expect(200);
    expect(kept.map((r: { id: string }) => r.id)).not.toContain(firstResults[0].id);
    // This process ran the hourly slots since: those of the last day (to the hour) are kept.
    const cutoff = Math.floor((clock.now().getTime() - DAY) / HOUR) * HOUR;
    if (runsHere) expect(kept.length).toBeGreaterThanOrEqual(20);
    else expect(kept).toEqual([]);
    expect(kept.every((r: { startedAt: string }) => Date.parse(r.startedAt) >= cutoff)).toBe(true);
    // Retention ran in this process: per account, or (PostgreSQL, when the day's range has ended) by dropping whole ranges.
    expect(lines.some((l) => (l.msg === 'retention: removed check results' && l.meta.accountId === accountId)
      || (l.msg === 'retention: dropped whole ranges of check results' && Number(l.meta.deleted) > 0))).toBe(true);
    expect([...lines, ...(runner?.lines ?? [])].flatMap((l: LogLine) => engineTrouble([l]))).toEqual([]);
  }, 60_000);
});
