// Reads of the first rows in an order: they read the rows near the page, not every row of the check,
// the page or the channel. A check's results page by page (its scheduled runs are ordered by start,
// which may be up to 32.767 s off their due time), a session's results, a status page's
// subscribers by id, a check's alerts, a channel's delivery attempts, an account's status page
// incidents and services after a cursor, the incidents a status page shows, and a page of a
// check's error groups.
import { slotResultId, type CheckResult, type NewRecord } from '@vigil/core';
import { checkResultFixture, errorGroupFixture } from '@vigil/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, type KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';
import { captured, planOf, readsWholeTable, type Statement } from './support/plans.js';

const ACCOUNT = '0a6c1f2e-4444-4a1b-8c1d-000000000001';
const OTHER = '0a6c1f2e-4444-4a1b-8c1d-000000000002';
const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const LOCATIONS = ['us-east-1', 'eu-west-1'];

let storage: KnexStorage | null = null;
afterEach(async () => {
  await storage?.close();
  storage = null;
});

/**
 * `count` scheduled runs of `checkId`, two locations every 10 s, each started somewhere in the
 * 32.767 s before or after its due time, so that the order by start is not the order by due time;
 * every ninth an attempt. No two start at the same millisecond (`taken` holds the starts).
 */
function scheduledRuns(checkId: string, count: number, taken: Set<number>): NewRecord<CheckResult>[] {
  const runs: NewRecord<CheckResult>[] = [];
  for (let i = 0; runs.length < count; i++) {
    const due = T0 + Math.floor(i / 2) * 10_000;
    const started = due + ((i * 7_919) % 65_535) - 32_767;
    if (taken.has(started)) continue;
    taken.add(started);
    const location = LOCATIONS[i % 2]!;
    const at = (ms: number) => new Date(ms).toISOString();
    runs.push(checkResultFixture(checkId, {
      id: slotResultId(checkId, location, new Date(due), 1), runLocation: location,
      startedAt: at(started), stoppedAt: at(started + 80), created_at: at(started + 80), responseTime: 80,
      phases: { dns: 10, connection: 30, data: 40, total: 80 }, details: { response: 'PONG', errorCode: null },
      ...(i % 9 === 4 ? { resultType: 'ATTEMPT' as const, hasFailures: true } : {}),
    }));
  }
  return runs;
}

/** Runs started by hand (full rows) among the scheduled ones, at starts no other run has. */
function manualRuns(checkId: string, count: number, span: number, taken: Set<number>, extra: Partial<NewRecord<CheckResult>> = {}): NewRecord<CheckResult>[] {
  return Array.from({ length: count }, (_, i) => {
    let started = T0 + Math.floor((i * span) / count) + 333;
    while (taken.has(started)) started += 1;
    taken.add(started);
    return checkResultFixture(checkId, { startedAt: new Date(started).toISOString(), runSource: 'TRIGGER_API', ...extra });
  });
}

async function insertResults(s: KnexStorage, accountId: string, results: NewRecord<CheckResult>[]): Promise<void> {
  for (let i = 0; i < results.length; i += 500) await s.checkResults.insertMany(accountId, results.slice(i, i + 500));
}

async function insertRows(s: KnexStorage, table: string, rows: Record<string, unknown>[]): Promise<void> {
  // 50 rows a statement stays under SQLite's limit of bound variables.
  for (let i = 0; i < rows.length; i += 50) await s.knex(`vigil_${table}`).insert(rows.slice(i, i + 50));
}

const newestFirst = (results: NewRecord<CheckResult>[]) => [...results].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Actual Rows': number; 'Actual Loops': number; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] };

/** The rows PostgreSQL's scans of tables named with `relation` read to run the statement. */
async function rowsScanned(s: KnexStorage, { sql, bindings }: Statement, relation: string): Promise<number> {
  const explained = (await s.knex.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.replace(/\$\d+/g, '?')}`, bindings as never[])) as { rows: { 'QUERY PLAN': [{ Plan: PlanNode }] }[] };
  const walk = (node: PlanNode): number => (node['Relation Name']?.includes(relation) ? node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0) : 0)
    + (node.Plans ?? []).reduce((sum, p) => sum + walk(p), 0);
  return walk(explained.rows[0]!['QUERY PLAN'][0].Plan);
}

/** Whether a plan (planOf) sorts rows rather than reading them in order along an index. */
const sorts = (kind: 'sqlite' | 'postgres', plan: string) => (kind === 'sqlite' ? /USE TEMP B-TREE FOR (RIGHT PART OF )?ORDER BY/.test(plan) : /"Node Type":"(Incremental )?Sort"/.test(plan));

describe.each(STORES)('ordered reads on %s', (kind) => {
  it('pages a check\'s runs in the order they started, runs up to 32 s off their due time among runs started by hand', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered'));
    await s.migrate();
    const taken = new Set<number>();
    const scheduled = scheduledRuns('c1', 400, taken);
    const manual = manualRuns('c1', 30, 2_000_000, taken);
    await insertResults(s, ACCOUNT, [...scheduled, ...manual]);
    await insertResults(s, OTHER, scheduledRuns('c1', 40, new Set()));
    const all = newestFirst([...scheduled, ...manual]);
    const ids = (results: { id: string }[]) => results.map((r) => r.id);
    for (const [limit, offset] of [[1, 0], [7, 0], [7, 7], [25, 100], [50, 380], [100, 400]] as const) {
      const page = await s.checkResults.listByCheck(ACCOUNT, 'c1', { limit, offset });
      expect(ids(page.items), `limit ${limit}, offset ${offset}`).toEqual(ids(all.slice(offset, offset + limit)));
      expect(page.total).toBe(430);
      const uncounted = await s.checkResults.listByCheck(ACCOUNT, 'c1', { limit, offset, countTotal: false });
      expect(ids(uncounted.items)).toEqual(ids(page.items));
      expect(uncounted.total).toBe(-1);
    }
    expect(await s.checkResults.listByCheck(ACCOUNT, 'c1', { limit: 0, offset: 0 })).toEqual({ items: [], total: 430, offset: 0 });
    const finals = all.filter((r) => r.resultType === 'FINAL');
    expect(ids((await s.checkResults.listByCheck(ACCOUNT, 'c1', { limit: 1, offset: 0, resultType: 'FINAL', countTotal: false })).items)).toEqual([finals[0]!.id]);
    expect(ids((await s.checkResults.listByCheck(ACCOUNT, 'c1', { limit: 10, offset: 20, resultType: 'ATTEMPT' })).items))
      .toEqual(ids(all.filter((r) => r.resultType === 'ATTEMPT').slice(20, 30)));
    const from = new Date(T0 + 300_000);
    const to = new Date(T0 + 900_000);
    const inWindow = all.filter((r) => Date.parse(r.startedAt) >= from.getTime() && Date.parse(r.startedAt) < to.getTime());
    const window = await s.checkResults.listByCheck(ACCOUNT, 'c1', { limit: 15, offset: 30, from, to, countTotal: false });
    expect(ids(window.items)).toEqual(ids(inWindow.slice(30, 45)));
  });

  it('reads a check\'s newest result from the rows near it, without counting the check\'s results', async () => {
    // One SQLite connection, so the reads go through the knex whose statements are captured.
    const s = (storage = await freshStore(kind, 'vigil_ordered', { pool: { min: 1, max: 1 } }));
    await s.migrate();
    const taken = new Set<number>();
    const scheduled = scheduledRuns('c1', 5_000, taken);
    await insertResults(s, ACCOUNT, [...scheduled, ...manualRuns('c1', 50, 25_000_000, taken)]);
    if (kind === 'postgres') await s.knex.raw('ANALYZE');
    const { result, statements } = await captured(s, () => s.checkResults.listByCheck(ACCOUNT, 'c1', { limit: 1, offset: 0, resultType: 'FINAL', countTotal: false }));
    expect(result.items.map((r) => r.id)).toEqual([newestFirst(scheduled).find((r) => r.resultType === 'FINAL')!.id]);
    expect(statements.some((st) => /count\(/i.test(st.sql))).toBe(false);
    const keys = statements.find((st) => /union all/i.test(st.sql))!;
    if (kind === 'sqlite') {
      // The scheduled runs are searched from a slot on, not read whole and sorted.
      expect(await planOf(kind, s, keys)).toMatch(/SEARCH n USING PRIMARY KEY \(check_key=\? AND slot>\?\)/);
    } else {
      expect(await rowsScanned(s, keys, 'check_runs_tcp')).toBeLessThan(100);
    }
  });

  it('reads a session\'s results, a page\'s subscribers, a check\'s alerts and a channel\'s attempts in order along an index', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered', { pool: { min: 1, max: 1 } }));
    await s.migrate();
    const session = '5e55a1b2-0000-4000-8000-000000000001';
    // A check run by hand 2,000 times, in 400 sessions of 5 runs.
    const taken = new Set<number>();
    const runs = Array.from({ length: 400 }, (_, i) => manualRuns('c1', 5, 1_000_000, taken, { checkSessionId: i === 7 ? session : `5e55a1b2-0000-4000-8000-${String(i).padStart(12, '0')}` })).flat();
    await insertResults(s, ACCOUNT, runs);
    const n = Array.from({ length: 2_000 }, (_, i) => i);
    await insertRows(s, 'status_page_subscribers', n.map((i) => ({
      id: `sub-${String(i).padStart(5, '0')}`, account_id: ACCOUNT, data: '{}', status_page_id: `page-${i % 4}`, page_email: `pe-${i}`,
      token_hash: `th-${i}`, email_hash: `eh-${i}`, confirmed: true, sent_ms: T0,
    })));
    await insertRows(s, 'outbox', n.map((i) => ({
      id: `msg-${i}`, account_id: ACCOUNT, check_id: `c${i % 4}`, alert_channel_id: i % 4, created_ms: T0 + i * 1_000, next_attempt_ms: T0, delivered_ms: T0, data: JSON.stringify({ id: `msg-${i}` }),
    })));
    await insertRows(s, 'delivery_attempts', n.map((i) => ({
      account_id: ACCOUNT, alert_channel_id: i % 4, outbox_id: `msg-${i}`, at: new Date(T0 + i * 1_000).toISOString(), ok: true, detail: null,
    })));
    if (kind === 'postgres') await s.knex.raw('ANALYZE');

    const results = await captured(s, () => s.checkResults.listByCheck(ACCOUNT, 'c1', { limit: 100, offset: 0, checkSessionId: session, resultType: 'FINAL', countTotal: false }));
    expect(results.result.items.map((r) => r.id)).toEqual(newestFirst(runs.filter((r) => r.checkSessionId === session)).map((r) => r.id));
    const subscribers = await captured(s, () => s.statusPageSubscribers.listByPage(ACCOUNT, 'page-1', 'sub-01001', 100));
    expect(subscribers.result.map((r) => r.id)).toEqual(n.filter((i) => i % 4 === 1 && i > 1001).slice(0, 100).map((i) => `sub-${String(i).padStart(5, '0')}`));
    const alerts = await captured(s, () => s.outbox.listByCheck(ACCOUNT, 'c2', 10));
    expect(alerts.result.map((m) => m.id)).toEqual(n.filter((i) => i % 4 === 2).reverse().slice(0, 10).map((i) => `msg-${i}`));
    const attempts = await captured(s, () => s.outbox.listAttempts(ACCOUNT, 3, 10));
    expect(attempts.result.map((a) => a.outboxId)).toEqual(n.filter((i) => i % 4 === 3).reverse().slice(0, 10).map((i) => `msg-${i}`));

    // The session's runs are found through the index of sessions, not among all of the check's
    // results (the page's few keys are then sorted).
    const sessionKeys = results.statements.find((st) => /order by/i.test(st.sql) && /check_session_id/.test(st.sql))!;
    expect(await planOf(kind, s, sessionKeys)).toMatch(kind === 'sqlite'
      ? /SEARCH vigil_check_results USING INDEX vigil_check_results_session_started_ms_index \(account_id=\? AND check_id=\? AND check_session_id=\?\)/
      : /"Index Name":"vigil_check_results_session_started_ms_index"/);
    const plans = await Promise.all([subscribers, alerts, attempts].map(({ statements }) => planOf(kind, s, statements.at(-1)!)));
    for (const plan of plans) {
      expect(readsWholeTable(kind, plan), plan).toBe(false);
      expect(sorts(kind, plan), plan).toBe(false);
    }
  });

  it('reads a page of a check\'s error groups, not every group of the check', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered', { pool: { min: 1, max: 1 } }));
    await s.migrate();
    const groups = [];
    for (let i = 0; i < 60; i++) groups.push(await s.errorGroups.insert(ACCOUNT, errorGroupFixture(i % 3 === 0 ? 'other' : 'c1')));
    await s.errorGroups.insert(OTHER, errorGroupFixture('c1'));
    const { result, statements } = await captured(s, () => s.errorGroups.listByCheck(ACCOUNT, 'c1', { limit: 10, offset: 20 }));
    expect(result.total).toBe(40);
    expect(result.items.map((g) => g.id)).toEqual(groups.filter((g) => g.checkId === 'c1').slice(20, 30).map((g) => g.id));
    // Each group is a document with its analyses: the statement that reads them reads the page alone.
    const documents = statements.filter((st) => /select \*/i.test(st.sql));
    expect(documents).toHaveLength(1);
    expect(documents[0]!.sql).toMatch(/limit/i);
  });

  it('migration 018 records when each stored incident closed, and a status page finds it by that', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered'));
    // The database as version 017 left it, with an open, a resolved and an old resolved incident.
    await migrate(s.knex, 'vigil_', '017_ordered_reads');
    const incident = (id: string, at: number, fields: object) => ({
      id, account_id: ACCOUNT, created_ms: T0 + at,
      data: JSON.stringify({ name: id, serviceIds: ['svc'], created_at: new Date(T0 + at).toISOString(), updated_at: null, ...fields }),
    });
    await insertRows(s, 'status_page_incidents', [
      incident('open', 0, { status: 'IDENTIFIED', stoppedAt: null }),
      incident('resolved', 1_000, { status: 'RESOLVED', stoppedAt: new Date(T0 + 7_200_000).toISOString() }),
      incident('old', 2_000, { status: 'RESOLVED', stoppedAt: new Date(T0 + 60_000).toISOString() }),
      incident('before-statuses', 3_000, {}),
    ]);
    await s.migrate();
    const closed = Object.fromEntries(((await s.knex('vigil_status_page_incidents').select('id', 'closed_ms')) as { id: string; closed_ms: unknown }[])
      .map((r) => [r.id, r.closed_ms === null ? null : Number(r.closed_ms)]));
    expect(closed).toEqual({ open: null, resolved: T0 + 7_200_000, old: T0 + 60_000, 'before-statuses': null });
    expect((await s.statusPageIncidents.listCurrent!(ACCOUNT, new Date(T0 + 3_600_000))).map((i) => i.id)).toEqual(['before-statuses', 'resolved', 'open']);
  });

  it('migration 020 records when each stored dashboard incident stopped, and a dashboard finds those stopped since by it', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered'));
    await migrate(s.knex, 'vigil_', '019_maintenance_window_ends');
    const incident = (id: string, dashboardId: number, stoppedAt: string | null) => ({
      id, account_id: ACCOUNT, dashboard_id: dashboardId,
      data: JSON.stringify({ name: id, impact: 'MINOR', dashboardId, startedAt: new Date(T0).toISOString(), stoppedAt, created_at: new Date(T0).toISOString(), updated_at: null }),
    });
    await insertRows(s, 'incidents', [
      incident('open', 1, null),
      incident('stopped-long-ago', 1, new Date(T0 + 60_000).toISOString()),
      incident('stopped-lately', 1, new Date(T0 + 7_200_000).toISOString()),
      incident('other-dashboard', 2, null),
    ]);
    await s.migrate();
    const stopped = Object.fromEntries(((await s.knex('vigil_incidents').select('id', 'stopped_ms')) as { id: string; stopped_ms: unknown }[])
      .map((r) => [r.id, r.stopped_ms === null ? null : Number(r.stopped_ms)]));
    expect(stopped).toEqual({ open: null, 'stopped-long-ago': T0 + 60_000, 'stopped-lately': T0 + 7_200_000, 'other-dashboard': null });
    expect((await s.incidents.listCurrentByDashboard!(ACCOUNT, 1, new Date(T0 + 3_600_000))).map((i) => i.id)).toEqual(['open', 'stopped-lately']);
    expect(await s.incidents.listCurrentByDashboard!(OTHER, 1, new Date(T0))).toEqual([]);
  });

  it('migration 021 records each stored client certificate\'s host, and a run finds its host\'s by it', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered'));
    await migrate(s.knex, 'vigil_', '020_incident_stopped');
    const cert = (id: string, host: string, accountId = ACCOUNT) => ({
      id, account_id: accountId, data: JSON.stringify({ host, cert: 'PEM', ca: null, encryptedKey: null, encryptedPassphrase: null, created_at: new Date(T0).toISOString() }),
    });
    await insertRows(s, 'client_certificates', [
      ...Array.from({ length: 500 }, (_, i) => cert(`other-${i}`, `host-${i}.example.org`)),
      cert('wild', '*.example.com'), cert('api', 'api.example.com'), cert('theirs', 'api.example.com', OTHER),
    ]);
    await s.migrate();
    if (kind === 'postgres') await s.knex.raw('ANALYZE vigil_client_certificates');
    const hosts = ['api.example.com', '*.example.com'];
    expect((await s.clientCertificates.listByHosts!(ACCOUNT, hosts)).map((c) => [c.id, c.host])).toEqual([['wild', '*.example.com'], ['api', 'api.example.com']]);
    // The store's statement, prepared on its own connection (so not seen by knex).
    const plan = await planOf(kind, s, {
      sql: 'select id, account_id, data, seq from "vigil_client_certificates" where account_id = ? and (host in (?, ?))', bindings: [ACCOUNT, ...hosts],
    });
    expect(readsWholeTable(kind, plan), plan).toBe(false);
    expect(plan).toMatch(kind === 'sqlite' ? /USING INDEX \S+ \(account_id=\? AND host=\?\)/ : /"Index Cond":"[^"]*host/);
    // A certificate written after the migration carries its host too.
    await s.clientCertificates.insert(ACCOUNT, { id: 'later', host: 'shop.example.com', cert: 'PEM', ca: null, encryptedKey: null, encryptedPassphrase: null, created_at: new Date(T0).toISOString() });
    expect((await s.clientCertificates.listByHosts!(ACCOUNT, ['shop.example.com'])).map((c) => c.id)).toEqual(['later']);
  });

  it('pages an account\'s status page incidents newest first and its services from a cursor on, and finds a status page\'s incidents, not through the other rows', async () => {
    const s = (storage = await freshStore(kind, 'vigil_ordered', { pool: { min: 1, max: 1 } }));
    await s.migrate();
    // 2,000 incidents, two at each second (the later stored comes first), and 2,000 services.
    const n = Array.from({ length: 2_000 }, (_, i) => i);
    await insertRows(s, 'status_page_incidents', n.map((i) => ({
      id: `inc-${i}`, account_id: ACCOUNT, data: '{}', created_ms: T0 + Math.floor(i / 2) * 1_000,
    })));
    await insertRows(s, 'services', n.map((i) => ({ id: `svc-${i}`, account_id: ACCOUNT, data: '{}' })));
    await insertRows(s, 'status_page_incidents', [{ id: 'inc-other', account_id: OTHER, data: '{}', created_ms: T0 }]);
    if (kind === 'postgres') await s.knex.raw('ANALYZE');
    const newestFirst = [...n].reverse().map((i) => `inc-${i}`);
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
    expect(ids(await s.statusPageIncidents.listAfter(ACCOUNT, null, 3))).toEqual(newestFirst.slice(0, 3));
    // After a cursor: its twin created at the same time comes next when stored before it.
    expect(ids(await s.statusPageIncidents.listAfter(ACCOUNT, 'inc-201', 3))).toEqual(['inc-200', 'inc-199', 'inc-198']);
    expect(ids(await s.statusPageIncidents.listAfter(ACCOUNT, 'inc-200', 3))).toEqual(['inc-199', 'inc-198', 'inc-197']);
    expect(ids(await s.statusPageIncidents.listAfter(ACCOUNT, 'inc-1', 5))).toEqual(['inc-0']);
    expect(await s.statusPageIncidents.listAfter(ACCOUNT, 'inc-other', 5)).toEqual([]);
    expect(await s.statusPageIncidents.listAfter(ACCOUNT, 'no-such-incident', 5)).toEqual([]);
    expect(ids(await s.services.listAfter(ACCOUNT, 'svc-1899', 3))).toEqual(['svc-1900', 'svc-1901', 'svc-1902']);
    expect(await s.services.listAfter(ACCOUNT, 'svc-1999', 3)).toEqual([]);

    const incidents = await captured(s, () => s.statusPageIncidents.listAfter(ACCOUNT, 'inc-101', 100));
    expect(ids(incidents.result)).toEqual(newestFirst.slice(1_899, 1_999));
    const services = await captured(s, () => s.services.listAfter(ACCOUNT, 'svc-1899', 100));
    expect(ids(services.result)).toEqual(n.slice(1_900).map((i) => `svc-${i}`));
    // A status page's incidents: the open ones and those closed within its days, not all 2,000.
    await s.knex('vigil_status_page_incidents').where('account_id', ACCOUNT).update({ closed_ms: T0 });
    await s.knex('vigil_status_page_incidents').whereIn('id', ['inc-7', 'inc-1500']).update({ closed_ms: null });
    await s.knex('vigil_status_page_incidents').whereIn('id', ['inc-3']).update({ closed_ms: T0 + 86_400_000 });
    if (kind === 'postgres') await s.knex.raw('ANALYZE vigil_status_page_incidents');
    const since = T0 + 3_600_000;
    expect(ids(await s.statusPageIncidents.listCurrent!(ACCOUNT, new Date(since)))).toEqual(['inc-1500', 'inc-7', 'inc-3']);
    // The store's statement, prepared on its own connection (so not seen by knex).
    const current = {
      sql: 'select id, account_id, data, seq from "vigil_status_page_incidents" where account_id = ? and (closed_ms is null or closed_ms >= ?)', bindings: [ACCOUNT, since],
    };
    // SQLite filters the account's entries of the (account, closed) index: the other incidents' documents are not read.
    if (kind === 'sqlite') expect(await planOf(kind, s, current)).toMatch(/^SEARCH vigil_status_page_incidents USING INDEX vigil_status_page_incidents_account_id_closed_ms_index /);
    else expect(await rowsScanned(s, current, 'status_page_incidents')).toBeLessThan(10);
    for (const [{ statements }, table] of [[incidents, 'status_page_incidents'], [services, 'services']] as const) {
      const page = statements.at(-1)!;
      if (kind === 'sqlite') expect(await planOf(kind, s, page)).toMatch(table === 'services' ? /SEARCH vigil_services USING INDEX \S+ \(account_id=\? AND rowid>\?\)/ : /SEARCH vigil_status_page_incidents USING INDEX \S+ \(account_id=\? AND created_ms<\?\)/);
      else expect(await rowsScanned(s, page, table)).toBeLessThan(250);
    }
  });
});
