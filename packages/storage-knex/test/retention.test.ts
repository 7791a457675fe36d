import { randomBytes } from 'node:crypto';
import { checkResultFixture } from '@vigil/core/testing';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { knexStorage, type KnexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { PG_URL } from './support/fresh-store.js';

const dialects: [string, () => KnexStorage][] = [
  ['sqlite', () => knexStorage({ client: 'sqlite3', connection: ':memory:' })],
];
if (PG_URL) {
  dialects.push(['postgres', () => knexStorage({ knex: knexFactory({ client: 'pg', connection: PG_URL }), tablePrefix: `ret_${randomBytes(4).toString('hex')}_` })]);
}

describe.each(dialects)('retention on %s', (_name, open) => {
  it('rolls old results up by hour and location, deletes them, keeps newer ones, and merges a second run', async () => {
    const storage = open();
    try {
      const acc = 'acc-1';
      const at = (h: number, m: number) => new Date(Date.UTC(2026, 4, 1, h, m)).toISOString();
      const old = [10, 20, 30, 40].map((t, i) => checkResultFixture('check-1', { startedAt: at(10, i * 10), responseTime: t, hasFailures: i === 0, runLocation: 'eu-west-1' }));
      const other = checkResultFixture('check-1', { startedAt: at(10, 5), responseTime: 99, runLocation: 'us-east-1' });
      const attempt = checkResultFixture('check-1', { startedAt: at(10, 6), responseTime: 500, resultType: 'ATTEMPT' });
      const fresh = checkResultFixture('check-1', { startedAt: at(12, 0), responseTime: 7 });
      await storage.checkResults.insertMany(acc, [...old, other, attempt, fresh]);
      const r = await storage.retention(new Date(at(11, 30)));
      expect(r).toEqual({ rolledUp: 2, deleted: 6 });
      const rollups = await storage.rollups(acc, 'check-1', new Date(at(0, 0)), new Date(at(23, 0)));
      expect(rollups).toEqual([
        expect.objectContaining({ hour: at(10, 0), runLocation: 'eu-west-1', count: 4, failures: 1, sum: 100, sumSq: 3000, min: 10, max: 40 }),
        expect.objectContaining({ hour: at(10, 0), runLocation: 'us-east-1', count: 1, min: 99, max: 99, p99: 99 }),
      ]);
      // Percentiles come from the hour's sketch: within 1% of percentile_cont (25, 37, 38.5).
      for (const [p, exact] of [['p50', 25], ['p90', 37], ['p95', 38.5]] as const) expect(Math.abs(rollups[0]![p] - exact) / exact).toBeLessThan(0.01);
      // One binary value holds the stats; the columns roll-ups once kept them in stay empty.
      const stored = await storage.raw.dump('check_result_rollups');
      expect(stored.every((r) => r.stats instanceof Buffer && r.sketches === null && r.p50 === null && r.sum === null)).toBe(true);
      expect((await storage.checkResults.listByCheck(acc, 'check-1', { limit: 10, offset: 0 })).items.map((x) => x.responseTime)).toEqual([7]);
      await storage.checkResults.insertMany(acc, [checkResultFixture('check-1', { startedAt: at(10, 50), responseTime: 50, runLocation: 'eu-west-1' })]);
      await storage.retention(new Date(at(11, 30)));
      const merged = (await storage.rollups(acc, 'check-1', new Date(at(10, 0)), new Date(at(11, 0))))[0]!;
      expect(merged).toMatchObject({ count: 5, sum: 150, max: 50, min: 10 });
      // The late result merges into the hour's sketch: the median of 10, 20, 30, 40 and 50.
      expect(Math.abs(merged.p50 - 30) / 30).toBeLessThan(0.01);
    } finally {
      // Leave no tables of this run behind in a shared PostgreSQL database.
      if (storage.name === 'knex-pg') {
        const rows = (await storage.knex.raw("select tablename from pg_tables where schemaname = current_schema() and tablename like 'ret\\_%'")).rows as { tablename: string }[];
        for (const { tablename } of rows) await storage.knex.schema.dropTableIfExists(tablename);
        await storage.knex.destroy();
      }
      await storage.close();
    }
  });
});
