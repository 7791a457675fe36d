import { metricMetadata, resolveTimeWindow, ApiAnalyticsQuerySchema, DnsAnalyticsQuerySchema, IcmpAnalyticsQuerySchema, MultiStepAnalyticsQuerySchema, PlaywrightAnalyticsQuerySchema, TcpAnalyticsQuerySchema, type AnalyticsResponse } from '../model/analytics.js';
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

/**
 * GET /v1/analytics/{api,tcp,dns,url,icmp,multistep,playwright}-checks/{id}: the requested metrics per aggregationInterval bucket
 * (or the whole window), computed by the store over the check's results.
 */
export class AnalyticsService {
  constructor(private readonly deps: ServiceDeps) {}

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
