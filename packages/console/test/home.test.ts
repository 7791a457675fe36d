import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkResultFixture } from '@vigil/core/testing';
import { BACKENDS, consoleHarness, dropPostgresSchema, signedIn, type ConsoleHarness } from './support/harness.js';

let h: ConsoleHarness;
afterEach(async () => {
  await h?.close();
});
afterAll(dropPostgresSchema);

/** The availability cell and the sparkline values of a check's row. */
function rowOf(html: string, checkId: string): { availability: string; spark: (number | null)[] } {
  const row = html.slice(html.indexOf(`data-check="${checkId}"`));
  const cells = row.slice(0, row.indexOf('</div>\n</div>'));
  const availability = /<div role="cell" class="num">([^<]*)<\/div>\s*<div role="cell"><div class="spark"/.exec(cells)![1]!;
  const spark = JSON.parse(/data-values="([^"]+)"/.exec(cells)![1]!) as (number | null)[];
  return { availability, spark };
}

describe.each(BACKENDS)('the check list\'s day of figures on %s', (backend) => {
  it('shows each hour\'s mean and the day\'s availability; the hour under way at once, a late result in an ended hour within a minute', async () => {
    h = await consoleHarness(backend);
    // The harness's clock: 2026-05-01T12:00:00Z, so the hour under way is 12:00 and the day starts at 13:00 the day before.
    const check = await h.vigil.checks.create(h.a.accountId, 'TCP', { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } });
    await h.vigil.storage.checkResults.insertMany(h.a.accountId, [
      checkResultFixture(check.id, { startedAt: '2026-05-01T10:10:00.000Z', responseTime: 100 }),
      checkResultFixture(check.id, { startedAt: '2026-05-01T10:40:00.000Z', responseTime: 300 }),
      checkResultFixture(check.id, { startedAt: '2026-04-30T13:05:00.000Z', responseTime: 50, hasFailures: true }),
      checkResultFixture(check.id, { startedAt: '2026-04-30T12:55:00.000Z', responseTime: 9_999 }),
    ]);
    const { agent } = await signedIn(h.app, h.a);
    const first = rowOf((await agent.get('/console/')).text, check.id);
    expect(first.spark).toHaveLength(24);
    expect(first.spark[0]).toBe(50);
    expect(first.spark[21]).toBe(200);
    expect(first.spark.filter((v) => v !== null)).toHaveLength(2);
    expect(first.availability).toBe('66.67%');

    // A run of the hour under way shows on the next read; a late one of an ended hour after a minute.
    await h.vigil.storage.checkResults.insertMany(h.a.accountId, [
      checkResultFixture(check.id, { startedAt: '2026-05-01T12:00:00.000Z', responseTime: 40 }),
      checkResultFixture(check.id, { startedAt: '2026-05-01T11:30:00.000Z', responseTime: 70 }),
    ]);
    const second = rowOf((await agent.get('/console/?fragment=rows')).text, check.id);
    expect(second.spark[23]).toBe(40);
    expect(second.spark[22]).toBeNull();
    h.clock.advance(60_000);
    const third = rowOf((await agent.get('/console/?fragment=rows')).text, check.id);
    expect(third.spark[22]).toBe(70);
    expect(third.availability).toBe('80%');
  });
});
