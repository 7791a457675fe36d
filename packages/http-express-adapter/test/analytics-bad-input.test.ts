/**
 * The analytics routes answer bad query input with the spec's 400 naming the field, never a 5xx,
 * and odd but valid input with 200 (on the stored results of analytics-verified.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';
import type { Kind } from './support/analytics-results.js';
import { analyticsUnderTest } from './support/analytics-reference.js';
import { expect400 } from './support/expect.js';

afterAll(dropPostgresSchema);

describe.each(BACKENDS)('analytics numbers on %s match a reference computed from the same results', (backend) => {
  let h: ApiHarness;
  const { path } = analyticsUnderTest(backend, (x) => (h = x));

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
