import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createVigil } from '../src/container.js';
import type { CheckSession } from '../src/model/check-session.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { checkResultFixture, tcpCheckFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';

async function setup() {
  const storage = memoryStorage();
  const clock = new FakeClock('2026-05-01T12:00:00.000Z');
  const vigil = createVigil({ storage, secretKey: randomBytes(32), clock, defaultLocation: 'eu-central-1' });
  const a = (await vigil.accounts.ensure()).id;
  const b = (await vigil.accounts.ensure()).id;
  return { vigil, storage, clock, a, b };
}


const tcp = (name: string, extra: object = {}) => ({ name, request: { hostname: 'db.internal', port: 5432 }, ...extra });

describe('check sessions', () => {
  it('trigger selects by tags and ids, one sequence per location, and hands sessions to the launcher', async () => {
    const { vigil, a, b } = await setup();
    const launched: CheckSession[] = [];
    vigil.checkSessions.setLauncher({ launch: (s) => launched.push(s) });
    const api = await vigil.checks.create(a, 'TCP', tcp('api', { tags: ['prod', 'api'], locations: ['eu-west-1', 'us-east-1'], runParallel: true }));
    const web = await vigil.checks.create(a, 'TCP', tcp('web', { tags: ['prod'] }));
    await vigil.checks.create(a, 'TCP', tcp('off', { tags: ['prod'], activated: false }));
    const all = await vigil.checkSessions.trigger(a, {});
    expect(all.sessions.map((s) => s.name).sort()).toEqual(['api', 'web']);
    const byTag = await vigil.checkSessions.trigger(a, { target: { matchTags: [['prod', '!api']] } });
    expect(byTag.sessions.map((s) => s.checkId)).toEqual([web.id]);
    expect(byTag.sessions[0]).toMatchObject({ status: 'STARTED', runLocations: ['eu-central-1'], runSource: 'TRIGGER_API', results: [] });
    const parallel = await vigil.checkSessions.trigger(a, { target: { checkId: [api.id] }, projectId: 'web-e2e', environment: 'staging' });
    expect(parallel.sessions[0]).toMatchObject({ runLocations: ['eu-west-1', 'us-east-1'], runSource: 'TEST', projectId: 'web-e2e' });
    expect(parallel.sessions[0]!.sequences).toHaveLength(2);
    expect(launched).toHaveLength(4);
    expect(await code(vigil.checkSessions.trigger(a, { target: { matchTags: [['nothing']] } }))).toBe('NOT_FOUND');
    expect(await code(vigil.checkSessions.trigger(b, {}))).toBe('NOT_FOUND');
    expect(await code(vigil.checkSessions.trigger(a, { target: { checkId: ['not-a-uuid'] } }))).toBe('VALIDATION');
    // By id: an id in capitals names the same check; another account's check is not found, with tags or not.
    const upper = await vigil.checkSessions.trigger(a, { target: { checkId: [web.id.toUpperCase()] } });
    expect(upper.sessions.map((s) => s.checkId)).toEqual([web.id]);
    expect(await code(vigil.checkSessions.trigger(b, { target: { checkId: [web.id] } }))).toBe('NOT_FOUND');
    const both = await vigil.checkSessions.trigger(a, { target: { checkId: [api.id, web.id], matchTags: [['api']] } });
    expect(both.sessions.map((s) => s.checkId)).toEqual([api.id]);
  });

  it('trigger by id finds a check whose stored id is in capitals (a host\'s own id generator)', async () => {
    const { vigil, storage, a } = await setup();
    const id = randomUUID().toUpperCase();
    await storage.checks.insert(a, tcpCheckFixture({ id, name: 'upper' }));
    const { sessions } = await vigil.checkSessions.trigger(a, { target: { checkId: [id.toLowerCase()] } });
    expect(sessions.map((s) => s.checkId)).toEqual([id]);
  });

  it('completion waits on the clock until the session is final; cancel ends it and a final one stays', async () => {
    const { vigil, a, b, clock } = await setup();
    const c = await vigil.checks.create(a, 'TCP', tcp('api'));
    const [session] = (await vigil.checkSessions.trigger(a, { target: { checkId: [c.id] } })).sessions;
    const id = session!.checkSessionId;
    const pending = vigil.checkSessions.completion(a, id, { maxWaitSeconds: '5' });
    await new Promise((r) => setImmediate(r));
    clock.advance(5_000);
    const timedOut = await pending;
    expect(timedOut.done).toBe(false);

    const waiting = vigil.checkSessions.completion(a, id, { maxWaitSeconds: '10' });
    await vigil.checkSessions.startSequence(a, id, session!.sequences[0]!.sequenceId);
    await vigil.checkSessions.completeSequence(a, id, session!.sequences[0]!.sequenceId, 'FAILED');
    await new Promise((r) => setImmediate(r));
    clock.advance(250);
    const done = await waiting;
    expect(done.done).toBe(true);
    expect(done.session.status).toBe('FAILED');

    const [second] = (await vigil.checkSessions.trigger(a, {})).sessions;
    const cancelled = await vigil.checkSessions.cancel(a, second!.checkSessionId, {});
    expect(cancelled).toMatchObject({ status: 'CANCELLED' });
    expect((await vigil.checkSessions.cancel(a, id, {})).status).toBe('FAILED');
    expect(await code(vigil.checkSessions.get(b, id))).toBe('NOT_FOUND');
    expect(await code(vigil.checkSessions.get(a, 'nope'))).toBe('VALIDATION');
    expect(await code(vigil.checkSessions.cancel(a, id, { sequenceId: [] }))).toBe('VALIDATION');
    expect(await code(vigil.checkSessions.completion(a, id, { maxWaitSeconds: '31' }))).toBe('VALIDATION');
  });
});

describe('results, statuses, error groups', () => {
  it('results list newest first; statuses cover every check', async () => {
    const { vigil, storage, a, b } = await setup();
    const c = await vigil.checks.create(a, 'TCP', tcp('api'));
    await storage.checkResults.insertMany(a, [
      checkResultFixture(c.id, { startedAt: '2026-05-01T10:00:00.000Z' }),
      checkResultFixture(c.id, { startedAt: '2026-05-01T11:00:00.000Z' }),
    ]);
    const page = await vigil.checkResults.list(a, c.id, {});
    expect(page.items.map((r) => r.startedAt)).toEqual(['2026-05-01T11:00:00.000Z', '2026-05-01T10:00:00.000Z']);
    expect(page.items[0]).not.toHaveProperty('accountId');
    expect(await code(vigil.checkResults.list(b, c.id, {}))).toBe('NOT_FOUND');
    const statuses = await vigil.checkStatuses.list(a);
    expect(statuses).toEqual([expect.objectContaining({ checkId: c.id, name: 'api', hasFailures: false, lastCheckRunId: null })]);
    expect(await vigil.checkStatuses.list(b)).toEqual([]);
  });

  it('occurrences group by cleaned message; archive until next event is undone by a new occurrence', async () => {
    const { vigil, a, b } = await setup();
    const c = await vigil.checks.create(a, 'TCP', tcp('api'));
    const g1 = await vigil.errorGroups.recordOccurrence(a, c.id, 'connect ECONNREFUSED 10.0.0.1:5432', '2026-05-01T12:00:00.000Z');
    const g2 = await vigil.errorGroups.recordOccurrence(a, c.id, 'connect ECONNREFUSED 10.0.0.2:5432', '2026-05-01T12:05:00.000Z');
    expect(g2.id).toBe(g1.id);
    expect(g2).toMatchObject({ firstSeen: '2026-05-01T12:00:00.000Z', lastSeen: '2026-05-01T12:05:00.000Z', cleanedErrorMessage: 'connect ECONNREFUSED <ip>' });
    const archived = await vigil.errorGroups.patch(a, g1.id, { archivedUntilNextEvent: true });
    expect(archived.archivedUntilNextEvent).toBe(true);
    await vigil.errorGroups.recordOccurrence(a, c.id, 'connect ECONNREFUSED 10.0.0.3:5432', '2026-05-01T12:10:00.000Z');
    expect((await vigil.errorGroups.get(a, g1.id)).archivedUntilNextEvent).toBe(false);
    expect(await vigil.errorGroups.listByCheck(a, c.id, {})).toHaveLength(1);
    expect(await code(vigil.errorGroups.patch(b, g1.id, { archiveForEver: true }))).toBe('NOT_FOUND');
    expect(await code(vigil.errorGroups.listByCheck(a, c.id, { limit: '101' }))).toBe('VALIDATION');

    await vigil.errorGroups.recordTestSessionOccurrence(a, {
      projectId: 'web', environment: 'staging', raw: 'expected 200 got 500', at: '2026-05-01T12:00:00.000Z',
      pwtMetadata: { projectName: 'web', testFile: 'login', testTitle: 'login', suitePath: [] },
    });
    await vigil.errorGroups.recordTestSessionOccurrence(a, {
      projectId: 'web', environment: 'prod', raw: 'expected 200 got 503', at: '2026-05-01T12:01:00.000Z',
      pwtMetadata: { projectName: 'web', testFile: 'login', testTitle: 'login', suitePath: [] },
    });
    const groups = await vigil.errorGroups.listByProject(a, 'web');
    expect(groups).toHaveLength(1);
    expect(groups[0]!.environments).toEqual(['staging', 'prod']);
    expect(groups[0]!.pwtMetadata).toHaveLength(1);
  });
});

describe('reporting and analytics', () => {
  it('report and TCP analytics answer from stored results', async () => {
    const { vigil, storage, a } = await setup();
    const c = await vigil.checks.create(a, 'TCP', tcp('api', { tags: ['prod'] }));
    const idle = await vigil.checks.create(a, 'TCP', tcp('idle', { activated: false }));
    const times = [10, 20, 30, 40];
    await storage.checkResults.insertMany(a, times.map((t, i) => checkResultFixture(c.id, {
      startedAt: `2026-05-01T11:0${i}:00.000Z`, responseTime: t, phases: { total: t, dns: 1, connection: t / 2, data: 1 },
      hasFailures: i === 3, attempts: i === 3 ? 3 : 1, runLocation: i % 2 ? 'us-east-1' : 'eu-west-1',
    })));
    const report = await vigil.reporting.report(a, {});
    expect(report.find((r) => r.checkId === c.id)).toMatchObject({ deactivated: false, aggregate: { successRatio: 75, avg: 25 } });
    expect(report.find((r) => r.checkId === idle.id)).toMatchObject({ deactivated: true, aggregate: { successRatio: 0, avg: 0, p95: 0, p99: 0 } });
    expect((await vigil.reporting.report(a, { deactivated: 'true' })).map((r) => r.name)).toEqual(['idle']);
    expect((await vigil.reporting.report(a, { filterByTags: 'prod' })).map((r) => r.name)).toEqual(['api']);

    const analytics = await vigil.analytics.query(a, 'tcp', c.id, { metrics: 'total,total_max,connection_p50,availability,retries' });
    expect(analytics).toMatchObject({ checkId: c.id, checkType: 'TCP', pagination: { page: 1, limit: 10 } });
    expect(analytics.series).toEqual([expect.objectContaining({ total: 25, total_max: 40, connection_p50: 12.5, availability: 75, retries: 2 })]);
    expect(analytics.metadata.availability).toEqual({ label: 'Availability', unit: 'percent' });
    const grouped = await vigil.analytics.query(a, 'tcp', c.id, { metrics: 'total', groupBy: 'runLocation', filterByStatus: 'success' });
    expect(grouped.series.map((s) => [s.runLocation, s.total])).toEqual(expect.arrayContaining([['eu-west-1', 20], ['us-east-1', 20]]));
    const buckets = await vigil.analytics.query(a, 'tcp', c.id, { metrics: 'total', aggregationInterval: '1', from: '2026-05-01T11:00:00Z', to: '2026-05-01T11:04:00Z' });
    expect(buckets.series.map((s) => s.total)).toEqual([10, 20, 30, 40]);
    expect(await code(vigil.analytics.query(a, 'api', c.id, { metrics: 'dns' }))).toBe('NOT_FOUND');
    expect(await code(vigil.analytics.query(a, 'tcp', c.id, {}))).toBe('VALIDATION');
  });
});

describe('heartbeats', () => {
  it('pings by token, availability over the window and the previous one, overdue after period + grace', async () => {
    const { vigil, a, b, clock } = await setup();
    const hb = await vigil.checks.create(a, 'HEARTBEAT', { name: 'cron', heartbeat: { period: 50, periodUnit: 'minutes', grace: 10, graceUnit: 'minutes' } });
    const token = hb.checkType === 'HEARTBEAT' ? hb.heartbeat.pingToken : '';
    expect(await code(vigil.heartbeats.ping('unknown-token'))).toBe('NOT_FOUND');
    for (let h = 0; h < 6; h++) {
      await vigil.heartbeats.ping(token, 'cron-host');
      clock.advance(3_600_000);
    }
    const availability = await vigil.heartbeats.availability(a, hb.id, { startTime: '2026-05-01T12:00:00Z', endTime: '2026-05-01T18:00:00Z' });
    expect(availability).toEqual({ successRatio: { previousPeriod: 0, currentPeriod: 100 }, totalEntitiesCurrentPeriod: 6 });
    expect(await vigil.heartbeats.availability(a, hb.id, { startTime: '2026-04-01T00:00:00Z', endTime: '2026-04-02T00:00:00Z' })).toBeNull();
    expect(await code(vigil.heartbeats.availability(b, hb.id, {}))).toBe('NOT_FOUND');
    const last = '2026-05-01T17:00:00.000Z';
    expect(await vigil.heartbeats.evaluate(a, hb.id, new Date('2026-05-01T17:59:59Z'))).toEqual({ failing: false, lastPingAt: last, deadline: '2026-05-01T18:00:00.000Z' });
    expect((await vigil.heartbeats.evaluate(a, hb.id, new Date('2026-05-01T18:00:00Z'))).failing).toBe(true);
  });
});

describe('client certificates', () => {
  const fixture = (f: string) => readFileSync(new URL(`./fixtures/${f}`, import.meta.url), 'utf8');

  it('stores cert and CA, seals key and passphrase, never answers them, and finds one for a host', async () => {
    const { vigil, storage, a, b } = await setup();
    const created = await vigil.clientCertificates.create(a, { host: '*.example.com', cert: fixture('encrypted.crt'), key: fixture('encrypted.key'), passphrase: 'secret' });
    expect(Object.keys(created).sort()).toEqual(['ca', 'cert', 'created_at', 'host', 'id']);
    const raw = JSON.stringify(await storage.raw.dump('client_certificates'));
    expect(raw).not.toContain('ENCRYPTED PRIVATE KEY');
    expect(raw).not.toContain('"secret"');
    await vigil.clientCertificates.create(a, { host: 'api.example.com', cert: fixture('client.crt'), key: fixture('client.key') });
    expect((await vigil.clientCertificates.findForHost(a, 'api.example.com'))?.host).toBe('api.example.com');
    const wild = await vigil.clientCertificates.findForHost(a, 'shop.example.com');
    expect(wild).toMatchObject({ host: '*.example.com', passphrase: 'secret' });
    expect(wild?.key).toContain('ENCRYPTED PRIVATE KEY');
    expect(await vigil.clientCertificates.findForHost(a, 'a.b.example.com')).toBeNull();
    expect(await vigil.clientCertificates.findForHost(b, 'api.example.com')).toBeNull();
    expect(await code(vigil.clientCertificates.get(b, created.id))).toBe('NOT_FOUND');
  });

  it.each([['looks the host up', true], ['reads every certificate', false]])('finds a host\'s certificate from a store that %s', async (_how, byHost) => {
    const { vigil, storage, a } = await setup();
    for (let n = 0; n < 5; n++) await vigil.clientCertificates.create(a, { host: `other-${n}.example.org`, cert: fixture('client.crt'), key: fixture('client.key') });
    await vigil.clientCertificates.create(a, { host: '*.example.com', cert: fixture('encrypted.crt'), key: fixture('encrypted.key'), passphrase: 'secret' });
    await vigil.clientCertificates.create(a, { host: 'api.example.com', cert: fixture('client.crt'), key: fixture('client.key') });
    // Asked for the host of every HTTPS run: the account may hold many certificates.
    if (byHost) storage.clientCertificates.list = () => Promise.reject(new Error('every certificate of the account was read'));
    else delete storage.clientCertificates.listByHosts;
    expect((await vigil.clientCertificates.findForHost(a, 'API.example.com'))?.host).toBe('api.example.com');
    expect((await vigil.clientCertificates.findForHost(a, 'shop.example.com'))?.host).toBe('*.example.com');
    expect(await vigil.clientCertificates.findForHost(a, 'a.shop.example.com')).toBeNull();
    expect(await vigil.clientCertificates.findForHost(a, 'example.com')).toBeNull();
    expect(await vigil.clientCertificates.findForHost(a, 'localhost')).toBeNull();
  });

  it('refuses a key of another certificate, a wrong passphrase and an unreadable certificate', async () => {
    const { vigil, a, storage } = await setup();
    const keys = async (body: object) => (await vigil.clientCertificates.create(a, body).catch((e) => e)).keys;
    expect(await keys({ host: 'x.com', cert: fixture('client.crt'), key: fixture('other.key') })).toEqual(['key']);
    expect(await keys({ host: 'x.com', cert: fixture('encrypted.crt'), key: fixture('encrypted.key'), passphrase: 'wrong' })).toEqual(['passphrase']);
    expect(await keys({ host: 'x.com', cert: '-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----' })).toEqual(['cert']);
    expect(await storage.raw.dump('client_certificates')).toEqual([]);
    const id = randomUUID();
    expect(await code(vigil.clientCertificates.delete(a, id))).toBe('NOT_FOUND');
  });
});
