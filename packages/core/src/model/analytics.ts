import * as v from 'valibot';
import { CheckTypeSchema, queryInteger } from './primitives.js';
import { oneOf } from './shared.js';
import { queryList, WindowBoundSchema } from './time-window.js';

export { resolveTimeWindow } from './time-window.js';

export const METRIC_SUFFIXES = ['_avg', '_max', '_median', '_min', '_p50', '_p90', '_p95', '_p99', '_stddev', '_sum'] as const;
export const API_METRIC_BASES = ['responseTime', 'wait', 'dns', 'tcp', 'firstByte', 'download'] as const;
export const TCP_METRIC_BASES = ['total', 'dns', 'connection', 'data'] as const;
/** A DNS check's one phase is its response time. */
export const DNS_METRIC_BASES = ['responseTime'] as const;
/** An ICMP check's run: its replies' round-trip statistics and its packet loss in percent. */
export const ICMP_METRIC_BASES = ['latencyAvg', 'latencyMin', 'latencyMax', 'latencyStdDev', 'packetLoss'] as const;
/** The most steps of a multi-step check whose times analytics reads (`step1` … `step20`). */
export const MAX_ANALYTICS_STEPS = 20;
/** A multi-step check's run: its total time (the sum of its steps) and each step's, by position. */
export const MULTI_STEP_METRIC_BASES = ['responseTime', ...Array.from({ length: MAX_ANALYTICS_STEPS }, (_, i) => `step${i + 1}`)] as readonly string[];
// TCP checks have the same two plain metrics.
export const API_PLAIN_METRICS = ['availability', 'retries'] as const;
export const API_METRICS = [
  ...API_METRIC_BASES,
  ...API_PLAIN_METRICS,
  ...API_METRIC_BASES.flatMap((b) => METRIC_SUFFIXES.map((s) => `${b}${s}`)),
] as readonly string[];
export const TCP_METRICS = [
  ...TCP_METRIC_BASES,
  ...API_PLAIN_METRICS,
  ...TCP_METRIC_BASES.flatMap((b) => METRIC_SUFFIXES.map((s) => `${b}${s}`)),
] as readonly string[];

export const DNS_METRICS = [
  ...DNS_METRIC_BASES,
  ...API_PLAIN_METRICS,
  ...DNS_METRIC_BASES.flatMap((b) => METRIC_SUFFIXES.map((s) => `${b}${s}`)),
] as readonly string[];

export const ICMP_METRICS = [
  ...ICMP_METRIC_BASES,
  ...API_PLAIN_METRICS,
  ...ICMP_METRIC_BASES.flatMap((b) => METRIC_SUFFIXES.map((s) => `${b}${s}`)),
] as readonly string[];

export const MULTI_STEP_METRICS = [
  ...MULTI_STEP_METRIC_BASES,
  ...API_PLAIN_METRICS,
  ...MULTI_STEP_METRIC_BASES.flatMap((b) => METRIC_SUFFIXES.map((s) => `${b}${s}`)),
] as readonly string[];

export const QUICK_RANGES = ['last24Hours', 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as const;

function analyticsQuery(metrics: readonly string[], groupBy: readonly string[]) {
  const known = new Set(metrics);
  return v.object({
    from: v.optional(WindowBoundSchema),
    to: v.optional(WindowBoundSchema),
    quickRange: v.optional(oneOf(QUICK_RANGES), 'last24Hours'),
    // No default: absent means one bucket over the whole window.
    aggregationInterval: v.optional(queryInteger(1, 43200, 1).wrapped),
    filterByStatus: v.optional(queryList(oneOf(['success', 'failure'] as const))),
    groupBy: v.optional(oneOf(groupBy)),
    // One issue on `metrics` that names every unknown entry, rather than one per index.
    metrics: v.pipe(
      queryList(v.string()),
      v.minLength(1, 'must name at least one metric'),
      v.check(
        (list) => list.every((m) => known.has(m)),
        (issue) => `has metrics unknown for this check type: ${(issue.input as string[]).filter((m) => !known.has(m)).join(', ')}`,
      ),
    ),
    limit: queryInteger(1, 100, 10),
    page: queryInteger(1, Number.MAX_SAFE_INTEGER, 1),
  });
}

export const ApiAnalyticsQuerySchema = analyticsQuery(API_METRICS, ['runLocation', 'statusCode']);
export const TcpAnalyticsQuerySchema = analyticsQuery(TCP_METRICS, ['runLocation']);
export const DnsAnalyticsQuerySchema = analyticsQuery(DNS_METRICS, ['runLocation']);
export const IcmpAnalyticsQuerySchema = analyticsQuery(ICMP_METRICS, ['runLocation']);
export const MultiStepAnalyticsQuerySchema = analyticsQuery(MULTI_STEP_METRICS, ['runLocation']);
/** A Playwright suite's one figure is its duration (`responseTime`), as a DNS check's is its answer's time. */
export const PlaywrightAnalyticsQuerySchema = analyticsQuery(DNS_METRICS, ['runLocation']);
export type AnalyticsQuery = v.InferOutput<typeof TcpAnalyticsQuerySchema>;

export type MetricUnit = 'milliseconds' | 'percent' | 'count';

const LABELS: Record<string, string> = {
  responseTime: 'Response time', wait: 'Wait', dns: 'DNS', tcp: 'TCP connect', firstByte: 'First byte',
  download: 'Download', total: 'Total', connection: 'Connection', data: 'Data',
  availability: 'Availability', retries: 'Retries',
  latencyAvg: 'Latency', latencyMin: 'Latency (fastest reply)', latencyMax: 'Latency (slowest reply)',
  latencyStdDev: 'Latency spread (standard deviation)', packetLoss: 'Packet loss',
};
const SUFFIX_LABELS: Record<string, string> = {
  avg: 'average', max: 'maximum', median: 'median', min: 'minimum', p50: 'p50', p90: 'p90', p95: 'p95',
  p99: 'p99', stddev: 'standard deviation', sum: 'sum',
};

/** A metric's label and unit, for the analytics response's metadata. */
export function metricMetadata(metric: string): { label: string; unit: MetricUnit } {
  const [base = metric, suffix] = metric.split('_');
  if (base === 'availability') return { label: LABELS.availability!, unit: 'percent' };
  if (base === 'retries') return { label: LABELS.retries!, unit: 'count' };
  const label = LABELS[base] ?? (/^step\d+$/.test(base) ? `Step ${base.slice(4)}` : base);
  return { label: suffix ? `${label} (${SUFFIX_LABELS[suffix] ?? suffix})` : `${label} (average)`, unit: base === 'packetLoss' ? 'percent' : 'milliseconds' };
}

export const AnalyticsResponseSchema = v.object({
  checkId: v.string(),
  name: v.string(),
  checkType: CheckTypeSchema,
  activated: v.boolean(),
  muted: v.boolean(),
  frequency: v.number(),
  from: v.string(),
  to: v.string(),
  tags: v.array(v.string()),
  series: v.array(v.record(v.string(), v.union([v.string(), v.number(), v.null()]))),
  pagination: v.object({ page: v.number(), limit: v.number() }),
  // `approximate: true` on a percentile metric some of whose hours were read from roll-ups' sketches.
  metadata: v.record(v.string(), v.object({ label: v.string(), unit: v.string(), approximate: v.optional(v.boolean()) })),
});
export type AnalyticsResponse = v.InferOutput<typeof AnalyticsResponseSchema>;
