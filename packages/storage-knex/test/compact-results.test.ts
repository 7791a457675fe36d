import { randomBytes } from 'node:crypto';
import { ConflictError, slotResultId, type CheckResult, type NewRecord } from '@vigil/core';
import { checkResultFixture } from '@vigil/core/testing';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { toNarrow } from '../src/compact/codec.js';
import { LAYOUTS } from '../src/compact/layout.js';
import { knexStorage, type KnexStorage } from '../src/index.js';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');
const prefixes = new WeakMap<KnexStorage, string>();
const opened = (storage: KnexStorage, prefix: string) => (prefixes.set(storage, prefix), storage);
const dialects: [string, () => KnexStorage][] = [['sqlite', () => opened(knexStorage({ client: 'sqlite3', connection: ':memory:' }), 'vigil_')]];
if (PG_URL) {
  dialects.push(['postgres', () => {
    const prefix = `cmp_${randomBytes(4).toString('hex')}_`;
    return opened(knexStorage({ knex: knexFactory({ client: 'pg', connection: PG_URL }), tablePrefix: prefix }), prefix);
  }]);
}

const ACC = 'acc-compact';
const MIN = 60_000;
const t0 = Date.UTC(2026, 4, 1, 10, 0);

/** A scheduled run's result as the pipeline stores it: the slot's id, started a little after its due time. */
function scheduled(checkId: string, dueMs: number, overrides: Partial<NewRecord<CheckResult>> = {}): NewRecord<CheckResult> {
  const location = overrides.runLocation ?? 'us-east-1';
  const attempt = overrides.attempts ?? 1;
  const started = dueMs + 37;
  const stopped = new Date(started + 121).toISOString();
  return checkResultFixture(checkId, {
    id: slotResultId(checkId, location, new Date(dueMs), attempt),
    startedAt: new Date(started).toISOString(), stoppedAt: stopped, created_at: stopped,
    responseTime: 120.5, phases: { dns: 10.25, connection: 30, data: 80.25, total: 120.5 },
    details: { response: 'PONG', errorCode: null },
    ...overrides,
  });
}

function apiRun(checkId: string, dueMs: number, overrides: Partial<NewRecord<CheckResult>> = {}): NewRecord<CheckResult> {
  return scheduled(checkId, dueMs, {
    checkType: 'API', name: 'orders API', statusCode: 200, sslDaysRemaining: 0, responseTime: 210.37,
    phases: { wait: 0.01, dns: 1.5, tcp: 2, tls: 20.11, firstByte: 150, download: 36.75, total: 210.37 },
    details: { request: { method: 'GET', url: 'https://127.0.0.1/' }, response: { statusCode: 200, body: 'ok' } },
    ...overrides,
  });
}

const strip = ({ accountId: _a, ...r }: CheckResult) => r;
const rows = async (s: KnexStorage, table: string) => Number((await s.knex(`${prefixes.get(s)}${table}`).count({ n: '*' }))[0]!.n);

async function cleanup(storage: KnexStorage) {
  if (storage.name === 'knex-pg') {
    const rows = (await storage.knex.raw('select tablename from pg_tables where tablename like ?', [`${prefixes.get(storage)}%`])).rows as { tablename: string }[];
    for (const { tablename } of rows) await storage.knex.schema.dropTableIfExists(tablename);
    await storage.knex.destroy();
  }
  await storage.close();
}

describe.each(dialects)('compact results on %s', (_name, open) => {
  it('writes every column of each narrow table, and a narrow row has no field its table lacks', async () => {
    const s = open();
    try {
      await s.migrate();
      const pg = s.name === 'knex-pg';
      for (const layout of LAYOUTS) {
        const table = `${prefixes.get(s)}${layout.name}`;
        const columns = pg
          ? ((await s.knex.raw('select column_name as name from information_schema.columns where table_name = ? order by ordinal_position', [table])).rows as { name: string }[])
          : ((await s.knex.raw(`pragma table_info(${table})`)) as { name: string }[]);
        expect(Object.keys(layout.columns)).toEqual(columns.map((c) => c.name));
        const run = layout.checkType === 'API' ? apiRun('a1', t0) : scheduled('c1', t0);
        expect(Object.keys(toNarrow(run)!.row)).toEqual(Object.keys(layout.columns));
      }
    } finally {
      await cleanup(s);
    }
  });

  it('stores scheduled runs as narrow rows: the hour\'s first passing run and failing runs whole, later passing runs without their detail', async () => {
    const s = open();
    try {
      const first = scheduled('c1', t0);
      const second = scheduled('c1', t0 + MIN, { name: 'renamed' });
      const failed = scheduled('c1', t0 + 2 * MIN, { name: 'renamed', hasFailures: true, errorMessage: 'connection refused', details: { errorCode: 'ECONNREFUSED' } });
      const api = apiRun('a1', t0);
      const apiSlow = apiRun('a1', t0 + MIN, { isDegraded: true, statusCode: null, sslDaysRemaining: null, phases: { wait: 0, dns: 1, tcp: 2, firstByte: 3, download: 4.5, total: 10.5 }, responseTime: 10.5 });
      await s.checkResults.insertMany(ACC, [first, second, failed, api, apiSlow]);
      expect(await rows(s, 'check_results')).toBe(0);
      expect(await rows(s, 'check_runs_tcp')).toBe(3);
      expect(await rows(s, 'check_runs_api')).toBe(2);
      expect(await rows(s, 'check_result_details')).toBe(4);
      // Kept whole: read back exactly as written, by id alone or with the check.
      for (const r of [first, failed, api, apiSlow]) {
        expect(strip((await s.checkResults.get(ACC, r.id))!)).toEqual(r);
        expect(strip((await s.checkResults.get(ACC, r.id, r.checkId))!)).toEqual(r);
      }
      // The second passing run of the hour: its detail is absent, its name the check's latest.
      expect(strip((await s.checkResults.get(ACC, second.id, 'c1'))!)).toEqual({ ...second, details: null });
      expect((await s.checkResults.get(ACC, first.id))!.name).toBe('TCP check');
      // Another account, another check's path, an unknown slot: not found.
      expect(await s.checkResults.get('other-account', first.id)).toBeNull();
      expect(await s.checkResults.get(ACC, first.id, 'a1')).toBeNull();
      expect(await s.checkResults.get(ACC, slotResultId('c1', 'us-east-1', new Date(t0 + 9 * MIN), 1), 'c1')).toBeNull();
      // The same slot stored twice is a conflict, as a full row's id is.
      await expect(s.checkResults.insertMany(ACC, [scheduled('c1', t0 + MIN)])).rejects.toBeInstanceOf(ConflictError);
    } finally {
      await cleanup(s);
    }
  });

  it('stores a passing run of a check it knows in one statement with no transaction; any other batch in a transaction', async () => {
    const s = open();
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase().replace(/;$/, ''));
    const written = async (runs: NewRecord<CheckResult>[]) => {
      statements.length = 0;
      s.knex.on('query', onQuery);
      try {
        await s.checkResults.insertMany(ACC, runs);
      } finally {
        s.knex.off('query', onQuery);
      }
      return [...statements];
    };
    try {
      await s.migrate();
      // The check's first run: its key is made and its detail kept, in one transaction.
      expect(await written([scheduled('c7', t0)])).toContain('begin');
      // Its second passing run of the hour: the narrow row alone.
      const second = scheduled('c7', t0 + MIN);
      expect(await written([second])).toEqual(['insert']);
      expect(strip((await s.checkResults.get(ACC, second.id, 'c7'))!)).toEqual({ ...second, details: null });
      // Stored twice: still a conflict, and nothing more is stored.
      await expect(s.checkResults.insertMany(ACC, [scheduled('c7', t0 + MIN)])).rejects.toBeInstanceOf(ConflictError);
      expect(await rows(s, 'check_runs_tcp')).toBe(2);
      // A failed run keeps its detail, a renamed check has its key's name written (its passing run
      // keeps none), the next hour's first passing run keeps its detail: each in a transaction.
      const failed = scheduled('c7', t0 + 2 * MIN, { hasFailures: true, errorMessage: 'connection refused', details: { errorCode: 'ECONNREFUSED' } });
      const renamed = scheduled('c7', t0 + 3 * MIN, { name: 'renamed' });
      const nextHour = scheduled('c7', t0 + 60 * MIN, { name: 'renamed' });
      for (const run of [failed, renamed, nextHour]) {
        const sent = await written([run]);
        expect(sent[0]).toBe('begin');
        expect(sent.at(-1)).toBe('commit');
        expect(strip((await s.checkResults.get(ACC, run.id, 'c7'))!)).toEqual(run === renamed ? { ...run, details: null } : run);
      }
      // The renamed check's next passing run: one statement again, and every run reads the new name.
      expect(await written([scheduled('c7', t0 + 61 * MIN, { name: 'renamed' })])).toEqual(['insert']);
      expect((await s.checkResults.get(ACC, second.id, 'c7'))!.name).toBe('renamed');
      // Passing runs of several known checks: one statement still.
      expect(await written([scheduled('c8', t0 + 61 * MIN)])).toContain('begin');
      expect(await written([scheduled('c7', t0 + 62 * MIN, { name: 'renamed' }), scheduled('c8', t0 + 62 * MIN)])).toEqual(['insert']);
      // A known check at a location this process has not stored yet: its key is made, in a transaction.
      const elsewhere = scheduled('c8', t0 + 63 * MIN, { runLocation: 'eu-west-1' });
      expect(await written([elsewhere])).toContain('begin');
      expect(strip((await s.checkResults.get(ACC, elsewhere.id, 'c8'))!)).toEqual(elsewhere);
      // Known checks in two tables (a TCP run beside an API run): a transaction.
      expect(await written([apiRun('a7', t0 + 60 * MIN)])).toContain('begin');
      const tcp = scheduled('c7', t0 + 64 * MIN, { name: 'renamed' });
      const api = apiRun('a7', t0 + 64 * MIN);
      const both = await written([tcp, api]);
      expect(both[0]).toBe('begin');
      expect(both.filter((q) => q === 'insert')).toHaveLength(2);
      expect(strip((await s.checkResults.get(ACC, api.id, 'a7'))!)).toEqual({ ...api, details: null });
      expect(await rows(s, 'check_runs_tcp')).toBe(11);
      expect(await rows(s, 'check_runs_api')).toBe(2);
    } finally {
      await cleanup(s);
    }
  });

  it('keeps in a document what a narrow row cannot state, and leaves other runs as full rows', async () => {
    const s = open();
    try {
      const odd = [
        scheduled('c2', t0, { phases: { dns: 1.234, connection: 2, data: 3, total: 6.234 }, responseTime: 6.234, details: null }),
        scheduled('c2', t0 + MIN, { phases: { dns: 1, connection: 2, data: 3, total: 6, extra: 9 }, responseTime: 6 }),
        scheduled('c2', t0 + 2 * MIN, { stoppedAt: new Date(t0 + 2 * MIN + 40_000).toISOString(), statusCode: 7 }),
        scheduled('c2', t0 + 3 * MIN, { startedAt: new Date(t0 + 3 * MIN - 40_000).toISOString() }),
        scheduled('c2', t0 + 4 * MIN, { errorMessage: 'a note on a pass' }),
        // Times that parse but are not written as toISOString writes them: kept as written.
        scheduled('c2', t0 + 9 * MIN, { startedAt: new Date(t0 + 9 * MIN + 37).toISOString().replace('Z', '+00:00') }),
        scheduled('c2', t0 + 10 * MIN, { stoppedAt: '2026-05-01T10:10:60.000Z', created_at: '2026-05-01T10:10:60.000Z' }),
        scheduled('c2', t0 + 11 * MIN, { startedAt: '2026-05-01T10:11:00.0370Z' }),
      ];
      const legacy = checkResultFixture('c2', { startedAt: new Date(t0 + 5 * MIN).toISOString() });
      const manual = scheduled('c2', t0 + 6 * MIN, { runSource: 'SCHEDULE_NOW' });
      const browser = scheduled('c2', t0 + 7 * MIN, { checkType: 'BROWSER' });
      const retried = scheduled('c2', t0 + 8 * MIN, { attempts: 16 });
      await s.checkResults.insertMany(ACC, [...odd, legacy, manual, browser, retried]);
      expect(await rows(s, 'check_runs_tcp')).toBe(8);
      expect(await rows(s, 'check_results')).toBe(4);
      for (const r of [...odd.slice(1), legacy, manual, browser, retried]) {
        const got = strip((await s.checkResults.get(ACC, r.id, 'c2'))!);
        // The hour's first passing run keeps its detail; the others keep what the row cannot state.
        expect(got).toEqual(odd.includes(r) ? { ...r, name: r.name, details: null } : r);
      }
      expect(strip((await s.checkResults.get(ACC, odd[0]!.id))!)).toEqual(odd[0]);
    } finally {
      await cleanup(s);
    }
  });

  it('lists narrow and full rows together newest first, by page, window and result type', async () => {
    const s = open();
    try {
      const runs = Array.from({ length: 30 }, (_, i) => scheduled('c3', t0 + i * MIN, i % 10 === 3 ? { resultType: 'ATTEMPT', hasFailures: true } : {}));
      const manual = Array.from({ length: 5 }, (_, i) => checkResultFixture('c3', { startedAt: new Date(t0 + i * 6 * MIN + 20_000).toISOString(), runSource: 'TRIGGER_API' }));
      await s.checkResults.insertMany(ACC, [...runs, ...manual]);
      const all = [...runs, ...manual].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));
      const seen: string[] = [];
      for (let offset = 0; offset < 35; offset += 10) {
        const page = await s.checkResults.listByCheck(ACC, 'c3', { limit: 10, offset });
        expect(page.total).toBe(35);
        seen.push(...page.items.map((r) => r.id));
      }
      expect(seen).toEqual(all.map((r) => r.id));
      const attempts = await s.checkResults.listByCheck(ACC, 'c3', { limit: 50, offset: 0, resultType: 'ATTEMPT' });
      expect(attempts.items.map((r) => r.id)).toEqual(runs.filter((r) => r.resultType === 'ATTEMPT').reverse().map((r) => r.id));
      const from = new Date(t0 + 10 * MIN);
      const to = new Date(t0 + 20 * MIN);
      const window = await s.checkResults.listByCheck(ACC, 'c3', { limit: 50, offset: 0, from, to });
      expect(window.items.map((r) => r.id)).toEqual(all.filter((r) => Date.parse(r.startedAt) >= from.getTime() && Date.parse(r.startedAt) < to.getTime()).map((r) => r.id));
      expect((await s.checkResults.listByCheck(ACC, 'c3', { limit: 50, offset: 0, checkSessionId: 'no-such-session' })).total).toBe(0);
      expect((await s.checkResults.listByCheck('other-account', 'c3', { limit: 50, offset: 0 })).total).toBe(0);
    } finally {
      await cleanup(s);
    }
  });

  it('aggregates narrow and full rows alike, exactly for a range that roll-ups do not serve', async () => {
    const s = open();
    try {
      const runs = Array.from({ length: 40 }, (_, i) => apiRun('a4', t0 + i * MIN, {
        responseTime: 100 + i, phases: { wait: 0, dns: i, tcp: 1, tls: 2, firstByte: 97, download: 0, total: 100 + i }, hasFailures: i % 8 === 0,
        statusCode: i % 8 === 0 ? 500 : 200,
      }));
      const manual = checkResultFixture('a4', { checkType: 'API', startedAt: new Date(t0 + 5 * MIN).toISOString(), responseTime: 1000, phases: { dns: 7, total: 1000 }, statusCode: 200 });
      await s.checkResults.insertMany(ACC, [...runs, manual]);
      const [row] = await s.checkResults.aggregate(ACC, {
        checkIds: ['a4'], from: new Date(t0), to: new Date(t0 + HOUR_MS), measures: [
          { name: 'avg', fn: 'avg', field: 'responseTime' }, { name: 'max', fn: 'max', field: 'responseTime' },
          { name: 'dns', fn: 'sum', field: 'dns' }, { name: 'tls', fn: 'max', field: 'tls' }, { name: 'p50', fn: 'p50', field: 'responseTime' },
        ],
      });
      const values = [...runs.map((r) => r.responseTime), 1000];
      expect(row).toMatchObject({ checkId: 'a4', count: 41, failures: 5 });
      expect(row!.values.avg).toBeCloseTo(values.reduce((a, b) => a + b, 0) / 41, 9);
      expect(row!.values).toMatchObject({ max: 1000, dns: (39 * 40) / 2 + 7, tls: 2, p50: 120 });
      const byStatus = await s.checkResults.aggregate(ACC, { checkIds: ['a4'], from: new Date(t0), to: new Date(t0 + HOUR_MS), groupBy: 'statusCode', measures: [] });
      expect(byStatus.map((r) => [r.group, r.count])).toEqual([['200', 36], ['500', 5]]);
    } finally {
      await cleanup(s);
    }
  });

  it('retention deletes narrow rows with their documents, after rolling them up', async () => {
    const s = open();
    try {
      const runs = Array.from({ length: 120 }, (_, i) => scheduled('c5', t0 + i * MIN, { hasFailures: i % 30 === 0, responseTime: i + 1, phases: { dns: 0, connection: 0, data: i + 1, total: i + 1 } }));
      await s.checkResults.insertMany(ACC, runs);
      const out = await s.checkResults.prune(ACC, new Date(t0 + HOUR_MS), 10_000);
      expect(out).toMatchObject({ deleted: 60, done: true });
      expect(await rows(s, 'check_runs_tcp')).toBe(60);
      expect(await rows(s, 'check_result_details')).toBe(3);
      const [rollup] = await s.rollups(ACC, 'c5', new Date(t0), new Date(t0 + HOUR_MS));
      expect(rollup).toMatchObject({ count: 60, failures: 2, min: 1, max: 60, sum: (60 * 61) / 2, pruned: true });
      expect((await s.checkResults.listByCheck(ACC, 'c5', { limit: 200, offset: 0 })).total).toBe(60);
      // The roll-up keeps the response time once: a `total` phase equal to it reads from it.
      const [agg] = await s.checkResults.aggregate(ACC, { checkIds: ['c5'], from: new Date(t0), to: new Date(t0 + HOUR_MS), measures: [
        { name: 'max', fn: 'max', field: 'total' }, { name: 'p50', fn: 'p50', field: 'total' }, { name: 'data', fn: 'p50', field: 'data' },
      ] });
      expect(agg).toMatchObject({ approximate: true, count: 60 });
      expect(agg!.values.max).toBe(60);
      for (const name of ['p50', 'data']) expect(Math.abs(agg!.values[name]! - 30.5) / 30.5).toBeLessThan(0.02);
      // Roll-ups have their own retention.
      expect(await s.checkResults.pruneRollups!('other-account', new Date(t0 + HOUR_MS))).toBe(0);
      expect(await s.checkResults.pruneRollups!(ACC, new Date(t0 + HOUR_MS))).toBe(1);
      expect(await s.rollups(ACC, 'c5', new Date(t0), new Date(t0 + HOUR_MS))).toEqual([]);
    } finally {
      await cleanup(s);
    }
  });

  it('prunes a batch at a time in whole hours, narrow and full rows alike, and deleteOlderThan takes both kinds', async () => {
    const s = open();
    try {
      // Three hours of one run a minute, a manual run in each, and another account's runs.
      const runs = Array.from({ length: 180 }, (_, i) => scheduled('c6', t0 + i * MIN, { hasFailures: i % 45 === 0 }));
      const manual = [0, 1, 2].map((h) => checkResultFixture('c6', { startedAt: new Date(t0 + h * HOUR_MS + 90_000).toISOString(), runSource: 'TRIGGER_API' }));
      const other = Array.from({ length: 30 }, (_, i) => scheduled('c7', t0 + i * MIN));
      await s.checkResults.insertMany(ACC, [...runs, ...manual]);
      await s.checkResults.insertMany('acc-other', other);
      const deleted: number[] = [];
      for (let call = 0; call < 10; call++) {
        const step = await s.checkResults.prune(ACC, new Date(t0 + 3 * HOUR_MS), 30);
        deleted.push(step.deleted);
        if (step.done) break;
      }
      // An hour holds more than a batch's 30 results: each batch is one whole hour.
      expect(deleted).toEqual([61, 61, 61]);
      const rollups = await s.rollups(ACC, 'c6', new Date(t0), new Date(t0 + 3 * HOUR_MS));
      expect(rollups.map((r) => [r.count, r.failures])).toEqual([[61, 2], [61, 1], [61, 1]]);
      expect((await s.checkResults.listByCheck(ACC, 'c6', { limit: 10, offset: 0 })).total).toBe(0);
      expect((await s.checkResults.listByCheck('acc-other', 'c7', { limit: 100, offset: 0 })).total).toBe(30);
      // deleteOlderThan (every account, no roll-up) removes narrow rows and their documents too.
      await s.checkResults.insertMany(ACC, [scheduled('c6', t0 + 5 * HOUR_MS, { hasFailures: true }), checkResultFixture('c6', { startedAt: new Date(t0 + 5 * HOUR_MS).toISOString() })]);
      expect(await s.checkResults.deleteOlderThan(new Date(t0 + 6 * HOUR_MS))).toBe(32);
      for (const table of ['check_runs_tcp', 'check_result_details', 'check_results']) expect(await rows(s, table)).toBe(0);
    } finally {
      await cleanup(s);
    }
  });
});

const HOUR_MS = 60 * MIN;
