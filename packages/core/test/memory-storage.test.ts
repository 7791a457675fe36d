import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../src/errors.js';
import { AccountSchema, ApiKeySchema } from '../src/model/account.js';
import { AlertChannelSchema, AlertSubscriptionSchema } from '../src/model/alert-channel.js';
import { CheckGroupSchema } from '../src/model/check-group.js';
import { CheckResultSchema } from '../src/model/check-result.js';
import { CheckSessionSchema } from '../src/model/check-session.js';
import { CheckStatusSchema } from '../src/model/check-status.js';
import { CheckSchema } from '../src/model/check.js';
import { ClientCertificateSchema } from '../src/model/client-certificate.js';
import { DashboardSchema } from '../src/model/dashboard.js';
import { ErrorGroupSchema, TestSessionErrorGroupSchema } from '../src/model/error-group.js';
import { IncidentSchema, IncidentUpdateRecordSchema } from '../src/model/incident.js';
import { MaintenanceWindowSchema } from '../src/model/maintenance-window.js';
import {
  ServiceSchema,
  StatusPageIncidentSchema,
  StatusPageIncidentUpdateSchema,
  StatusPageSchema,
} from '../src/model/status-page.js';
import {
  accountFixture,
  alertStateFixture,
  alertSubscriptionFixture,
  apiKeyFixture,
  browserCheckFixture,
  checkGroupFixture,
  checkResultFixture,
  checkSessionFixture,
  checkStatusFixture,
  clientCertificateFixture,
  dashboardFixture,
  emailChannelFixture,
  errorGroupFixture,
  heartbeatCheckFixture,
  incidentFixture,
  incidentUpdateFixture,
  maintenanceWindowFixture,
  outboxMessageFixture,
  serviceFixture,
  statusPageFixture,
  statusPageIncidentFixture,
  statusPageIncidentUpdateFixture,
  tcpCheckFixture,
  testSessionErrorGroupFixture,
  webhookChannelFixture,
} from '../src/testing/fixtures.js';
import { servesLocation } from '../src/testing/memory-queues.js';
import { aggregateValues, percentileCont, sampleStddev } from '../src/rules/result-aggregates.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { copy } from '../src/testing/memory-table.js';
import { storageSuite } from '../src/testing/storage-suite.js';

const A = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const B = '0b6c1f2e-2222-4b1b-8c1d-000000000002';

storageSuite(it, async () => {
  const s = memoryStorage();
  return { storage: s, raw: s.raw };
});

describe('memoryStorage', () => {
  it('names itself and declares what it cannot do', () => {
    expect(memoryStorage().name).toBe('memory');
    expect(memoryStorage({ name: 'tenant-1' }).name).toBe('tenant-1');
    expect(memoryStorage().capabilities).toEqual({ multiProcess: false, nativePercentiles: false });
  });

  it('copies values on the way in: changing the caller\'s object later changes nothing stored', async () => {
    const s = memoryStorage();
    const record = tcpCheckFixture();
    await s.checks.insert(A, record);
    record.tags.push('mutated');
    record.request.port = 1;
    const stored = await s.checks.get(A, record.id);
    expect(stored?.tags).toEqual([]);
    expect(stored?.checkType === 'TCP' && stored.request.port).toBe(5432);
  });

  it('copies values on the way out: changing an answer changes nothing stored', async () => {
    const s = memoryStorage();
    const inserted = await s.checkGroups.insert(A, checkGroupFixture());
    inserted.tags.push('from insert');
    const got = await s.checkGroups.get(A, inserted.id);
    got!.alertSettings.reminders.amount = 5;
    const listed = await s.checkGroups.list(A);
    listed.items[0]!.name = 'from list';
    const raw = await s.raw.dump('check_groups');
    (raw[0] as { name: string }).name = 'from raw';
    const fresh = await s.checkGroups.get(A, inserted.id);
    expect(fresh?.tags).toEqual([]);
    expect(fresh?.alertSettings.reminders.amount).toBe(0);
    expect(fresh?.name).toBe(inserted.name);
  });

  it('copies results, outbox messages and alert states too', async () => {
    const s = memoryStorage();
    const result = checkResultFixture('check-1');
    await s.checkResults.insertMany(A, [result]);
    result.phases.total = -1;
    expect((await s.checkResults.get(A, result.id))?.phases.total).toBe(120);
    const message = outboxMessageFixture(A);
    await s.outbox.enqueue([message]);
    message.payload.checkName = 'changed';
    const [claimed] = await s.outbox.claim(new Date(message.nextAttemptAt), 1, 1000, 'me');
    claimed!.payload.checkName = 'changed again';
    expect((await s.outbox.pending())[0]?.payload.checkName).toBe('TCP check');
  });

  it('copies dates, bytes and nested arrays as values, and shares nothing that can change', async () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const bytes = new Uint8Array([1, 2, 3]);
    const row = { id: 'r1', when: at, bytes, nested: [[1], { list: [2] }], text: 'words', gone: undefined };
    const copied = copy(row);
    expect(copied).toEqual(row);
    expect(copied.when).toBeInstanceOf(Date);
    expect(copied.when).not.toBe(at);
    expect(copied.bytes).not.toBe(bytes);
    expect(copied.nested[0]).not.toBe(row.nested[0]);
    expect('gone' in copied).toBe(true);
    at.setTime(0);
    bytes[0] = 9;
    (row.nested[1] as { list: number[] }).list.push(3);
    expect(copied.when.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect([...copied.bytes]).toEqual([1, 2, 3]);
    expect(copied.nested[1]).toEqual({ list: [2] });
  });

  it('scans checks in id order page by page, with inserts and deletes between the pages', async () => {
    const s = memoryStorage();
    const ids = ['c', 'a', 'e', 'b', 'd'];
    for (const id of ids) await s.checks.insert(A, tcpCheckFixture({ id }));
    expect((await s.checks.scan(null, 2)).map((c) => c.id)).toEqual(['a', 'b']);
    await s.checks.insert(A, tcpCheckFixture({ id: 'bb' }));
    await s.checks.delete(A, 'c');
    expect((await s.checks.scan('b', 2)).map((c) => c.id)).toEqual(['bb', 'd']);
    expect((await s.checks.scan('d', 5)).map((c) => c.id)).toEqual(['e']);
    expect(await s.checks.scan('e', 5)).toEqual([]);
  });

  it('counts numeric ids per table from 1', async () => {
    const s = memoryStorage();
    expect((await s.checkGroups.insert(A, checkGroupFixture())).id).toBe(1);
    expect((await s.checkGroups.insert(B, checkGroupFixture())).id).toBe(2);
    expect((await s.alertChannels.insert(A, emailChannelFixture())).id).toBe(1);
    expect((await s.dashboards.insert(A, dashboardFixture())).id).toBe(1);
  });

  it('raises ConflictError for a taken id and a taken customUrl', async () => {
    const s = memoryStorage();
    const check = tcpCheckFixture();
    await s.checks.insert(A, check);
    await expect(s.checks.insert(B, check)).rejects.toBeInstanceOf(ConflictError);
    await s.dashboards.insert(A, dashboardFixture({ customUrl: 'taken' }));
    await expect(s.dashboards.insert(B, dashboardFixture({ customUrl: 'taken' }))).rejects.toBeInstanceOf(ConflictError);
    const twice = outboxMessageFixture(A);
    await expect(s.outbox.enqueue([outboxMessageFixture(A), twice, twice])).rejects.toBeInstanceOf(ConflictError);
    expect(await s.outbox.pending()).toEqual([]);
  });

  it('deletes the updates of a deleted incident with it', async () => {
    const s = memoryStorage();
    const incident = await s.incidents.insert(A, incidentFixture(1));
    await s.incidents.insertUpdate(A, incidentUpdateFixture(incident.id));
    const page = await s.statusPageIncidents.insert(A, statusPageIncidentFixture());
    await s.statusPageIncidents.insertUpdate(A, statusPageIncidentUpdateFixture(page.id));
    await s.incidents.delete(A, incident.id);
    await s.statusPageIncidents.delete(A, page.id);
    expect(await s.raw.dump('incident_updates')).toEqual([]);
    expect(await s.raw.dump('status_page_incident_updates')).toEqual([]);
  });

  it('keeps a lease when a leased entry is moved, so a running job is not claimed twice', async () => {
    const s = memoryStorage();
    const now = new Date('2026-05-01T12:00:00.000Z');
    await s.schedule.upsert({ kind: 'run', accountId: A, checkId: 'c1', location: 'us-east-1', dueAt: now.toISOString() });
    const [job] = await s.schedule.claimDue(now, {}, 1, 60_000, 'owner-1');
    await s.schedule.upsert({ kind: 'run', accountId: A, checkId: 'c1', location: 'us-east-1', dueAt: now.toISOString() });
    expect(await s.schedule.claimDue(now, {}, 1, 60_000, 'owner-2')).toEqual([]);
    expect(await s.schedule.complete(job!, null)).toBe(true);
  });
});

describe('aggregate arithmetic', () => {
  it('interpolates percentiles like percentile_cont', () => {
    expect(percentileCont([], 0.5)).toBeNull();
    expect(percentileCont([7], 0.99)).toBe(7);
    expect(percentileCont([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(percentileCont([1, 2, 3, 4], 0.9)).toBeCloseTo(3.7, 12);
    expect(percentileCont([1, 2, 3, 4], 0)).toBe(1);
    expect(percentileCont([1, 2, 3, 4], 1)).toBe(4);
  });

  it('computes the sample standard deviation, null below two values', () => {
    expect(sampleStddev([])).toBeNull();
    expect(sampleStddev([3])).toBeNull();
    expect(sampleStddev([2, 4])).toBeCloseTo(Math.SQRT2, 12);
  });

  it('answers null over no values except count', () => {
    for (const fn of ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'] as const) {
      expect(aggregateValues([], fn)).toBeNull();
    }
    expect(aggregateValues([], 'count')).toBe(0);
    expect(aggregateValues([5, 1, 3], 'median')).toBe(3);
    expect(aggregateValues([5, 1, 3], 'min')).toBe(1);
    expect(aggregateValues([5, 1, 3], 'max')).toBe(5);
    expect(aggregateValues([5, 1, 3], 'sum')).toBe(9);
    expect(aggregateValues([5, 1, 3], 'avg')).toBe(3);
  });
});

describe('servesLocation', () => {
  it('tells data-center names from private ones', () => {
    expect(servesLocation({}, 'us-east-1')).toBe(true);
    expect(servesLocation({}, 'my-lab')).toBe(true);
    expect(servesLocation({ locations: [] }, 'us-east-1')).toBe(false);
    expect(servesLocation({ locations: [] }, 'my-lab')).toBe(true);
    expect(servesLocation({ privateLocations: ['my-lab'] }, 'other-lab')).toBe(false);
    expect(servesLocation({ privateLocations: ['my-lab'], locations: 'all' }, 'my-lab')).toBe(true);
  });
});

describe('fixtures', () => {
  const withAccount = (record: object) => ({ ...record, accountId: A });
  const cases: [string, v.GenericSchema, object][] = [
    ['account', AccountSchema, accountFixture()],
    ['api key', ApiKeySchema, apiKeyFixture(A)],
    ['TCP check', CheckSchema, withAccount(tcpCheckFixture())],
    ['browser check', CheckSchema, withAccount(browserCheckFixture())],
    ['heartbeat check', CheckSchema, withAccount(heartbeatCheckFixture())],
    ['check group', CheckGroupSchema, withAccount({ ...checkGroupFixture(), id: 1 })],
    ['email channel', AlertChannelSchema, withAccount({ ...emailChannelFixture(), id: 1 })],
    ['webhook channel', AlertChannelSchema, withAccount({ ...webhookChannelFixture(), id: 1 })],
    ['subscription', AlertSubscriptionSchema, withAccount({ ...alertSubscriptionFixture(1, { groupId: 2 }), id: 1 })],
    ['check result', CheckResultSchema, withAccount(checkResultFixture('c'))],
    ['check session', CheckSessionSchema, withAccount(checkSessionFixture('c'))],
    ['check status', CheckStatusSchema, withAccount(checkStatusFixture('c'))],
    ['dashboard', DashboardSchema, withAccount({ ...dashboardFixture(), id: 1 })],
    ['maintenance window', MaintenanceWindowSchema, withAccount({ ...maintenanceWindowFixture(), id: 1 })],
    ['incident', IncidentSchema, withAccount(incidentFixture(1))],
    ['incident update', IncidentUpdateRecordSchema, withAccount(incidentUpdateFixture('i'))],
    ['status page', StatusPageSchema, withAccount(statusPageFixture())],
    ['service', ServiceSchema, withAccount(serviceFixture())],
    ['status-page incident', StatusPageIncidentSchema, withAccount(statusPageIncidentFixture())],
    ['status-page incident update', StatusPageIncidentUpdateSchema, withAccount(statusPageIncidentUpdateFixture('i'))],
    ['client certificate', ClientCertificateSchema, withAccount(clientCertificateFixture())],
    ['error group', ErrorGroupSchema, withAccount(errorGroupFixture('c'))],
    ['test-session error group', TestSessionErrorGroupSchema, withAccount(testSessionErrorGroupFixture('p'))],
  ];
  it.each(cases)('builds a valid %s record', (_name, schema, record) => {
    const parsed = v.safeParse(schema, record);
    expect(parsed.issues?.map((i) => `${v.getDotPath(i)} ${i.message}`) ?? []).toEqual([]);
    expect(parsed.output).toEqual(record);
  });

  it('gives every fixture its own id and name, and applies overrides', () => {
    const [a, b] = [tcpCheckFixture(), tcpCheckFixture({ muted: true })];
    expect(a.id).not.toBe(b.id);
    expect(a.name).not.toBe(b.name);
    expect(b.muted).toBe(true);
    expect(alertStateFixture({ remindersSent: 2 })).toMatchObject({ status: 'PASSING', remindersSent: 2 });
  });
});
