/**
 * The analytics routes checked number by number. A varied set of API and TCP results is stored
 * (phase timings with ties, missing phases, statuses pass / fail / error / degraded, status codes,
 * run locations, retries, ATTEMPT rows, results at the window's edges, other checks' and accounts'
 * results), every metric and suffix is computed again here by a small reference implementation
 * over the same results, and the API's answers must match it to floating-point precision for
 * windows, quick ranges, buckets, groupings, status filters and pages, on SQLite and, with
 * VIGIL_PG_URL, on PostgreSQL. Bad query input must answer the spec's 400 naming the field.
 *
 * Percentiles follow the definition Vigil documents (PostgreSQL's percentile_cont, also known as
 * R-7 / Excel PERCENTILE.INC): over the n values of a bucket sorted ascending (0-based), the p-th
 * percentile sits at rank h = p * (n - 1) and is x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]).
 * median is p50. stddev is the sample standard deviation (n - 1), absent (null) below two values.
 */
import { randomUUID } from 'node:crypto';
import type { CheckResult, NewRecord } from '@vigil/core';
import { checkResultFixture } from '@vigil/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';
import { expect400 } from './support/expect.js';

afterAll(dropPostgresSchema);

type Result = NewRecord<CheckResult>;
type Point = Record<string, string | number | null>;
type Kind = 'api' | 'tcp';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** The harness clock's time; the API's quick ranges end here. */
const NOW = Date.parse('2026-05-01T12:00:00.000Z');

const SUFFIXES = ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'];
const BASES: Record<Kind, string[]> = {
  api: ['responseTime', 'wait', 'dns', 'tcp', 'firstByte', 'download'],
  tcp: ['total', 'dns', 'connection', 'data'],
};
const allMetrics = (kind: Kind) => [
  ...BASES[kind],
  'availability',
  'retries',
  ...BASES[kind].flatMap((b) => SUFFIXES.map((s) => `${b}_${s}`)),
];

// ---------------------------------------------------------------------------------------------
// The stored results: deterministic, varied, with the awkward cases a real check produces.

/** mulberry32: a small seeded generator, so every run stores the same results. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const ms3 = (x: number) => Math.round(x * 1000) / 1000;

/** Times of the runs: dense over the last day, sparse over the 40 days before, and the edges. */
function runTimes(rnd: () => number): number[] {
  const times: number[] = [];
  for (let t = NOW - DAY; t < NOW; t += 5 * MIN) times.push(t + Math.floor(rnd() * 4 * MIN));
  for (let i = 0; i < 90; i++) times.push(NOW - DAY - Math.floor(rnd() * 40 * DAY));
  // The first instant of the default window is inside it, the last (now) and later are not.
  times.push(NOW - DAY, NOW - DAY - 1, NOW, NOW + MIN);
  // On an hour's bucket edge, and the millisecond before it.
  times.push(NOW - 6 * HOUR, NOW - 6 * HOUR - 1);
  return times;
}

const LOCATIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2'];

function apiResults(checkId: string, seed: number): Result[] {
  const rnd = random(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  return runTimes(rnd).map((t) => {
    const roll = rnd();
    const runLocation = pick(LOCATIONS);
    // Whole-millisecond DNS times repeat often: ties for the percentiles.
    const dns = Math.floor(rnd() * 6);
    const common = { checkType: 'API', name: 'orders API', runLocation, startedAt: new Date(t).toISOString() };
    if (roll < 0.08) {
      // Connection refused: no status code, no phase after DNS, retried.
      const responseTime = ms3(dns + 1 + rnd() * 3);
      return checkResultFixture(checkId, { ...common, responseTime, hasErrors: true, statusCode: null, attempts: 1 + Math.floor(rnd() * 3), phases: { dns, total: responseTime } });
    }
    const tcp = ms3(1 + rnd() * 40);
    const tls = ms3(5 + rnd() * 60);
    const wait = ms3(20 + rnd() ** 3 * 900);
    const download = ms3(rnd() * 25);
    const firstByte = ms3(dns + tcp + tls + wait);
    const responseTime = ms3(firstByte + download);
    const failing = roll < 0.2;
    return checkResultFixture(checkId, {
      ...common,
      responseTime,
      statusCode: failing ? pick([500, 502, 404]) : pick([200, 200, 200, 201, 204]),
      hasFailures: failing,
      isDegraded: !failing && roll > 0.9,
      attempts: failing ? 1 + Math.floor(rnd() * 3) : 1,
      phases: { dns, tcp, tls, firstByte, download, wait, total: responseTime },
    });
  });
}

function tcpResults(checkId: string, seed: number): Result[] {
  const rnd = random(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  return runTimes(rnd).map((t) => {
    const roll = rnd();
    const dns = Math.floor(rnd() * 4);
    const common = { checkType: 'TCP', name: 'db', runLocation: pick(LOCATIONS), startedAt: new Date(t).toISOString() };
    if (roll < 0.1) {
      const responseTime = ms3(dns + rnd() * 2);
      return checkResultFixture(checkId, { ...common, responseTime, hasErrors: true, attempts: 1 + Math.floor(rnd() * 3), phases: { dns, total: responseTime } });
    }
    const connection = ms3(0.5 + rnd() * 30);
    // A third of the runs send no data: no data phase.
    const data = rnd() < 0.33 ? undefined : ms3(rnd() ** 2 * 400);
    const responseTime = ms3(dns + connection + (data ?? 0));
    return checkResultFixture(checkId, {
      ...common,
      responseTime,
      hasFailures: roll < 0.18,
      isDegraded: roll > 0.85,
      attempts: roll < 0.18 ? 2 : 1,
      phases: { dns, connection, ...(data === undefined ? {} : { data }), total: responseTime },
    });
  });
}

/**
 * Runs that all hit the same timeout, in a location of their own inside one hour: near-equal large
 * values, whose spread a sum-of-squares variance loses to cancellation.
 */
function timeouts(kind: Kind, checkId: string): Result[] {
  const start = NOW - 5 * HOUR + 3 * MIN;
  return [0.125, 0.25, 0.25, 0.375, 0.5, 0.625].map((frac, i) => {
    const total = 30_000 + frac;
    const phases: Record<string, number> = kind === 'api'
      ? { dns: 2 + frac, tcp: 3 + frac, tls: 10 + frac, firstByte: 29_990 + frac, download: 10 + frac / 2, wait: 29_975 + frac, total }
      : { dns: 2 + frac, connection: 29_990 + frac, data: 8 + frac, total };
    return checkResultFixture(checkId, {
      checkType: kind.toUpperCase(),
      runLocation: 'af-south-1',
      startedAt: new Date(start + i * 7 * MIN).toISOString(),
      responseTime: total,
      statusCode: kind === 'api' ? 504 : null,
      hasFailures: true,
      attempts: 3,
      phases,
    });
  });
}

/** Rows that must never count: tries a retry followed, and results of other checks or accounts. */
function noise(kind: Kind, checkId: string, otherCheckId: string): Result[] {
  const wild = (id: string, t: number, over: Partial<Result> = {}) => checkResultFixture(id, {
    checkType: kind.toUpperCase(),
    startedAt: new Date(t).toISOString(),
    responseTime: 99_999,
    statusCode: kind === 'api' ? 200 : null,
    phases: { dns: 9_999, tcp: 9_999, tls: 9_999, firstByte: 9_999, download: 9_999, wait: 9_999, connection: 9_999, data: 9_999, total: 99_999 },
    ...over,
  });
  return [
    wild(checkId, NOW - 3 * HOUR, { resultType: 'ATTEMPT', hasFailures: true }),
    wild(checkId, NOW - 2 * DAY, { resultType: 'ATTEMPT', hasErrors: true }),
    wild(otherCheckId, NOW - 3 * HOUR),
    wild(otherCheckId, NOW - 3 * DAY),
  ];
}

// ---------------------------------------------------------------------------------------------
// The reference: plain loops over the same results.

const isFailure = (r: Result) => r.hasFailures || r.hasErrors;

function percentile(sorted: number[], p: number): number {
  const h = p * (sorted.length - 1);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

function aggregate(values: number[], fn: string): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const sum = values.reduce((a, b) => a + b, 0);
  switch (fn) {
    case 'avg': return sum / values.length;
    case 'sum': return sum;
    case 'min': return sorted[0]!;
    case 'max': return sorted[sorted.length - 1]!;
    case 'median': case 'p50': return percentile(sorted, 0.5);
    case 'p90': return percentile(sorted, 0.9);
    case 'p95': return percentile(sorted, 0.95);
    case 'p99': return percentile(sorted, 0.99);
    case 'stddev': {
      if (values.length < 2) return null;
      const mean = sum / values.length;
      return Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / (values.length - 1));
    }
    default: throw new Error(`reference has no ${fn}`);
  }
}

/** The number a metric reads from one result; API responseTime and TCP total are the run's own time. */
function reading(r: Result, base: string): number | undefined {
  if (base === 'responseTime' || base === 'total') return r.responseTime;
  const v = r.phases[base];
  return typeof v === 'number' ? v : undefined;
}

function metricOf(rows: Result[], metric: string): number | null {
  if (metric === 'availability') return (100 * rows.filter((r) => !isFailure(r)).length) / rows.length;
  if (metric === 'retries') return rows.reduce((a, r) => a + r.attempts - 1, 0);
  const [base, fn = 'avg'] = metric.split('_') as [string, string?];
  return aggregate(rows.flatMap((r) => reading(r, base) ?? []), fn);
}

interface RefQuery {
  from: number;
  to: number;
  intervalMinutes?: number;
  groupBy?: 'runLocation' | 'statusCode';
  statuses?: ('success' | 'failure')[];
  metrics: string[];
}

/** The whole series, in the API's order: by bucket start, then group (none first). */
function reference(results: Result[], checkId: string, q: RefQuery): Point[] {
  const buckets = new Map<string, { start: number; group: string | null; rows: Result[] }>();
  for (const r of results) {
    const t = Date.parse(r.startedAt);
    if (r.checkId !== checkId || r.resultType !== 'FINAL' || t < q.from || t >= q.to) continue;
    if (q.statuses && !q.statuses.includes(isFailure(r) ? 'failure' : 'success')) continue;
    const width = q.intervalMinutes ? q.intervalMinutes * MIN : null;
    const start = width ? q.from + Math.floor((t - q.from) / width) * width : q.from;
    const group = q.groupBy === 'runLocation' ? r.runLocation : q.groupBy === 'statusCode' ? (r.statusCode === null ? null : String(r.statusCode)) : null;
    const key = `${start}|${group}`;
    if (!buckets.has(key)) buckets.set(key, { start, group, rows: [] });
    buckets.get(key)!.rows.push(r);
  }
  const order = (g: string | null) => (g === null ? '' : `~${g}`);
  return [...buckets.values()]
    .sort((a, b) => a.start - b.start || (order(a.group) < order(b.group) ? -1 : order(a.group) > order(b.group) ? 1 : 0))
    .map((b) => {
      const point: Point = { startedAt: new Date(b.start).toISOString() };
      if (q.groupBy) point[q.groupBy] = b.group;
      for (const m of q.metrics) point[m] = metricOf(b.rows, m);
      return point;
    });
}

/** Floating point only: a relative difference of 1e-9 (absolute near zero). */
function close(actual: unknown, expected: number | string | null): boolean {
  if (expected === null || typeof expected === 'string') return actual === expected;
  return typeof actual === 'number' && Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
}

/** Every difference between two series, as readable lines (empty when they agree). */
function differences(actual: Point[], expected: Point[]): string[] {
  const out: string[] = [];
  if (actual.length !== expected.length) out.push(`length ${actual.length}, expected ${expected.length}`);
  expected.forEach((e, i) => {
    const a = actual[i];
    if (!a) return;
    const keys = new Set([...Object.keys(a), ...Object.keys(e)]);
    for (const k of keys) {
      if (!(k in e)) out.push(`[${i}] unexpected key ${k}`);
      else if (!close(a[k], e[k]!)) out.push(`[${i} ${e.startedAt} ${e.runLocation ?? e.statusCode ?? ''}] ${k}: ${JSON.stringify(a[k])}, expected ${e[k]}`);
    }
  });
  return out.slice(0, 40);
}

// ---------------------------------------------------------------------------------------------

describe.each(BACKENDS)('analytics numbers on %s match a reference computed from the same results', (backend) => {
  let h: ApiHarness;
  const ids: Record<Kind, string> = { api: '', tcp: '' };
  const stored: Record<Kind, Result[]> = { api: [], tcp: [] };

  beforeAll(async () => {
    h = await apiHarness(backend, { rateLimit: false });
    const api = await h.a.post('/api/v1/checks/api', { name: 'orders API', request: { url: 'https://api.example.com/orders' } }).expect(201);
    const tcp = await h.a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: 'db.internal', port: 5432 } }).expect(201);
    ids.api = api.body.id;
    ids.tcp = tcp.body.id;
    const other = randomUUID();
    stored.api = [...apiResults(ids.api, 7), ...timeouts('api', ids.api), ...noise('api', ids.api, other)];
    stored.tcp = [...tcpResults(ids.tcp, 11), ...timeouts('tcp', ids.tcp), ...noise('tcp', ids.tcp, other)];
    await h.vigil.storage.checkResults.insertMany(h.a.accountId, [...stored.api, ...stored.tcp]);
    // The same check ids under another account, with values that would show if they leaked in.
    await h.vigil.storage.checkResults.insertMany(h.b.accountId, [...noise('api', ids.api, other), ...noise('tcp', ids.tcp, other)].map((r) => ({ ...r, id: randomUUID(), resultType: 'FINAL' as const })));
  });
  afterAll(() => h?.close());

  const path = (kind: Kind) => `/api/v1/analytics/${kind}-checks/${ids[kind]}`;

  type Query = Record<string, string | number | string[]>;

  async function get(kind: Kind, query: Query) {
    const qs = new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k, String(x)]))).toString();
    const res = await h.a.get(`${path(kind)}?${qs}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { from: string; to: string; series: Point[]; pagination: { page: number; limit: number }; metadata: Record<string, unknown> };
  }

  /** Every page of the series, 100 at a time. */
  async function series(kind: Kind, query: Query) {
    const all: Point[] = [];
    for (let page = 1; ; page++) {
      const body = await get(kind, { ...query, limit: 100, page });
      expect(body.pagination).toEqual({ page, limit: 100 });
      all.push(...body.series);
      if (body.series.length < 100) return { ...body, series: all };
    }
  }

  /** Asks the API and the reference the same question and compares every number. */
  async function verify(kind: Kind, query: Query, ref: Omit<RefQuery, 'metrics'>, metrics = allMetrics(kind)) {
    const body = await series(kind, { ...query, metrics: metrics.join(',') });
    expect([body.from, body.to]).toEqual([new Date(ref.from).toISOString(), new Date(ref.to).toISOString()]);
    const expected = reference(stored[kind], ids[kind], { ...ref, metrics });
    expect(expected.length, 'the reference finds results in this window').toBeGreaterThan(0);
    expect(differences(body.series, expected), `${kind} ${JSON.stringify(query)}`).toEqual([]);
    return expected;
  }

  const last24 = { from: NOW - DAY, to: NOW };

  describe.each(['api', 'tcp'] as Kind[])('%s checks', (kind) => {
    it('every metric and suffix over the default window (last24Hours), one bucket', async () => {
      const [point] = await verify(kind, {}, last24);
      // The window holds failures, retries and every phase: none of the numbers is trivially empty.
      expect(point!.availability).toBeLessThan(100);
      expect(point!.retries).toBeGreaterThan(0);
      for (const base of BASES[kind]) expect(point![`${base}_stddev`], base).toBeGreaterThan(0);
    });

    it('aggregationInterval buckets, aligned to the window start', async () => {
      await verify(kind, { aggregationInterval: 60 }, { ...last24, intervalMinutes: 60 });
      await verify(kind, { aggregationInterval: 7 }, { ...last24, intervalMinutes: 7 });
      await verify(kind, { aggregationInterval: 1 }, { ...last24, intervalMinutes: 1 });
      await verify(kind, { aggregationInterval: 43200 }, { ...last24, intervalMinutes: 43200 });
    });

    it('groupBy runLocation, alone and with buckets; near-equal timeouts keep their spread', async () => {
      await verify(kind, { groupBy: 'runLocation' }, { ...last24, groupBy: 'runLocation' });
      const rows = await verify(kind, { groupBy: 'runLocation', aggregationInterval: 60 }, { ...last24, groupBy: 'runLocation', intervalMinutes: 60 });
      const timeoutBucket = rows.find((r) => r.runLocation === 'af-south-1')!;
      expect(timeoutBucket[`${BASES[kind][0]}_stddev`]).toBeGreaterThan(0);
    });

    it('filterByStatus success, failure and both, with and without grouping', async () => {
      await verify(kind, { filterByStatus: 'success' }, { ...last24, statuses: ['success'] });
      await verify(kind, { filterByStatus: 'failure' }, { ...last24, statuses: ['failure'] });
      await verify(kind, { filterByStatus: 'success,failure' }, { ...last24, statuses: ['success', 'failure'] });
      await verify(kind, { filterByStatus: ['failure', 'success'] }, { ...last24, statuses: ['success', 'failure'] });
      await verify(kind, { filterByStatus: 'failure', groupBy: 'runLocation', aggregationInterval: 240 }, { ...last24, statuses: ['failure'], groupBy: 'runLocation', intervalMinutes: 240 });
    });

    it('from and to (ISO or unix seconds) override the quick range', async () => {
      const from = Date.parse('2026-04-12T03:17:30.000Z');
      const to = Date.parse('2026-04-30T18:00:00.000Z');
      await verify(kind, { from: new Date(from).toISOString(), to: new Date(to).toISOString(), aggregationInterval: 720 }, { from, to, intervalMinutes: 720 });
      await verify(kind, { from: from / 1000, to: to / 1000, aggregationInterval: 1440 }, { from, to, intervalMinutes: 1440 });
      // A UTC offset names the same instant.
      await verify(kind, { from: '2026-04-12T05:17:30+02:00', to: '2026-04-30T20:00:00.000+02:00', aggregationInterval: 720 }, { from, to, intervalMinutes: 720 });
      // from alone runs to now, whatever the quick range.
      await verify(kind, { from: '2026-04-29', quickRange: 'lastMonth' }, { from: Date.parse('2026-04-29T00:00:00Z'), to: NOW });
    });

    it('quick ranges name their windows (UTC, weeks from Monday)', async () => {
      const now = new Date(NOW);
      const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const monday = midnight - ((now.getUTCDay() + 6) % 7) * DAY;
      const windows: Record<string, { from: number; to: number }> = {
        last24Hours: { from: NOW - DAY, to: NOW },
        last7Days: { from: NOW - 7 * DAY, to: NOW },
        last30Days: { from: NOW - 30 * DAY, to: NOW },
        thisWeek: { from: monday, to: NOW },
        lastWeek: { from: monday - 7 * DAY, to: monday },
        thisMonth: { from: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), to: NOW },
        lastMonth: { from: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1), to: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) },
      };
      for (const [quickRange, w] of Object.entries(windows)) {
        await verify(kind, { quickRange, aggregationInterval: 1440 }, { ...w, intervalMinutes: 1440 });
      }
      await verify(kind, { quickRange: 'last30Days', groupBy: 'runLocation', filterByStatus: 'success' }, { ...windows.last30Days!, groupBy: 'runLocation', statuses: ['success'] });
    });

    it('limit and page cut the same series into pages; the default page holds 10', async () => {
      const metrics = ['availability', `${BASES[kind][1]}_p95`, 'retries'];
      const ref = { ...last24, groupBy: 'runLocation' as const, intervalMinutes: 60 };
      const whole = await verify(kind, { groupBy: 'runLocation', aggregationInterval: 60 }, ref, metrics);
      expect(whole.length).toBeGreaterThan(20);
      const q = { groupBy: 'runLocation', aggregationInterval: 60, metrics: metrics.join(',') };
      const first = await get(kind, q);
      expect(first.pagination).toEqual({ page: 1, limit: 10 });
      expect(differences(first.series, whole.slice(0, 10))).toEqual([]);
      const pages: Point[] = [];
      for (let page = 1; page <= Math.ceil(whole.length / 7); page++) {
        const body = await get(kind, { ...q, limit: 7, page });
        expect(body.pagination).toEqual({ page, limit: 7 });
        expect(body.series.length).toBe(Math.min(7, whole.length - (page - 1) * 7));
        pages.push(...body.series);
      }
      expect(differences(pages, whole)).toEqual([]);
      expect((await get(kind, { ...q, limit: 7, page: Math.ceil(whole.length / 7) + 1 })).series).toEqual([]);
      expect((await get(kind, { ...q, limit: 1, page: 3 })).series).toHaveLength(1);
    });

    it('metadata names every requested metric with its unit, and a point holds only those metrics', async () => {
      const metrics = allMetrics(kind);
      const body = await get(kind, { metrics: metrics.join(',') });
      expect(Object.keys(body.metadata).sort()).toEqual([...metrics].sort());
      for (const m of metrics) {
        const unit = m === 'availability' ? 'percent' : m === 'retries' ? 'count' : 'milliseconds';
        expect(body.metadata[m], m).toEqual({ label: expect.any(String), unit });
      }
      expect(Object.keys(body.series[0]!).sort()).toEqual(['startedAt', ...metrics].sort());
    });
  });

  it('API checks group by statusCode (none for a connection error), alone, with buckets and with a filter', async () => {
    const rows = await verify('api', { groupBy: 'statusCode' }, { ...last24, groupBy: 'statusCode' });
    expect(rows.map((r) => r.statusCode)).toContain(null);
    expect(rows.find((r) => r.statusCode === '504')!.responseTime_stddev).toBeGreaterThan(0);
    await verify('api', { groupBy: 'statusCode', aggregationInterval: 180 }, { ...last24, groupBy: 'statusCode', intervalMinutes: 180 });
    await verify('api', { groupBy: 'statusCode', filterByStatus: 'success', quickRange: 'last7Days' }, { from: NOW - 7 * DAY, to: NOW, groupBy: 'statusCode', statuses: ['success'] });
  });

  describe('bad query input answers 400 naming the field, never a 5xx', () => {
    const cases: [Kind, string, string][] = [
      ['tcp', '', 'metrics'],
      ['api', 'metrics=', 'metrics'],
      ['api', 'metrics=responseTime_P95', 'metrics'],
      ['api', 'metrics=responseTime_p42', 'metrics'],
      ['api', 'metrics=responseTime__avg', 'metrics'],
      ['api', 'metrics=availability_avg', 'metrics'],
      ['tcp', 'metrics=responseTime', 'metrics'],
      ['api', 'metrics=total', 'metrics'],
      ['api', 'metrics=constructor', 'metrics'],
      ['api', 'metrics=responseTime&aggregationInterval=0', 'aggregationInterval'],
      ['api', 'metrics=responseTime&aggregationInterval=43201', 'aggregationInterval'],
      ['api', 'metrics=responseTime&aggregationInterval=1.5', 'aggregationInterval'],
      ['api', 'metrics=responseTime&aggregationInterval=-5', 'aggregationInterval'],
      ['api', 'metrics=responseTime&aggregationInterval=abc', 'aggregationInterval'],
      ['api', 'metrics=responseTime&aggregationInterval=', 'aggregationInterval'],
      ['api', 'metrics=responseTime&aggregationInterval=1e3', 'aggregationInterval'],
      ['tcp', 'metrics=total&aggregationInterval=5&aggregationInterval=10', 'aggregationInterval'],
      ['tcp', 'metrics=total&limit=0', 'limit'],
      ['tcp', 'metrics=total&limit=101', 'limit'],
      ['tcp', 'metrics=total&limit=ten', 'limit'],
      ['tcp', 'metrics=total&limit=5&limit=6', 'limit'],
      ['tcp', 'metrics=total&page=0', 'page'],
      ['tcp', 'metrics=total&page=-1', 'page'],
      ['tcp', 'metrics=total&page=2.5', 'page'],
      ['tcp', 'metrics=total&page=99999999999999999999', 'page'],
      ['tcp', 'metrics=total&from=nope', 'from'],
      ['tcp', 'metrics=total&from=2026-02-30', 'from'],
      ['tcp', 'metrics=total&from=2026-04-30T25:00:00Z', 'from'],
      ['tcp', 'metrics=total&from=-100', 'from'],
      ['tcp', 'metrics=total&from=1e9', 'from'],
      ['tcp', 'metrics=total&from=99999999999999', 'from'],
      ['tcp', 'metrics=total&from=2026-04-01&from=2026-04-02', 'from'],
      ['tcp', 'metrics=total&to=0.5', 'to'],
      ['tcp', 'metrics=total&from=2026-05-01T00:00:00Z&to=2026-04-30T00:00:00Z', 'to'],
      ['tcp', 'metrics=total&to=2026-04-01', 'to'],
      ['tcp', 'metrics=total&quickRange=last24Hrs', 'quickRange'],
      ['tcp', 'metrics=total&quickRange=', 'quickRange'],
      ['tcp', 'metrics=total&groupBy=statusCode', 'groupBy'],
      ['api', 'metrics=responseTime&groupBy=region', 'groupBy'],
      ['api', 'metrics=responseTime&groupBy=runLocation&groupBy=statusCode', 'groupBy'],
    ];
    it.each(cases)('%s ?%s names %s', async (kind, qs, key) => {
      const res = await h.a.get(`${path(kind)}?${qs}`);
      expect400(res, 'query', key);
      expect(res.body.message).toContain(key);
    });

    it('filterByStatus outside success and failure names filterByStatus', async () => {
      for (const value of ['degraded', 'success,pending', 'SUCCESS']) {
        const res = await h.a.get(`${path('api')}?metrics=responseTime&filterByStatus=${value}`);
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', validation: { source: 'query' } });
        expect(res.body.validation.keys.every((k: string) => k.startsWith('filterByStatus')), JSON.stringify(res.body)).toBe(true);
      }
    });

    it('odd but valid input answers 200: unix 0, a window far in the past, the last page', async () => {
      for (const qs of [
        'metrics=total&from=0&aggregationInterval=1',
        'metrics=total_p99&from=86400&to=172800',
        'metrics=total&page=9007199254740991&limit=100',
        'metrics=total,total,total_sum&from=2026-05-01T12:00:00Z',
        'metrics=%20total%20,%20dns_p90',
      ]) {
        const res = await h.a.get(`${path('tcp')}?${qs}`);
        expect(res.status, `${qs}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    });
  });
});
