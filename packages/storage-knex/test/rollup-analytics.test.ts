import { createVigil } from '@vigil/core';
import { checkResultFixture, FakeClock, tcpCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { freshStore, STORES } from './support/fresh-store.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const NOW = Date.UTC(2026, 4, 31, 12, 25);

describe.each(STORES)('analytics over hourly roll-ups on %s', (kind) => {
  it('marks percentile metrics approximate when roll-ups answered them, and a day whose raw results are kept exact', async () => {
    const storage = await freshStore(kind, 'vigil_rollan');
    const vigil = createVigil({ storage, secretKey: 'c'.repeat(64), clock: new FakeClock(NOW) });
    try {
      const accountId = (await vigil.accounts.ensure()).id;
      const check = await storage.checks.insert(accountId, tcpCheckFixture({ name: 'db' }));
      // Three days, one run every 5 minutes.
      await storage.checkResults.insertMany(accountId, Array.from({ length: 3 * 24 * 12 }, (_, i) => checkResultFixture(check.id, {
        startedAt: new Date(NOW - 3 * 24 * HOUR + i * 5 * MIN).toISOString(), responseTime: 50 + (i % 17) * 7, phases: { total: 50 + (i % 17) * 7 },
      })));
      const query = (quickRange: string) => vigil.analytics.query(accountId, 'tcp', check.id, { quickRange, metrics: 'total_p95,total_avg,availability' });
      const exact = await query('last7Days');
      expect(exact.metadata.total_p95).toEqual({ label: 'Total (p95)', unit: 'milliseconds' });
      for (let after: Date | null = null; ;) {
        const step = await storage.checkResults.rollUp!(accountId, after, new Date(NOW), 10_000);
        if (step.done) break;
        after = step.next;
      }
      const week = await query('last7Days');
      expect(week.metadata.total_p95).toEqual({ label: 'Total (p95)', unit: 'milliseconds', approximate: true });
      expect(week.metadata.total_avg).toEqual({ label: 'Total (average)', unit: 'milliseconds' });
      expect(week.series[0]!.availability).toBe(100);
      expect(week.series[0]!.total_avg).toBeCloseTo(exact.series[0]!.total_avg as number, 9);
      expect(Math.abs((week.series[0]!.total_p95 as number) / (exact.series[0]!.total_p95 as number) - 1)).toBeLessThanOrEqual(0.02);
      expect((await query('last24Hours')).metadata.total_p95).toEqual({ label: 'Total (p95)', unit: 'milliseconds' });
    } finally {
      await storage.close();
    }
  });
});
