/**
 * The reference the analytics tests compare the API with: every metric computed again by plain loops
 * over the stored results (the definitions are in analytics-verified.test.ts), and the harness that
 * stores them and asks the API.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, afterAll, expect } from 'vitest';
import { apiHarness, type ApiHarness } from './harness.js';
import { allMetrics, apiResults, DAY, MIN, noise, NOW, tcpResults, timeouts, type Kind, type Point, type Result } from './analytics-results.js';

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

export interface RefQuery {
  from: number;
  to: number;
  intervalMinutes?: number;
  groupBy?: 'runLocation' | 'statusCode';
  statuses?: ('success' | 'failure')[];
  metrics: string[];
}

/** The whole series, in the API's order: by bucket start, then group (none first). */
export function reference(results: Result[], checkId: string, q: RefQuery): Point[] {
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
export function differences(actual: Point[], expected: Point[]): string[] {
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

/**
 * Account a's API and TCP check with the stored results, on a harness made once for the enclosing
 * describe (`set`, when given, receives it), and the questions the tests ask the API and the reference.
 */
export function analyticsUnderTest(backend: 'sqlite' | 'postgres', set?: (h: ApiHarness) => void) {
  let h: ApiHarness;
  const ids: Record<Kind, string> = { api: '', tcp: '' };
  const stored: Record<Kind, Result[]> = { api: [], tcp: [] };

  beforeAll(async () => {
    h = await apiHarness(backend, { rateLimit: false });
    set?.(h);
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

  return { path, get, verify, last24 };
}
