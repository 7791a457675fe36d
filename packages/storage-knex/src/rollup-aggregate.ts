import type { DDSketch } from '@datadog/sketches-js';
import type { AggregateFunction, ResultAggregateQuery, ResultAggregateRow } from '@vigil/core';
import { aggregateValues } from '@vigil/core/internals';
import type { Knex } from 'knex';
import { timesRelation } from './compact/union.js';
import { readRawResults, type RawRange, type RawResult } from './raw-results.js';
import { rowStats } from './rollup-codec.js';
import { addBins, interpolated, mergeM2, newSketch, type Stats } from './sketch.js';
import type { TableContext } from './table.js';

const HOUR = 3_600_000;
/** A range up to a day long is answered exactly from raw results wherever they are still kept. */
const EXACT_SPAN = 24 * HOUR;
/** Past this many separate runs of rolled-up hours (buckets that cut hours apart) the raw results are read instead. */
const MAX_RANGES = 200;
const PERCENTILES: Partial<Record<AggregateFunction, 'p50' | 'p90' | 'p95' | 'p99'>> = { median: 'p50', p50: 'p50', p90: 'p90', p95: 'p95', p99: 'p99' };
const FRACTION = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;

/** One field of one answer row: exact values from raw results, sums and a merged sketch from roll-ups. */
class FieldAcc {
  n = 0;
  sum = 0;
  m2 = 0;
  min = Infinity;
  max = -Infinity;
  readonly raw: number[] = [];
  sketch: DDSketch | null = null;
  sketchN = 0;
  /** Roll-ups made before sketches were kept: their count and stored percentiles. */
  readonly legacy: { n: number; p: Record<'p50' | 'p90' | 'p95' | 'p99', number> }[] = [];
  private folded = false;

  add(v: number): void {
    this.raw.push(v);
    this.stat(1, v, 0, v, v);
  }

  /** Adds a part: its count, sum, squared deviations from its own mean, minimum and maximum. */
  stat(n: number, sum: number, m2: number, min: number, max: number): void {
    this.m2 = mergeM2(this, { n, sum, m2 });
    this.n += n;
    this.sum += sum;
    this.min = Math.min(this.min, min);
    this.max = Math.max(this.max, max);
  }

  addStats(s: Stats): void {
    this.stat(s.n, s.sum, s.m2, s.min, s.max);
    addBins((this.sketch ??= newSketch()), s.bins);
    this.sketchN += s.n;
  }

  value(fn: AggregateFunction): number | null {
    if (fn === 'count') return this.n;
    if (this.n === 0) return null;
    if (this.sketch === null && this.legacy.length === 0) return aggregateValues(this.raw, fn);
    const p = PERCENTILES[fn];
    if (p !== undefined) return Math.min(this.max, Math.max(this.min, this.percentile(p)));
    switch (fn) {
      case 'avg': return this.sum / this.n;
      case 'sum': return this.sum;
      case 'min': return this.min;
      case 'max': return this.max;
      default: return this.n < 2 ? null : Math.sqrt(Math.max(0, this.m2) / (this.n - 1));
    }
  }

  private percentile(p: 'p50' | 'p90' | 'p95' | 'p99'): number {
    const q = FRACTION[p];
    if (this.legacy.length === 0) {
      // The raw values join the merged sketch once; every percentile then reads it.
      if (!this.folded) for (const v of this.raw) this.sketch!.accept(v);
      this.folded = true;
      return interpolated(this.sketch!, q);
    }
    // Roll-ups without a sketch: each part's percentile, weighted by its count.
    const parts = this.legacy.map((l) => ({ n: l.n, v: l.p[p] }));
    if (this.sketch && this.sketchN > 0) parts.push({ n: this.sketchN, v: interpolated(this.sketch, q) });
    if (this.raw.length > 0) parts.push({ n: this.raw.length, v: aggregateValues(this.raw, p)! });
    const n = parts.reduce((a, b) => a + b.n, 0);
    return parts.reduce((a, b) => a + b.v * b.n, 0) / n;
  }
}

interface RowAcc {
  checkId: string;
  bucket: number;
  group: string | null;
  count: number;
  failures: number;
  fromRollups: boolean;
  fields: Map<string, FieldAcc>;
}

/** Whether roll-ups can answer the query at all: they hold FINAL results by location, failures only counted. */
function eligible(query: ResultAggregateQuery): boolean {
  return !query.includeAttempts && query.groupBy !== 'statusCode' && (query.filterByStatus ?? []).length !== 1;
}

/**
 * The aggregate from hourly roll-ups for the whole hours that have them and raw results for the
 * rest (the hour under way, hours not rolled up yet, parts of hours at the range's ends or cut by
 * a bucket). Percentiles merge the roll-ups' sketches; averages, sums and availability their
 * sums and counts. Null when no roll-up takes part (the caller answers exactly from raw results):
 * a range up to a day long takes roll-ups only for hours whose raw results are gone.
 */
export async function aggregateWithRollups(ctx: TableContext, accountId: string, query: ResultAggregateQuery): Promise<ResultAggregateRow[] | null> {
  if (!eligible(query)) return null;
  const db = ctx.reader;
  const rollups = `${ctx.prefix}check_result_rollups`;
  const from = query.from.getTime();
  const to = query.to.getTime();
  const firstHour = Math.ceil(from / HOUR) * HOUR;
  const lastHour = Math.floor(to / HOUR) * HOUR;
  if (firstHour >= lastHour) return null;
  const [{ newest }] = (await db(rollups).where('account_id', accountId).whereIn('check_id', query.checkIds)
    .where('hour_ms', '>=', firstHour).where('hour_ms', '<', lastHour).max({ newest: 'hour_ms' })) as [{ newest: string | number | null }];
  if (newest === null) return null;
  let end = Number(newest) + HOUR;
  if (to - from <= EXACT_SPAN) {
    const [{ oldest }] = (await db.from(timesRelation(db, ctx, { accountId, checkIds: query.checkIds, from, to, finalOnly: true, time: 'due' }).as('u'))
      .min({ oldest: 't' })) as [{ oldest: string | number | null }];
    if (oldest !== null) end = Math.min(end, Math.floor(Number(oldest) / HOUR) * HOUR);
  }
  const bucketMs = query.bucketMs && query.bucketMs > 0 ? query.bucketMs : null;
  const bucketOf = (t: number) => (bucketMs === null ? from : from + Math.floor((t - from) / bucketMs) * bucketMs);
  // Whole hours up to `end` that lie inside one bucket, as runs of consecutive hours.
  const rolled: RawRange[] = [];
  for (let h = firstHour; h < end; h += HOUR) {
    if (bucketOf(h) !== bucketOf(h + HOUR - 1)) continue;
    const last = rolled.at(-1);
    if (last && last.to === h) last.to = h + HOUR;
    else rolled.push({ from: h, to: h + HOUR });
  }
  if (rolled.length === 0 || rolled.length > MAX_RANGES) return null;
  const raw: RawRange[] = [];
  let at = from;
  for (const r of rolled) {
    if (r.from! > at) raw.push({ from: at, to: r.from! });
    at = r.to;
  }
  if (at < to) raw.push({ from: at, to });
  const [rollupRows, rawRows] = await Promise.all([
    readRollups(db, rollups, accountId, query, rolled),
    readRawResults(db, ctx, accountId, raw, query.checkIds),
  ]);
  return answer(query, bucketOf, rollupRows, rawRows);
}

/** The roll-ups of the rolled-up hours (their stats are decoded by `answer`). */
async function readRollups(db: Knex, table: string, accountId: string, query: ResultAggregateQuery, ranges: RawRange[]): Promise<Record<string, unknown>[]> {
  const rows = (await db(table)
    .select('check_id', 'hour_ms', 'run_location', 'count', 'failures', 'stats', 'sketches', 'sum', 'sum_sq', 'min', 'max', 'p50', 'p90', 'p95', 'p99')
    .where('account_id', accountId).whereIn('check_id', query.checkIds)
    .where('hour_ms', '>=', ranges[0]!.from!).where('hour_ms', '<', ranges.at(-1)!.to)) as Record<string, unknown>[];
  const inRange = (h: number) => ranges.some((r) => h >= r.from! && h < r.to);
  return ranges.length === 1 ? rows : rows.filter((r) => inRange(Number(r.hour_ms)));
}

function answer(query: ResultAggregateQuery, bucketOf: (t: number) => number, rollupRows: Record<string, unknown>[], rawRows: RawResult[]): ResultAggregateRow[] {
  const fields = new Set(query.measures.map((m) => m.field));
  const rows = new Map<string, RowAcc>();
  const rowOf = (checkId: string, t: number, location: string) => {
    const bucket = bucketOf(t);
    const group = query.groupBy === 'runLocation' ? location : null;
    const key = JSON.stringify([checkId, bucket, group]);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { checkId, bucket, group, count: 0, failures: 0, fromRollups: false, fields: new Map([...fields].map((f) => [f, new FieldAcc()])) }));
    return row;
  };
  for (const r of rawRows) {
    const row = rowOf(r.checkId, r.startedMs, r.runLocation);
    row.count++;
    if (r.failed) row.failures++;
    for (const [f, acc] of row.fields) if (r.values[f] !== undefined) acc.add(r.values[f]!);
  }
  for (const r of rollupRows) {
    const row = rowOf(String(r.check_id), Number(r.hour_ms), String(r.run_location));
    const count = Number(r.count);
    row.count += count;
    row.failures += Number(r.failures);
    row.fromRollups = true;
    const stats = rowStats(r);
    for (const [f, acc] of row.fields) {
      if (stats) {
        // A roll-up leaves `total` out where it is the response time.
        const s = stats[f] ?? (f === 'total' ? stats.responseTime : undefined);
        if (s) acc.addStats(s);
      } else if (f === 'responseTime') {
        // A roll-up made before sketches were kept: its sums and stored percentiles.
        acc.stat(count, Number(r.sum), Number(r.sum_sq) - (Number(r.sum) * Number(r.sum)) / count, Number(r.min), Number(r.max));
        acc.legacy.push({ n: count, p: { p50: Number(r.p50), p90: Number(r.p90), p95: Number(r.p95), p99: Number(r.p99) } });
      } else if (f === 'attempts') {
        // It kept no attempts: each of its runs counts as one.
        acc.stat(count, count, 0, 1, 1);
        acc.legacy.push({ n: count, p: { p50: 1, p90: 1, p95: 1, p99: 1 } });
      }
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...rows.values()]
    .sort((a, b) => cmp(a.checkId, b.checkId) || a.bucket - b.bucket || cmp(a.group ?? '', b.group ?? ''))
    .map((row) => ({
      checkId: row.checkId,
      bucketStart: new Date(row.bucket).toISOString(),
      group: row.group,
      count: row.count,
      failures: row.failures,
      values: Object.fromEntries(query.measures.map((m) => [m.name, row.fields.get(m.field)!.value(m.fn)])),
      ...(row.fromRollups ? { approximate: true } : {}),
    }));
}
