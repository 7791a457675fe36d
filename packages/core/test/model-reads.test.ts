import { describe, expect, it } from 'vitest';
import { API_METRICS, API_PLAIN_METRICS, ApiAnalyticsQuerySchema, metricMetadata, QUICK_RANGES, resolveTimeWindow, TCP_METRICS, TcpAnalyticsQuerySchema } from '../src/model/analytics.js';
import { HeartbeatAvailabilityQuerySchema } from '../src/model/heartbeat-availability.js';
import { parse } from '../src/model/parse.js';
import { ReportingQuerySchema } from '../src/model/reporting.js';
import { quickRangeWindow } from '../src/model/time-window.js';
import { issuesOf, keysOf } from './assertions.js';


describe('analytics queries', () => {
  it('lists every metric with every suffix', () => {
    expect(TCP_METRICS).toHaveLength(4 + 2 + 40);
    expect(API_METRICS).toHaveLength(6 + 2 + 60);
    expect(TCP_METRICS).toContain('connection_p99');
    expect(API_METRICS).toContain('responseTime_stddev');
  });

  it('metrics are required, comma-separated or repeated, and of the check type', () => {
    expect(keysOf(() => parse(TcpAnalyticsQuerySchema, {}))).toEqual(['metrics']);
    expect(parse(TcpAnalyticsQuerySchema, { metrics: 'total_p95,availability' }).metrics).toEqual(['total_p95', 'availability']);
    expect(parse(TcpAnalyticsQuerySchema, { metrics: ['total', 'dns_max'] }).metrics).toEqual(['total', 'dns_max']);
    expect(keysOf(() => parse(TcpAnalyticsQuerySchema, { metrics: 'total,responseTime' }))).toEqual(['metrics']);
    expect(keysOf(() => parse(ApiAnalyticsQuerySchema, { metrics: 'total' }))).toEqual(['metrics']);
    expect(issuesOf(ApiAnalyticsQuerySchema, { metrics: 'dns,total,bogus_p95' })).toEqual([
      { path: 'metrics', message: 'has metrics unknown for this check type: total, bogus_p95' },
    ]);
    expect(parse(ApiAnalyticsQuerySchema, { metrics: [...API_PLAIN_METRICS, 'responseTime_p99'] }).metrics).toHaveLength(3);
    expect(keysOf(() => parse(TcpAnalyticsQuerySchema, { metrics: '' }))).toEqual(['metrics']);
  });

  it.each([
    [{ aggregationInterval: '0' }, ['aggregationInterval']], [{ aggregationInterval: '1' }, []], [{ aggregationInterval: '43200' }, []],
    [{ aggregationInterval: '43201' }, ['aggregationInterval']], [{ limit: '0' }, ['limit']], [{ limit: '1' }, []], [{ limit: '100' }, []],
    [{ limit: '101' }, ['limit']], [{ page: '0' }, ['page']], [{ quickRange: 'last24Hrs' }, ['quickRange']], [{ groupBy: 'statusCode' }, ['groupBy']],
    [{ filterByStatus: 'success,failure' }, []], [{ filterByStatus: 'maybe' }, ['filterByStatus.0']], [{ from: 'yesterday' }, ['from']],
    [{ aggregationInterval: '1.5' }, ['aggregationInterval']], [{ quickRange: 'lastYear' }, ['quickRange']], [{ groupBy: 'runLocation' }, []],
    [{ to: '-5' }, ['to']], [{ from: '2026-13-01' }, ['from']],
  ])('TCP %j names %j', (change, keys) => {
    expect(keysOf(() => parse(TcpAnalyticsQuerySchema, { metrics: 'total', ...change }))).toEqual(keys);
  });

  it('API groupBy is runLocation or statusCode', () => {
    expect(keysOf(() => parse(ApiAnalyticsQuerySchema, { metrics: 'dns', groupBy: 'region' }))).toEqual(['groupBy']);
    expect(parse(ApiAnalyticsQuerySchema, { metrics: 'dns', groupBy: 'runLocation' }).groupBy).toBe('runLocation');
  });

  it('defaults; unknown parameters dropped; from/to take ISO dates or unix seconds', () => {
    expect(parse(TcpAnalyticsQuerySchema, { metrics: 'total', sort: 'desc' })).toEqual({
      quickRange: 'last24Hours', metrics: ['total'], limit: 10, page: 1,
    });
    expect(parse(TcpAnalyticsQuerySchema, { metrics: 'total', aggregationInterval: '60' }).aggregationInterval).toBe(60);
    expect(parse(TcpAnalyticsQuerySchema, { metrics: 'total', filterByStatus: ['failure'] }).filterByStatus).toEqual(['failure']);
    expect(parse(TcpAnalyticsQuerySchema, { metrics: 'total', from: '2026-05-01T12:30:00+02:00' }).from).toBe('2026-05-01T10:30:00.000Z');
    expect(parse(ApiAnalyticsQuerySchema, { metrics: 'dns', groupBy: 'statusCode' }).groupBy).toBe('statusCode');
    const q = parse(TcpAnalyticsQuerySchema, { metrics: 'total', from: '1777636800', to: '2026-05-02' });
    expect(q.from).toBe('2026-05-01T12:00:00.000Z');
    expect(q.to).toBe('2026-05-02T00:00:00.000Z');
    expect(parse(TcpAnalyticsQuerySchema, { metrics: 'total', from: 1777636800 }).from).toBe('2026-05-01T12:00:00.000Z');
  });

  it('metadata gives each metric a label and a unit', () => {
    expect(metricMetadata('total_p95')).toEqual({ label: 'Total (p95)', unit: 'milliseconds' });
    expect(metricMetadata('dns')).toEqual({ label: 'DNS (average)', unit: 'milliseconds' });
    expect(metricMetadata('availability').unit).toBe('percent');
    expect(metricMetadata('retries').unit).toBe('count');
  });
});

describe('time windows', () => {
  // Sunday 3 May 2026, 15:30 UTC.
  const now = new Date('2026-05-03T15:30:00Z');
  const w = (range: string) => {
    const { from, to } = quickRangeWindow(range, now);
    return [from.toISOString(), to.toISOString()];
  };

  it('every quick range (weeks start on Monday)', () => {
    expect(w('last24Hours')).toEqual(['2026-05-02T15:30:00.000Z', '2026-05-03T15:30:00.000Z']);
    expect(w('last24Hrs')).toEqual(['2026-05-02T15:30:00.000Z', '2026-05-03T15:30:00.000Z']);
    expect(w('last7Days')).toEqual(['2026-04-26T15:30:00.000Z', '2026-05-03T15:30:00.000Z']);
    expect(w('last30Days')).toEqual(['2026-04-03T15:30:00.000Z', '2026-05-03T15:30:00.000Z']);
    expect(w('thisWeek')).toEqual(['2026-04-27T00:00:00.000Z', '2026-05-03T15:30:00.000Z']);
    expect(w('lastWeek')).toEqual(['2026-04-20T00:00:00.000Z', '2026-04-27T00:00:00.000Z']);
    expect(w('thisMonth')).toEqual(['2026-05-01T00:00:00.000Z', '2026-05-03T15:30:00.000Z']);
    expect(w('lastMonth')).toEqual(['2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z']);
    const jan = quickRangeWindow('lastMonth', new Date('2026-01-01T00:00:00Z'));
    expect(jan.from.toISOString()).toBe('2025-12-01T00:00:00.000Z');
  });

  it('resolveTimeWindow for every quick range at a month start (Monday 1 June 2026, 00:00 UTC)', () => {
    const monthStart = new Date('2026-06-01T00:00:00Z');
    const got = Object.fromEntries(
      QUICK_RANGES.map((range) => {
        const { from, to } = resolveTimeWindow({ quickRange: range }, monthStart);
        return [range, [from.toISOString(), to.toISOString()]];
      }),
    );
    const start = '2026-06-01T00:00:00.000Z';
    expect(got).toEqual({
      last24Hours: ['2026-05-31T00:00:00.000Z', start],
      last7Days: ['2026-05-25T00:00:00.000Z', start],
      last30Days: ['2026-05-02T00:00:00.000Z', start],
      thisWeek: [start, start],
      thisMonth: [start, start],
      lastWeek: ['2026-05-25T00:00:00.000Z', start],
      lastMonth: ['2026-05-01T00:00:00.000Z', start],
    });
  });

  it('resolveTimeWindow on a Sunday: thisWeek started the Monday before', () => {
    const sunday = new Date('2026-05-03T23:59:59Z');
    expect(resolveTimeWindow({ quickRange: 'thisWeek' }, sunday).from.toISOString()).toBe('2026-04-27T00:00:00.000Z');
    expect(resolveTimeWindow({ quickRange: 'lastWeek' }, sunday).to.toISOString()).toBe('2026-04-27T00:00:00.000Z');
  });

  it('a parsed query resolves with unix-second from/to', () => {
    const q = parse(TcpAnalyticsQuerySchema, { metrics: 'total', quickRange: 'lastMonth', from: '1777593600', to: '1777680000' });
    const { from, to } = resolveTimeWindow(q, now);
    expect([from.toISOString(), to.toISOString()]).toEqual(['2026-05-01T00:00:00.000Z', '2026-05-02T00:00:00.000Z']);
  });

  it('from/to override the quick range; to before from is refused', () => {
    expect(resolveTimeWindow({ quickRange: 'last7Days', from: '2026-05-01T00:00:00.000Z' }, now).to).toEqual(now);
    expect(resolveTimeWindow({ quickRange: 'last7Days', to: '2026-05-01T00:00:00.000Z' }, now).from.toISOString()).toBe('2026-04-26T15:30:00.000Z');
    expect(keysOf(() => resolveTimeWindow({ quickRange: 'last24Hours', from: '2026-05-02T00:00:00.000Z', to: '2026-05-01T00:00:00.000Z' }, now))).toEqual(['to']);
  });
});

describe('reporting and heartbeat availability queries', () => {
  it('reporting: last24Hrs by default (the spec\'s spelling), tags as a list, deactivated as a boolean', () => {
    expect(parse(ReportingQuerySchema, {})).toEqual({ quickRange: 'last24Hrs' });
    expect(parse(ReportingQuerySchema, { filterByTags: 'a,b', deactivated: 'true' })).toEqual({ quickRange: 'last24Hrs', filterByTags: ['a', 'b'], deactivated: true });
    expect(parse(ReportingQuerySchema, { filterByTags: ['a', 'c'] }).filterByTags).toEqual(['a', 'c']);
    expect(keysOf(() => parse(ReportingQuerySchema, { quickRange: 'last24Hours' }))).toEqual(['quickRange']);
    expect(keysOf(() => parse(ReportingQuerySchema, { deactivated: 'yes' }))).toEqual(['deactivated']);
    expect(parse(ReportingQuerySchema, { deactivated: 'false', from: '1777636800', extra: 1 })).toEqual({
      quickRange: 'last24Hrs', deactivated: false, from: '2026-05-01T12:00:00.000Z',
    });
    for (const quickRange of ['last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth']) {
      expect(parse(ReportingQuerySchema, { quickRange }).quickRange).toBe(quickRange);
    }
  });

  it('heartbeat availability: endTime after startTime', () => {
    expect(parse(HeartbeatAvailabilityQuerySchema, {})).toEqual({});
    expect(keysOf(() => parse(HeartbeatAvailabilityQuerySchema, { startTime: '2026-05-02', endTime: '2026-05-01' }))).toEqual(['endTime']);
    expect(keysOf(() => parse(HeartbeatAvailabilityQuerySchema, { startTime: '2026-05-02', endTime: '2026-05-02' }))).toEqual(['endTime']);
    expect(parse(HeartbeatAvailabilityQuerySchema, { startTime: '2026-05-01', endTime: '2026-05-02T00:00:00Z' })).toEqual({
      startTime: '2026-05-01T00:00:00.000Z', endTime: '2026-05-02T00:00:00.000Z',
    });
    expect(parse(HeartbeatAvailabilityQuerySchema, { endTime: '2026-05-02' })).toEqual({ endTime: '2026-05-02T00:00:00.000Z' });
    expect(keysOf(() => parse(HeartbeatAvailabilityQuerySchema, { startTime: 'soon' }))).toEqual(['startTime']);
  });
});
