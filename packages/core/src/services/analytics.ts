import { metricMetadata, resolveTimeWindow, ApiAnalyticsQuerySchema, DnsAnalyticsQuerySchema, IcmpAnalyticsQuerySchema, MultiStepAnalyticsQuerySchema, PlaywrightAnalyticsQuerySchema, TcpAnalyticsQuerySchema, type AnalyticsResponse } from '../model/analytics.js';
import { ValidationError } from '../errors.js';
import { parse } from '../model/parse.js';
import type { AggregateFunction, AggregateMeasure } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';
import { found, stringId } from './support.js';

/** The phase a metric base reads: TCP total is the run's response time. */
const FIELD: Record<string, string> = { total: 'responseTime', responseTime: 'responseTime' };

/** The check type and the query schema of each analytics route. */
const KINDS = {
  api: { checkType: 'API', query: ApiAnalyticsQuerySchema },
  tcp: { checkType: 'TCP', query: TcpAnalyticsQuerySchema },
  dns: { checkType: 'DNS', query: DnsAnalyticsQuerySchema },
  // A URL check's run is an HTTP request: the API checks' metrics.
  url: { checkType: 'URL', query: ApiAnalyticsQuerySchema },
  // An ICMP run's phases are its latency statistics and packet loss, by the metrics' own names.
  icmp: { checkType: 'ICMP', query: IcmpAnalyticsQuerySchema },
  // A multi-step run's phases are its total and each step's time by position (step1, step2, …).
  multistep: { checkType: 'MULTI_STEP', query: MultiStepAnalyticsQuerySchema },
  playwright: { checkType: 'PLAYWRIGHT', query: PlaywrightAnalyticsQuerySchema },
} as const;

const PERCENTILE_FNS = new Set<string>(['median', 'p50', 'p90', 'p95', 'p99']);

function measureOf(metric: string): AggregateMeasure | null {
  if (metric === 'availability') return null;
  if (metric === 'retries') return { name: metric, field: 'attempts', fn: 'sum' };
  const [base = metric, suffix] = metric.split('_');
  const fn = (suffix ?? 'avg') as AggregateFunction;
  return { name: metric, field: FIELD[base] ?? base, fn };
}

/** What {@link AnalyticsService.responseTimes} reads: a window, its buckets, and whether per location. */
export interface ResponseTimeQuery {
  from: Date;
  to: Date;
  /** Bucket width in milliseconds; null: the whole window as one bucket. */
  bucketMs: number | null;
  /** One point per bucket and run location instead of one per bucket. */
  byLocation?: boolean;
}

/** One bucket (of one location, under `byLocation`) of a check's FINAL runs. */
export interface ResponseTimePoint {
  startedAt: string;
  runLocation: string | null;
  runs: number;
  failures: number;
  /** Percent of the runs that passed; null without runs. */
  availability: number | null;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface ResponseTimeSeries {
  checkId: string;
  checkType: string;
  from: string;
  to: string;
  bucketMs: number | null;
  /** Some percentiles were read from hourly roll-ups' sketches (estimates). */
  approximate: boolean;
  /** Oldest first; buckets without runs give no point. */
  points: ResponseTimePoint[];
}

/** Most buckets one read may ask for (a month in 5-minute buckets is 8,640). */
const MAX_BUCKETS = 10_000;

const RESPONSE_TIME_MEASURES: AggregateMeasure[] = (['p50', 'p95', 'p99'] as const).map((fn) => ({ name: fn, field: 'responseTime', fn }));

/**
 * GET /v1/analytics/{api,tcp,dns,url,icmp,multistep,playwright}-checks/{id}: the requested metrics per aggregationInterval bucket
 * (or the whole window), computed by the store over the check's results.
 */
export class AnalyticsService {
  constructor(private readonly deps: ServiceDeps) {}

  /**
   * Response time (p50, p95, p99) and availability of a check of any type, per bucket of a window
   * and optionally per run location: what the typed queries give, for types they do not cover
   * (BROWSER, HEARTBEAT, a plugin's own). 404 for a check that is not the account's.
   */
  async responseTimes(accountId: string, rawCheckId: unknown, query: ResponseTimeQuery): Promise<ResponseTimeSeries> {
    const check = found(await this.deps.storage.checks.get(accountId, stringId(rawCheckId, 'checkId')), 'Check');
    const { from, to, bucketMs } = query;
    const span = to.getTime() - from.getTime();
    if (!(span > 0)) throw new ValidationError([{ path: 'to', message: 'must be after from' }], 'query');
    if (bucketMs !== null && !(Number.isInteger(bucketMs) && bucketMs > 0 && span / bucketMs <= MAX_BUCKETS)) {
      throw new ValidationError([{ path: 'bucketMs', message: `must be a positive whole number of milliseconds, at most ${MAX_BUCKETS} buckets in the window` }], 'query');
    }
    const rows = await this.deps.storage.checkResults.aggregate(accountId, {
      checkIds: [check.id],
      from,
      to,
      bucketMs,
      groupBy: query.byLocation ? 'runLocation' : null,
      measures: RESPONSE_TIME_MEASURES,
    });
    const points = rows.map((r): ResponseTimePoint => ({
      startedAt: r.bucketStart,
      runLocation: query.byLocation ? r.group : null,
      runs: r.count,
      failures: r.failures,
      availability: r.count > 0 ? ((r.count - r.failures) / r.count) * 100 : null,
      p50: r.values.p50 ?? null,
      p95: r.values.p95 ?? null,
      p99: r.values.p99 ?? null,
    }));
    points.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || (a.runLocation ?? '').localeCompare(b.runLocation ?? ''));
    return {
      checkId: check.id,
      checkType: check.checkType,
      from: from.toISOString(),
      to: to.toISOString(),
      bucketMs,
      approximate: rows.some((r) => r.approximate === true),
      points,
    };
  }

  async query(accountId: string, kind: keyof typeof KINDS, rawCheckId: unknown, rawQuery: unknown): Promise<AnalyticsResponse> {
    const check = found(await this.deps.storage.checks.get(accountId, stringId(rawCheckId)), 'Check');
    if (check.checkType !== KINDS[kind].checkType) found(null, 'Check');
    const q = parse(KINDS[kind].query, rawQuery ?? {}, 'query');
    const { from, to } = resolveTimeWindow(q, this.deps.clock.now());
    const measures = q.metrics.flatMap((m) => measureOf(m) ?? []);
    // retries counts retries, not attempts: attempts - 1 per run.
    const rows = await this.deps.storage.checkResults.aggregate(accountId, {
      checkIds: [check.id],
      from,
      to,
      bucketMs: q.aggregationInterval ? q.aggregationInterval * 60_000 : null,
      groupBy: (q.groupBy ?? null) as 'runLocation' | 'statusCode' | null,
      ...(q.filterByStatus ? { filterByStatus: q.filterByStatus } : {}),
      measures,
    });
    const series = rows.map((r) => {
      const point: Record<string, string | number | null> = { startedAt: r.bucketStart };
      if (q.groupBy) point[q.groupBy] = r.group;
      for (const metric of q.metrics) {
        if (metric === 'availability') point[metric] = r.count > 0 ? ((r.count - r.failures) / r.count) * 100 : null;
        else if (metric === 'retries') point[metric] = (r.values.retries ?? 0) - r.count;
        else point[metric] = r.values[metric] ?? null;
      }
      return point;
    });
    series.sort((a, b) => String(a.startedAt).localeCompare(String(b.startedAt)));
    const start = (q.page - 1) * q.limit;
    // A percentile is exact unless some of its results were read from roll-ups' sketches.
    const approximate = rows.some((r) => r.approximate);
    const metadataOf = (m: string) => (approximate && PERCENTILE_FNS.has(measureOf(m)?.fn ?? '') ? { ...metricMetadata(m), approximate } : metricMetadata(m));
    return {
      checkId: check.id,
      name: check.name,
      checkType: check.checkType,
      activated: check.activated,
      muted: check.muted,
      frequency: check.frequency,
      from: from.toISOString(),
      to: to.toISOString(),
      tags: check.tags,
      series: series.slice(start, start + q.limit),
      pagination: { page: q.page, limit: q.limit },
      metadata: Object.fromEntries(q.metrics.map((m) => [m, metadataOf(m)])),
    };
  }
}
