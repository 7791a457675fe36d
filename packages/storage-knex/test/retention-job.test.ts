import { randomBytes } from 'node:crypto';
import { createVigil, slotResultId, type CheckResult, type LogMeta, type Logger, type Vigil, type VigilStorage } from '@vigil/core';
import { checkResultFixture, FakeClock } from '@vigil/core/testing';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knexStorage, type KnexStorage } from '../src/index.js';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');

const SECRET = 'c'.repeat(64);
const T0 = Date.parse('2026-05-01T12:00:00.000Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function recordingLogger(entries: { msg: string; meta: LogMeta }[]): Logger {
  const at = (msg: string, meta: LogMeta = {}) => void entries.push({ msg, meta });
  const logger: Logger = { error: at, warn: at, info: at, debug: at, child: () => logger };
  return logger;
}

/**
 * Waits (in real time) while the engine talks to the database, moving the fake clock on a little
 * at each look so that the engine's polls, which wait on that clock, go on.
 */
async function until(clock: FakeClock, what: string, ok: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(100);
  }
}

/** A check's results as the store lists them (full rows and the narrow rows of scheduled runs alike). */
async function resultsOf(storage: VigilStorage, accountId: string, checkId: string): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (;;) {
    const page = await storage.checkResults.listByCheck(accountId, checkId, { limit: 1000, offset: out.length });
    out.push(...page.items);
    if (page.items.length === 0 || out.length >= page.total) return out;
  }
}

// Each PostgreSQL case gets a schema of its own, so runs never collide.
let admin: Knex | null = null;
const schemas: string[] = [];
beforeAll(async () => {
  if (PG_URL) admin = knexFactory({ client: 'pg', connection: PG_URL });
});
afterAll(async () => {
  for (const schema of schemas) await admin!.raw(`drop schema ${schema} cascade`);
  await admin?.destroy();
});

async function pgStores(n: number): Promise<KnexStorage[]> {
  const schema = `vigil_ret_${randomBytes(4).toString('hex')}`;
  await admin!.raw(`create schema ${schema}`);
  schemas.push(schema);
  return Array.from({ length: n }, () => {
    const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 0, max: 3 } });
    const storage = knexStorage({ knex });
    const close = storage.close;
    storage.close = async () => {
      await close();
      await knex.destroy();
    };
    return storage;
  });
}

const dialects: [string, () => Promise<KnexStorage>][] = [['sqlite', async () => knexStorage({ client: 'sqlite3', connection: ':memory:' })]];
if (PG_URL) dialects.push(['postgres', async () => (await pgStores(1))[0]!]);

describe.each(dialects)('retention job of the engine on %s', (_name, open) => {
  it('rolls results older than the account\'s retention up by hour, deletes them a batch at a time, and keeps the rest', async () => {
    const storage = await open();
    const clock = new FakeClock(T0);
    const log: { msg: string; meta: LogMeta }[] = [];
    let vigil: Vigil | null = null;
    try {
      const keptForEver = new Set<string>();
      vigil = createVigil({
        storage, secretKey: SECRET, clock, logger: recordingLogger(log),
        engine: { retention: { days: 30, batch: 100, retentionFor: (id) => (keptForEver.has(id) ? null : undefined) } },
      });
      const a = (await vigil.accounts.ensure()).id;
      const b = (await vigil.accounts.ensure()).id;
      keptForEver.add(b);
      // Two checks every 5 minutes from 32 days back to 29 days back, in account a; the same in b, kept for ever.
      const rows = (checkId: string) => Array.from({ length: 3 * 24 * 12 }, (_, i) => {
        const startedAt = new Date(T0 - 32 * DAY + i * 5 * MIN).toISOString();
        // check-2's are scheduled runs (their slot's id): the store keeps them as narrow rows.
        const id = checkId === 'check-2' ? { id: slotResultId(checkId, 'us-east-1', new Date(startedAt), 1) } : {};
        return checkResultFixture(checkId, { ...id, startedAt, responseTime: 100 + (i % 12), hasFailures: i % 12 === 0 });
      });
      await storage.checkResults.insertMany(a, [...rows('check-1'), ...rows('check-2')]);
      await storage.checkResults.insertMany(b, rows('check-3'));
      // A heartbeat pinged hourly over the same days, and one whose last pings are all older, in both accounts.
      const ping = (checkId: string, ms: number) => ({ checkId, at: new Date(ms).toISOString(), source: null });
      for (const id of [a, b]) {
        for (let i = 0; i < 72; i++) await storage.heartbeats.recordPing(id, ping('beat-1', T0 - 32 * DAY + i * HOUR));
        for (const age of [33, 32, 31]) await storage.heartbeats.recordPing(id, ping('beat-2', T0 - age * DAY));
      }
      expect(Number((await storage.knex('vigil_check_runs_tcp').count({ n: '*' }))[0]!.n)).toBe(3 * 24 * 12);
      const before = new Date(T0 - 30 * DAY).getTime();
      const due = 2 * (before - (T0 - 32 * DAY)) / (5 * MIN);

      await vigil.start();
      clock.set(T0 + 17 * MIN + 1_000);
      await until(clock, 'the retention run', () => log.some((e) => e.msg === 'retention: run done'));

      const ofA = [...(await resultsOf(storage, a, 'check-1')), ...(await resultsOf(storage, a, 'check-2'))].map((r) => Date.parse(r.startedAt));
      expect(ofA.length).toBe(2 * 3 * 24 * 12 - due);
      expect(Math.min(...ofA)).toBe(before);
      expect(await resultsOf(storage, b, 'check-3')).toHaveLength(3 * 24 * 12);
      const rollups = await storage.rollups(a, 'check-1', new Date(T0 - 40 * DAY), new Date(T0));
      // The 48 hours retention deleted, then the 24 kept ones rolled up as closed hours, raw results kept.
      expect(rollups).toHaveLength(72);
      expect(rollups.filter((r) => r.pruned).map((r) => r.hour)).toEqual(rollups.slice(0, 48).map((r) => r.hour));
      expect(rollups.every((r) => r.count === 12 && r.failures === 1 && r.min === 100 && r.max === 111)).toBe(true);
      expect(rollups[0]!.hour).toBe(new Date(T0 - 32 * DAY).toISOString());
      expect(log.find((e) => e.msg === 'retention: removed check results')?.meta).toEqual({
        accountId: a, before: new Date(before).toISOString(), days: 30, deleted: due, rolledUp: 96,
      });
      // Pings before the cut-off go too, each check's newest kept; none of the account kept for ever.
      const pings = async (id: string, checkId: string) => (await storage.heartbeats.listPings(id, checkId, new Date(0), new Date(T0))).map((p) => Date.parse(p.at));
      expect(Math.min(...(await pings(a, 'beat-1')))).toBe(before);
      expect(await pings(a, 'beat-1')).toHaveLength(24);
      expect(await pings(a, 'beat-2')).toEqual([T0 - 31 * DAY]);
      expect(await pings(b, 'beat-1')).toHaveLength(72);
      expect(await pings(b, 'beat-2')).toHaveLength(3);
      expect(log.find((e) => e.msg === 'retention: removed heartbeat pings')?.meta).toEqual({ accountId: a, before: new Date(before).toISOString(), deleted: 50 });
      expect(await storage.schedule.list('', '')).toEqual([
        { kind: 'retention', accountId: '', checkId: '', location: '', dueAt: new Date(T0 + HOUR + 17 * MIN).toISOString() },
      ]);
    } finally {
      await vigil?.stop(0);
      await storage.close();
    }
  });
});

describe.runIf(PG_URL)('retention job with two engines on one PostgreSQL database', () => {
  it('runs in one of them at each cron time', async () => {
    const [one, two] = await pgStores(2);
    const clock = new FakeClock(T0);
    const logs: { msg: string; meta: LogMeta }[][] = [[], []];
    const vigils = [one!, two!].map((storage, i) => createVigil({
      storage, secretKey: SECRET, clock, logger: recordingLogger(logs[i]!), engine: { owner: `engine-${i}`, retention: { days: 1 } },
    }));
    const runs = () => logs.flat().filter((e) => e.msg === 'retention: run done').length;
    try {
      const a = (await vigils[0]!.accounts.ensure()).id;
      // Every other one a scheduled run (its slot's id), kept as a narrow row.
      await one!.checkResults.insertMany(a, Array.from({ length: 50 }, (_, i) => {
        const startedAt = new Date(T0 - 3 * DAY + i * MIN).toISOString();
        return checkResultFixture('check-1', { ...(i % 2 === 0 ? { id: slotResultId('check-1', 'us-east-1', new Date(startedAt), 1) } : {}), startedAt });
      }));
      await Promise.all(vigils.map((v) => v.start()));
      for (const hour of [0, 1, 2]) {
        clock.set(T0 + hour * HOUR + 17 * MIN + 1_000);
        await until(clock, `the run of hour ${hour}`, () => runs() === hour + 1);
        // Both engines go on polling for a while: neither claims the entry again before its next time.
        for (let i = 0; i < 15; i++) {
          await new Promise((r) => setTimeout(r, 20));
          clock.advance(100);
        }
        expect(runs()).toBe(hour + 1);
      }
      // Whole days of the narrow rows go at once (PostgreSQL keeps them in day partitions), with the
      // full rows before the same time; an account's prune removes what is left.
      const removed = logs.flat().filter((e) => ['retention: dropped whole ranges of check results', 'retention: removed check results'].includes(e.msg));
      expect(removed.reduce((n, e) => n + Number(e.meta.deleted), 0)).toBe(50);
      expect((await one!.checkResults.listByCheck(a, 'check-1', { limit: 1, offset: 0 })).total).toBe(0);
    } finally {
      for (const v of vigils) await v.stop(0);
      await one!.close();
      await two!.close();
    }
  });
});
