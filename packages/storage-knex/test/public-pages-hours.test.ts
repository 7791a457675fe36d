import { createVigil, percentileCont } from '@vigil/core';
import { checkResultFixture, dashboardFixture, FakeClock, tcpCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { freshStore, STORES } from './support/fresh-store.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** Now, a little into an hour: the dashboard's 24 hours run from 13:00 yesterday to the hour under way. */
const NOW = Date.UTC(2026, 4, 31, 12, 25);
const FIRST_HOUR = Math.floor(NOW / HOUR) * HOUR - 23 * HOUR;

describe.each(STORES)('a dashboard\'s hourly response times on %s', (kind) => {
  it('gives each hour the median of its final runs, exactly from raw results and within 2% once only roll-ups hold an hour', async () => {
    const storage = await freshStore(kind, 'vigil_pubhours');
    const vigil = createVigil({ storage, secretKey: 'd'.repeat(64), clock: new FakeClock(NOW) });
    try {
      const accountId = (await vigil.accounts.ensure()).id;
      const check = await storage.checks.insert(accountId, tcpCheckFixture({ name: 'api' }));
      // Two runs a minute (from two locations) since 26 hours ago, slower each hour; hour 5 has none.
      const rows = [];
      for (let t = FIRST_HOUR - 2 * HOUR; t < NOW; t += MIN) {
        const hour = Math.floor((t - FIRST_HOUR) / HOUR);
        if (hour === 5) continue;
        for (const [i, runLocation] of ['eu-west-1', 'us-east-1'].entries()) {
          const responseTime = 100 + hour * 10 + ((t / MIN) % 13) * 3 + i * 7;
          rows.push(checkResultFixture(check.id, { startedAt: new Date(t + i * 1000).toISOString(), responseTime, runLocation, hasFailures: (t / MIN) % 17 === 0 }));
        }
      }
      // An attempt a final run retried is not a point.
      rows.push(checkResultFixture(check.id, { startedAt: new Date(FIRST_HOUR + 30 * MIN).toISOString(), responseTime: 90_000, resultType: 'ATTEMPT' }));
      await storage.checkResults.insertMany(accountId, rows);
      const finals = rows.filter((r) => r.resultType !== 'ATTEMPT');
      const median = (h: number) => percentileCont(finals
        .filter((r) => Date.parse(r.startedAt) >= FIRST_HOUR + h * HOUR && Date.parse(r.startedAt) < FIRST_HOUR + (h + 1) * HOUR)
        .map((r) => r.responseTime).sort((a, b) => a - b), 0.5);

      const dashboard = await storage.dashboards.insert(accountId, dashboardFixture({ expandChecks: true }));
      const hoursOf = async () => (await vigil.publicPages.dashboardView(dashboard)).checks[0]!.hours;
      const exact = await hoursOf();
      expect(exact).toHaveLength(24);
      for (const [h, hour] of exact.entries()) {
        expect(hour.start).toBe(new Date(FIRST_HOUR + h * HOUR).toISOString());
        const m = median(h);
        expect(hour.p50).toBe(m === null ? null : Math.round(m));
      }
      expect(exact[5]).toMatchObject({ runs: 0, p50: null });
      expect(exact[23]!.runs).toBe(2 * 25);

      // Retention deleted the raw results of the first 6 hours: those hours are read from roll-ups.
      const cut = FIRST_HOUR + 6 * HOUR;
      for (;;) if ((await storage.checkResults.prune(accountId, new Date(cut), 20_000)).done) break;
      expect((await storage.checkResults.listByCheck(accountId, check.id, { limit: 1, offset: 0, to: new Date(cut) })).total).toBe(0);
      const later = await hoursOf();
      for (const [h, hour] of later.entries()) {
        expect(hour.runs).toBe(exact[h]!.runs);
        if (h >= 6 || hour.p50 === null) expect(hour.p50).toBe(exact[h]!.p50);
        else expect(Math.abs(hour.p50 / median(h)! - 1)).toBeLessThanOrEqual(0.02);
      }
    } finally {
      await storage.close();
    }
  });
});
