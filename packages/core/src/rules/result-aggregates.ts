import type { CheckResult } from '../model/check-result.js';
import type { AggregateFunction, AggregateMeasure, ResultAggregateQuery, ResultAggregateRow } from '../model/result-aggregate.js';

const time = (iso: string) => Date.parse(iso);

/** PostgreSQL's percentile_cont: linear interpolation between the two nearest ranks. */
export function percentileCont(sorted: readonly number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  const pos = fraction * (sorted.length - 1);
  const lower = Math.floor(pos);
  const upper = Math.ceil(pos);
  const lo = sorted[lower]!;
  return lo + (sorted[upper]! - lo) * (pos - lower);
}

/** stddev_samp: null below two values. */
export function sampleStddev(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const squares = values.reduce((a, b) => a + (b - mean) ** 2, 0);
  return Math.sqrt(squares / (values.length - 1));
}

const PERCENTILES: Partial<Record<AggregateFunction, number>> = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

/** One aggregate over the values of a bucket, as SQL computes it (null over no values, but count 0). */
export function aggregateValues(values: readonly number[], fn: AggregateFunction): number | null {
  if (fn === 'count') return values.length;
  if (values.length === 0) return null;
  const fraction = PERCENTILES[fn];
  if (fraction !== undefined) return percentileCont([...values].sort((a, b) => a - b), fraction);
  switch (fn) {
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    default:
      return sampleStddev(values);
  }
}

function fieldValue(result: CheckResult, field: string): number | undefined {
  if (field === 'responseTime') return result.responseTime;
  if (field === 'attempts') return result.attempts;
  return result.phases[field];
}

const isFailure = (r: CheckResult) => r.hasFailures || r.hasErrors;

function groupOf(result: CheckResult, groupBy: ResultAggregateQuery['groupBy']): string | null {
  if (groupBy === 'runLocation') return result.runLocation;
  if (groupBy === 'statusCode') return result.statusCode === null ? null : String(result.statusCode);
  return null;
}

function measureRow(rows: CheckResult[], measures: AggregateMeasure[]): Record<string, number | null> {
  const values: Record<string, number | null> = {};
  for (const m of measures) {
    const numbers = rows.map((r) => fieldValue(r, m.field)).filter((n): n is number => typeof n === 'number');
    values[m.name] = aggregateValues(numbers, m.fn);
  }
  return values;
}

/**
 * The aggregate of check results, computed over rows already scoped to the account, exactly as the
 * SQL of a store with native percentiles answers it (percentile_cont, stddev_samp).
 */
export function aggregateResults(results: readonly CheckResult[], query: ResultAggregateQuery): ResultAggregateRow[] {
  const from = query.from.getTime();
  const to = query.to.getTime();
  const bucketMs = query.bucketMs && query.bucketMs > 0 ? query.bucketMs : null;
  const checkIds = new Set(query.checkIds);
  const statuses = query.filterByStatus ?? [];
  const buckets = new Map<string, { checkId: string; start: number; group: string | null; rows: CheckResult[] }>();
  for (const r of results) {
    const at = time(r.startedAt);
    if (!checkIds.has(r.checkId) || at < from || at >= to) continue;
    if (!query.includeAttempts && r.resultType !== 'FINAL') continue;
    if (statuses.length > 0 && !statuses.includes(isFailure(r) ? 'failure' : 'success')) continue;
    const start = bucketMs === null ? from : from + Math.floor((at - from) / bucketMs) * bucketMs;
    const group = groupOf(r, query.groupBy);
    const key = JSON.stringify([r.checkId, start, group]);
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = { checkId: r.checkId, start, group, rows: [] }));
    bucket.rows.push(r);
  }
  return [...buckets.values()]
    .sort((a, b) => compare(a.checkId, b.checkId) || a.start - b.start || compare(a.group ?? '', b.group ?? ''))
    .map((b) => ({
      checkId: b.checkId,
      bucketStart: new Date(b.start).toISOString(),
      group: b.group,
      count: b.rows.length,
      failures: b.rows.filter(isFailure).length,
      values: measureRow(b.rows, query.measures),
    }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

