import { createHash, randomBytes } from 'node:crypto';
import { slotResultId, type CheckResult, type NewRecord } from '@vigil/core';
import { checkResultFixture } from '@vigil/core/testing';
import knexFactory, { type Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { knexStorage, migrate } from '../src/index.js';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');
const dialects: [string, () => { knex: Knex; prefix: string }][] = [
  ['sqlite', () => ({ knex: knexFactory({ client: 'sqlite3', connection: ':memory:', useNullAsDefault: true, pool: { min: 1, max: 1 } }), prefix: 'vigil_' })],
];
if (PG_URL) dialects.push(['postgres', () => ({ knex: knexFactory({ client: 'pg', connection: PG_URL }), prefix: `upg_${randomBytes(4).toString('hex')}_` })]);

const ACC = 'acc-upgrade';
const MIN = 60_000;
const HOUR = 60 * MIN;
const t0 = Date.UTC(2026, 3, 1, 0, 0);

/** A slot's id as Vigil made it before slot ids carried their due time: a hash only (version 5 layout). */
function legacySlotId(checkId: string, location: string, dueAt: Date, attempt: number): string {
  const h = createHash('sha256').update(`${checkId}|${location}|${dueAt.toISOString()}|${attempt}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A result as Vigil stored every result before the compact layout: a full row with its JSON. */
function oldRow(accountId: string, r: NewRecord<CheckResult>) {
  const { id, checkId, startedAt, runLocation, statusCode, responseTime, attempts, resultType, checkSessionId, phases, ...rest } = r;
  return {
    id, account_id: accountId, check_id: checkId, started_ms: Date.parse(startedAt), run_location: runLocation, status_code: statusCode,
    response_time: responseTime, failed: r.hasFailures || r.hasErrors, attempts, result_type: resultType, check_session_id: checkSessionId,
    phases: JSON.stringify(phases), data: JSON.stringify({ ...rest, startedAt }),
  };
}

describe.each(dialects)('upgrading a database written before compact results, on %s', (_name, open) => {
  it('migrates in place: every old result reads back through the store, beside new narrow rows, and retention takes both', async () => {
    const { knex, prefix } = open();
    try {
      await migrate(knex, prefix, '010_rollup_sketches');
      // Two days of a scheduled TCP check at one run a minute, old slot ids, a failure every 50th.
      const old = Array.from({ length: 2 * 24 * 60 }, (_, i) => {
        const due = new Date(t0 + i * MIN);
        return checkResultFixture('c1', {
          id: legacySlotId('c1', 'us-east-1', due, 1), startedAt: new Date(due.getTime() + 40).toISOString(),
          responseTime: 10 + (i % 20), phases: { dns: 1, connection: 2, data: 7 + (i % 20), total: 10 + (i % 20) },
          hasFailures: i % 50 === 0, details: { response: 'PONG' },
        });
      });
      for (let i = 0; i < old.length; i += 200) await knex(`${prefix}check_results`).insert(old.slice(i, i + 200).map((r) => oldRow(ACC, r)));

      const storage = knexStorage({ knex, tablePrefix: prefix });
      const fresh = Array.from({ length: 60 }, (_, i) => {
        const due = new Date(t0 + 2 * 24 * HOUR + i * MIN);
        const started = new Date(due.getTime() + 40).toISOString();
        return checkResultFixture('c1', { id: slotResultId('c1', 'us-east-1', due, 1), startedAt: started, stoppedAt: started, created_at: started, responseTime: 5, phases: { dns: 1, connection: 2, data: 2, total: 5 } });
      });
      await storage.checkResults.insertMany(ACC, fresh);
      expect(Number((await knex(`${prefix}check_runs_tcp`).count({ n: '*' }))[0]!.n)).toBe(60);

      // Every old result is there, whole, by id and in the list; the new ones come first.
      for (const r of old.filter((_, i) => i % 97 === 0)) {
        const got = await storage.checkResults.get(ACC, r.id, 'c1');
        expect(got).toEqual({ ...r, accountId: ACC });
      }
      const ids: string[] = [];
      for (let offset = 0; ; offset += 1000) {
        const page = await storage.checkResults.listByCheck(ACC, 'c1', { limit: 1000, offset });
        expect(page.total).toBe(old.length + fresh.length);
        ids.push(...page.items.map((r) => r.id));
        if (page.items.length < 1000) break;
      }
      expect(ids).toEqual([...fresh].reverse().map((r) => r.id).concat([...old].reverse().map((r) => r.id)));
      // Analytics over the old and the new rows together.
      const [agg] = await storage.checkResults.aggregate(ACC, { checkIds: ['c1'], from: new Date(t0), to: new Date(t0 + 3 * 24 * HOUR), measures: [{ name: 'sum', fn: 'sum', field: 'responseTime' }] });
      expect(agg).toMatchObject({ count: old.length + 60, failures: old.filter((r) => r.hasFailures).length });
      expect(agg!.values.sum).toBe(old.reduce((a, r) => a + r.responseTime, 0) + 300);

      // Retention rolls the old rows up and deletes them like the new ones.
      for (;;) if ((await storage.checkResults.prune(ACC, new Date(t0 + 2 * 24 * HOUR), 5_000)).done) break;
      expect((await storage.checkResults.listByCheck(ACC, 'c1', { limit: 10, offset: 0 })).total).toBe(60);
      const rollups = await storage.rollups(ACC, 'c1', new Date(t0), new Date(t0 + 3 * 24 * HOUR));
      expect(rollups.reduce((a, r) => a + r.count, 0)).toBe(old.length);
      expect(rollups.length).toBe(48);
    } finally {
      if (knex.client.config.client === 'pg') {
        const rows = (await knex.raw('select tablename from pg_tables where tablename like ?', [`${prefix}%`])).rows as { tablename: string }[];
        for (const { tablename } of rows) await knex.schema.dropTableIfExists(tablename);
      }
      await knex.destroy();
    }
  });
});
