import { randomBytes } from 'node:crypto';
import { slotResultId, type CheckResult, type NewRecord } from '@vigil/core';
import { checkResultFixture } from '@vigil/core/testing';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { knexStorage } from '../src/index.js';
import { dropPrefixed, PG_URL } from './support/fresh-store.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const t0 = Date.UTC(2026, 2, 10);

function run(checkId: string, dueMs: number, overrides: Partial<NewRecord<CheckResult>> = {}): NewRecord<CheckResult> {
  const started = new Date(dueMs + 25).toISOString();
  return checkResultFixture(checkId, {
    id: slotResultId(checkId, 'us-east-1', new Date(dueMs), 1), startedAt: started, stoppedAt: started, created_at: started, ...overrides,
  });
}

describe.runIf(PG_URL)('day partitions on PostgreSQL', () => {
  it('writes each day into its own partition, and retention drops whole days after rolling them up', async () => {
    const prefix = `prt_${randomBytes(4).toString('hex')}_`;
    const knex = knexFactory({ client: 'pg', connection: PG_URL });
    const storage = knexStorage({ knex, tablePrefix: prefix });
    const partitions = async () => ((await knex.raw(
      `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass order by 1`, [`${prefix}check_runs_tcp`],
    )).rows as { relname: string }[]).map((r) => r.relname);
    try {
      // Three days, one run every 10 minutes for two accounts, the last minute of each day too.
      const a = Array.from({ length: 3 * 144 }, (_, i) => run('ca', t0 + i * 10 * MIN, { responseTime: 10 + (i % 7), phases: { dns: 0, connection: 0, data: 10 + (i % 7), total: 10 + (i % 7) }, hasFailures: i % 20 === 0 }));
      const b = Array.from({ length: 3 }, (_, d) => run('cb', t0 + (d + 1) * DAY - MIN));
      const manual = checkResultFixture('ca', { startedAt: new Date(t0 + 5 * HOUR).toISOString(), runSource: 'SCHEDULE_NOW' });
      // A full row from before the first day (a backlog retention has not reached): the drop takes it first.
      const older = checkResultFixture('ca', { startedAt: new Date(t0 - 2 * DAY + 3 * HOUR).toISOString(), runSource: 'TRIGGER_API', responseTime: 77 });
      await storage.checkResults.insertMany('acc-a', [...a, manual, older]);
      await storage.checkResults.insertMany('acc-b', b);
      expect(await partitions()).toEqual([0, 1, 2].map((d) => `${prefix}check_runs_tcp_${new Date(t0 + d * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`));
      // Upkeep: the coming week's days are made, and each closed day's index is rebuilt full.
      await storage.checkResults.maintain!(new Date(t0 + 2 * DAY + 90 * MIN));
      expect((await partitions()).length).toBe(3 + 7);
      const fill = async (day: number) => ((await knex.raw(
        `select coalesce(array_to_string(c.reloptions, ','), '') as opts from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = to_regclass(?)`,
        [`${prefix}check_runs_tcp_${new Date(t0 + day * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`],
      )).rows as { opts: string }[]).map((r) => r.opts);
      expect([await fill(0), await fill(1), await fill(2)]).toEqual([['fillfactor=100'], ['fillfactor=100'], ['']]);
      expect((await storage.checkResults.listByCheck('acc-a', 'ca', { limit: 1, offset: 0 })).total).toBe(3 * 144 + 2);
      // Account A's roll-up job has passed the first day; account B's has not.
      for (;;) if ((await storage.checkResults.rollUp!('acc-a', null, new Date(t0 + DAY), 10_000)).done) break;

      const out = await storage.checkResults.dropBefore!(new Date(t0 + 2 * DAY + 5 * HOUR));
      expect(out.deleted).toBeGreaterThanOrEqual(1); // the manual run's full row, plus the planner's count of the dropped rows
      const left = await partitions();
      expect(left[0]).toBe(`${prefix}check_runs_tcp_${new Date(t0 + 2 * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`);
      expect(left.length).toBe(1 + 7); // the third day and the week made ahead
      const listed = await storage.checkResults.listByCheck('acc-a', 'ca', { limit: 1000, offset: 0 });
      expect(listed.total).toBe(144);
      expect(Number((await knex(`${prefix}check_results`).count({ n: '*' }))[0]!.n)).toBe(0);
      // Every dropped run is in a roll-up marked pruned: A's from its roll-up job, B's rolled up at the drop.
      const rollA = await storage.rollups('acc-a', 'ca', new Date(t0), new Date(t0 + 2 * DAY));
      expect(rollA.reduce((s, r) => s + r.count, 0)).toBe(2 * 144 + 1);
      expect(rollA.reduce((s, r) => s + r.failures, 0)).toBe(a.slice(0, 288).filter((r) => r.hasFailures).length);
      expect(rollA.every((r) => r.pruned)).toBe(true);
      expect(await storage.rollups('acc-a', 'ca', new Date(t0 - 3 * DAY), new Date(t0))).toEqual([expect.objectContaining({ count: 1, max: 77, pruned: true })]);
      const rollB = await storage.rollups('acc-b', 'cb', new Date(t0), new Date(t0 + 2 * DAY));
      expect(rollB.map((r) => [r.hour, r.count, r.pruned])).toEqual([
        [new Date(t0 + DAY - HOUR).toISOString(), 1, true], [new Date(t0 + 2 * DAY - HOUR).toISOString(), 1, true],
      ]);
      // A late write into a dropped day makes its partition again rather than failing.
      await storage.checkResults.insertMany('acc-a', [run('ca', t0 + 7)]);
      expect((await storage.checkResults.listByCheck('acc-a', 'ca', { limit: 1, offset: 0, to: new Date(t0 + HOUR) })).total).toBe(1);
      // Retention takes it into its hour's roll-up, which counts as pruned past the drop: merged, not replaced.
      for (;;) if ((await storage.checkResults.prune('acc-a', new Date(t0 + DAY), 10_000)).done) break;
      expect((await storage.rollups('acc-a', 'ca', new Date(t0), new Date(t0 + HOUR))).reduce((n, r) => n + r.count, 0)).toBe(6 + 1);
      // The next drop takes a day made again by a late write too, its run merged into its hour first.
      await storage.checkResults.insertMany('acc-a', [run('ca', t0 + 8)]);
      await storage.checkResults.dropBefore!(new Date(t0 + 2 * DAY + 5 * HOUR));
      expect((await storage.rollups('acc-a', 'ca', new Date(t0), new Date(t0 + HOUR))).reduce((n, r) => n + r.count, 0)).toBe(6 + 2);
      expect((await partitions())[0]).toBe(left[0]);
    } finally {
      await dropPrefixed(knex, prefix);
      await storage.close();
      await knex.destroy();
    }
  });

  it('writes into a day again after another process dropped it', async () => {
    const prefix = `prt_${randomBytes(4).toString('hex')}_`;
    const knex = knexFactory({ client: 'pg', connection: PG_URL });
    // Two processes' stores on one database.
    const writer = knexStorage({ knex, tablePrefix: prefix });
    const other = knexStorage({ knex, tablePrefix: prefix });
    const count = async () => (await writer.checkResults.listByCheck('acc-a', 'ca', { limit: 1, offset: 0, to: new Date(t0 + DAY) })).total;
    try {
      await writer.checkResults.insertMany('acc-a', [run('ca', t0 + MIN)]);
      // The other process's retention drops the day this one made.
      await other.checkResults.dropBefore!(new Date(t0 + DAY + HOUR));
      expect(await count()).toBe(0);
      // A late run of that day: its partition is made again, and the run is stored.
      await writer.checkResults.insertMany('acc-a', [run('ca', t0 + 2 * MIN), run('ca', t0 + DAY + MIN)]);
      expect(await count()).toBe(1);
      expect((await writer.checkResults.listByCheck('acc-a', 'ca', { limit: 10, offset: 0 })).total).toBe(2);
    } finally {
      await dropPrefixed(knex, prefix);
      await writer.close();
      await other.close();
      await knex.destroy();
    }
  });

  it('makes a new day once when its writers come at once, and again after a creation failed', async () => {
    const prefix = `prt_${randomBytes(4).toString('hex')}_`;
    const knex = knexFactory({
      client: 'pg', connection: PG_URL,
      pool: { min: 0, max: 10, afterCreate: (conn: { query: (sql: string, cb: (err?: Error) => void) => void }, done: (err: Error | undefined, conn: unknown) => void) => conn.query("set lock_timeout = '300ms'", (err) => done(err, conn)) },
    });
    const storage = knexStorage({ knex, tablePrefix: prefix });
    const made: string[] = [];
    knex.on('query', (q: { sql: string }) => { if (/^create table if not exists .* partition of/.test(q.sql)) made.push(q.sql); });
    try {
      await storage.checkResults.insertMany('acc-a', [run('c0', t0 - DAY)]);
      made.length = 0;
      // Twenty writers of a day this store has not written to yet: one creation of its partitions.
      await Promise.all(Array.from({ length: 20 }, (_, i) => storage.checkResults.insertMany('acc-a', [run(`c${i}`, t0 + i * MIN)])));
      const tables = made.length;
      expect(tables).toBe(3); // the TCP and API runs' tables and the detail documents
      expect((await storage.checkResults.listByCheck('acc-a', 'c7', { limit: 1, offset: 0 })).total).toBe(1);
      // A creation that fails (the parent table locked past the connections' lock_timeout) fails
      // the writers waiting on it, and the next writer of that day makes it.
      const holder = await knex.transaction();
      try {
        await holder.raw('lock table ?? in access exclusive mode', [`${prefix}check_runs_tcp`]);
        const failed = await Promise.allSettled(Array.from({ length: 3 }, (_, i) => storage.checkResults.insertMany('acc-a', [run(`d${i}`, t0 + DAY + i * MIN)])));
        expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected', 'rejected']);
        expect(made.length).toBe(tables + 1);
      } finally {
        await holder.rollback();
      }
      await storage.checkResults.insertMany('acc-a', [run('d0', t0 + DAY)]);
      expect(made.length).toBe(2 * tables + 1);
      expect((await storage.checkResults.listByCheck('acc-a', 'd0', { limit: 1, offset: 0 })).total).toBe(1);
    } finally {
      await dropPrefixed(knex, prefix);
      await storage.close();
      await knex.destroy();
    }
  });
});
