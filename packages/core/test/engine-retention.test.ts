import { afterEach, describe, expect, it } from 'vitest';
import { runFor, settle } from './fake-time.js';
import { RetentionJob } from '../src/engine/index.js';
import { createVigil, type LogMeta, type Logger, type Vigil, type VigilOptions, type VigilStorage } from '../src/index.js';
import { checkResultFixture, FakeClock, memoryStorage, outboxMessageFixture } from '../src/testing/index.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

const SECRET = 'c'.repeat(64);
const T0 = '2026-05-01T12:00:00.000Z';
const DAY = 86_400_000;
const HOUR = 3_600_000;

interface Entry {
  level: string;
  msg: string;
  meta: LogMeta;
}

function recordingLogger(entries: Entry[], bound: LogMeta = {}): Logger {
  const at = (level: string) => (msg: string, meta: LogMeta = {}) => void entries.push({ level, msg, meta: { ...bound, ...meta } });
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: (meta) => recordingLogger(entries, { ...bound, ...meta }) };
}

const started: Vigil[] = [];
afterEach(async () => {
  for (const v of started.splice(0)) await v.stop(0);
});

/** Results of `checkId` that started `ages` (ms before T0) ago. */
async function seed(storage: VigilStorage, accountId: string, ages: number[], checkId = 'check-1') {
  await storage.checkResults.insertMany(accountId, ages.map((age, i) => checkResultFixture(checkId, { startedAt: new Date(Date.parse(T0) - age).toISOString(), responseTime: i })));
}

async function ages(storage: VigilStorage, accountId: string, checkId = 'check-1'): Promise<number[]> {
  const page = await storage.checkResults.listByCheck(accountId, checkId, { limit: 1000, offset: 0 });
  return page.items.map((r) => Date.parse(T0) - Date.parse(r.startedAt)).sort((a, b) => a - b);
}

async function setup(options: Partial<VigilOptions> = {}, storage = memoryStorage(), clock = new FakeClock(T0)) {
  const log: Entry[] = [];
  const vigil = createVigil({ storage, secretKey: SECRET, clock, logger: recordingLogger(log), ...options });
  return { vigil, storage, clock, log };
}

async function start(vigil: Vigil) {
  await vigil.start();
  started.push(vigil);
  await settle();
}

describe('retention scheduled by the engine', () => {
  it('runs at the cron times (hourly by default), deleting results older than 90 days and nothing newer', async () => {
    const s = await setup();
    const a = (await s.vigil.accounts.ensure()).id;
    await seed(s.storage, a, [1 * HOUR, 89 * DAY, 90 * DAY - 1, 90 * DAY + 30 * 60_000, 91 * DAY, 200 * DAY]);
    await start(s.vigil);
    expect(await s.storage.schedule.list('', '')).toEqual([{ kind: 'retention', accountId: '', checkId: '', location: '', dueAt: '2026-05-01T12:17:00.000Z' }]);
    await runFor(s.clock, 16 * 60_000, 1_000);
    expect(await ages(s.storage, a)).toHaveLength(6);
    await runFor(s.clock, 2 * 60_000, 1_000);
    // At 12:17 the window starts 90 days back, at 12:00 (rounded down to the hour): 90 days + 17 minutes of age.
    expect(await ages(s.storage, a)).toEqual([1 * HOUR, 89 * DAY, 90 * DAY - 1]);
    expect(await ages(s.storage, a)).not.toContain(90 * DAY + 30 * 60_000);
    const removed = s.log.filter((e) => e.msg === 'retention: removed check results');
    expect(removed).toEqual([{ level: 'info', msg: 'retention: removed check results', meta: { accountId: a, before: '2026-01-31T12:00:00.000Z', days: 90, deleted: 3, rolledUp: 0 } }]);
    expect(await s.storage.schedule.list('', '')).toMatchObject([{ dueAt: '2026-05-01T13:17:00.000Z' }]);
  });

  it('keeps every result inside the window: the cut-off is rounded down to a whole hour', async () => {
    const s = await setup({ engine: { retention: { days: 1, cron: '*/10 * * * *' } } });
    const a = (await s.vigil.accounts.ensure()).id;
    // The first run is at 12:10: the window reaches back to 12:10 yesterday, rounded down to 12:00 yesterday.
    // Ages count from 12:00 today, so age DAY is 12:00 yesterday.
    const MIN = 60_000;
    await seed(s.storage, a, [DAY - 20 * MIN, DAY - 5 * MIN, DAY, DAY + 1, DAY + HOUR]);
    await start(s.vigil);
    await runFor(s.clock, 11 * MIN, 1_000);
    // 12:05 yesterday is past the window at 12:10 but inside the hour the cut-off falls in, so it stays.
    expect(await ages(s.storage, a)).toEqual([DAY - 20 * MIN, DAY - 5 * MIN, DAY]);
  });

  it('applies each account its own retention from retentionFor: days, null for ever, undefined for the default', async () => {
    const plans: Record<string, number | null | undefined> = {};
    const s = await setup({ engine: { retention: { days: 30, retentionFor: async (id) => plans[id] } } });
    const [short, forever, standard] = [(await s.vigil.accounts.ensure()).id, (await s.vigil.accounts.ensure()).id, (await s.vigil.accounts.ensure()).id];
    plans[short] = 7;
    plans[forever] = null;
    for (const id of [short, forever, standard]) await seed(s.storage, id, [6 * DAY, 8 * DAY, 31 * DAY, 400 * DAY]);
    await start(s.vigil);
    await runFor(s.clock, 18 * 60_000, 1_000);
    expect(await ages(s.storage, short)).toEqual([6 * DAY]);
    expect(await ages(s.storage, forever)).toEqual([6 * DAY, 8 * DAY, 31 * DAY, 400 * DAY]);
    expect(await ages(s.storage, standard)).toEqual([6 * DAY, 8 * DAY]);
  });

  it('skips an account whose retentionFor fails or answers nonsense, and says so', async () => {
    const s = await setup({ engine: { retention: { days: 1, retentionFor: (id) => { if (id === bad) throw new Error('plans service down'); return id === odd ? 0 : undefined; } } } });
    const [bad, odd, fine] = [(await s.vigil.accounts.ensure()).id, (await s.vigil.accounts.ensure()).id, (await s.vigil.accounts.ensure()).id];
    for (const id of [bad, odd, fine]) await seed(s.storage, id, [10 * DAY]);
    await start(s.vigil);
    await runFor(s.clock, 18 * 60_000, 1_000);
    expect([await ages(s.storage, bad), await ages(s.storage, odd), await ages(s.storage, fine)]).toEqual([[10 * DAY], [10 * DAY], []]);
    expect(s.log.filter((e) => e.level === 'warn').map((e) => [e.msg, e.meta.accountId])).toEqual([
      ['retention: retentionFor failed; the account is skipped', bad],
      ['retention: retentionFor answered no positive number of days; the account is skipped', odd],
    ]);
  });

  it('runs in one process at a time when several engines share the store', async () => {
    const storage = memoryStorage();
    const clock = new FakeClock(T0);
    const one = await setup({ engine: { owner: 'one' } }, storage, clock);
    const two = await setup({ engine: { owner: 'two' } }, storage, clock);
    const a = (await one.vigil.accounts.ensure()).id;
    await seed(storage, a, [100 * DAY]);
    await start(one.vigil);
    await start(two.vigil);
    await runFor(clock, 3 * HOUR, 5_000);
    const runs = [...one.log, ...two.log].filter((e) => e.msg === 'retention: run done');
    expect(runs).toHaveLength(3);
    expect([...one.log, ...two.log].filter((e) => e.msg === 'retention: removed check results')).toHaveLength(1);
    expect(await ages(storage, a)).toEqual([]);
  });

  it('a process with retention off leaves the job to one that runs it, on time', async () => {
    const storage = memoryStorage();
    const clock = new FakeClock(T0);
    // Started first and polling more often: before, it took the entry and put it off an hour.
    const off = await setup({ engine: { owner: 'off', retention: false, pollMs: 100 } }, storage, clock);
    const on = await setup({ engine: { owner: 'on' } }, storage, clock);
    const a = (await on.vigil.accounts.ensure()).id;
    await seed(storage, a, [100 * DAY]);
    await start(on.vigil);
    await start(off.vigil);
    await runFor(clock, 18 * 60_000, 1_000);
    expect(on.log.filter((e) => e.msg === 'retention: run done')).toHaveLength(1);
    expect(await ages(storage, a)).toEqual([]);
  });

  it('with retention false the engine schedules none and deletes nothing', async () => {
    const s = await setup({ engine: { retention: false } });
    const a = (await s.vigil.accounts.ensure()).id;
    await seed(s.storage, a, [365 * DAY]);
    await start(s.vigil);
    await runFor(s.clock, 2 * HOUR, 10_000);
    expect(await s.storage.schedule.list('', '')).toEqual([]);
    expect(await ages(s.storage, a)).toEqual([365 * DAY]);
  });

  it('removes what the outbox delivered more than 30 days ago (deliveredDays), and the attempts logged before then; nothing undelivered', async () => {
    const s = await setup({ engine: { retention: { deliveredDays: 30 } } });
    const a = (await s.vigil.accounts.ensure()).id;
    const o = s.storage.outbox;
    const ids = ['old', 'recent', 'waiting'].map((n) => `${n.padEnd(8, '0')}-0000-4000-8000-000000000000`);
    await o.enqueue(ids.map((id, i) => outboxMessageFixture(a, { id, checkId: `c-${i}`, created_at: new Date(Date.parse(T0) - 40 * DAY).toISOString(), nextAttemptAt: T0 })));
    await o.claim(s.clock.now(), 10, 60_000, 'me');
    await o.markDelivered(ids[0]!, 'me', new Date(Date.parse(T0) - 31 * DAY));
    await o.markDelivered(ids[1]!, 'me', new Date(Date.parse(T0) - 29 * DAY));
    await o.recordAttempt({ outboxId: ids[0]!, accountId: a, alertChannelId: 1, at: new Date(Date.parse(T0) - 31 * DAY).toISOString(), ok: true, detail: null });
    await o.recordAttempt({ outboxId: ids[1]!, accountId: a, alertChannelId: 1, at: new Date(Date.parse(T0) - 29 * DAY).toISOString(), ok: true, detail: null });
    await start(s.vigil);
    await runFor(s.clock, 18 * 60_000, 1_000);
    expect((await s.storage.raw.dump('outbox')).map((m) => m.id).sort()).toEqual([ids[1], ids[2]].sort());
    expect((await o.listAttempts(a, 1, 10)).map((x) => x.outboxId)).toEqual([ids[1]]);
    expect(s.log.find((e) => e.msg === 'retention: run done')?.meta).toMatchObject({ outbox: { messages: 1, attempts: 1 } });
  });

  it('removes heartbeat pings older than the account\'s retention a batch at a time, each check\'s newest kept; none of an account kept for ever', async () => {
    const plans: Record<string, number | null | undefined> = {};
    const s = await setup({ engine: { retention: { days: 30, batch: 2, retentionFor: async (id) => plans[id] } } });
    const [standard, forever] = [(await s.vigil.accounts.ensure()).id, (await s.vigil.accounts.ensure()).id];
    plans[forever] = null;
    const hb = s.storage.heartbeats;
    const at = (age: number) => new Date(Date.parse(T0) - age).toISOString();
    for (const id of [standard, forever]) {
      for (const age of [1 * DAY, 31 * DAY, 40 * DAY, 50 * DAY, 60 * DAY]) await hb.recordPing(id, { checkId: 'beat-1', at: at(age), source: null });
      // A weekly job's heartbeat that last pinged 45 days ago: its last sign of life stays.
      for (const age of [45 * DAY, 52 * DAY]) await hb.recordPing(id, { checkId: 'beat-2', at: at(age), source: null });
    }
    await start(s.vigil);
    await runFor(s.clock, 18 * 60_000, 1_000);
    const kept = async (id: string, checkId: string) => (await hb.listPings(id, checkId, new Date(0), new Date(T0))).map((p) => (Date.parse(T0) - Date.parse(p.at)) / DAY);
    expect(await kept(standard, 'beat-1')).toEqual([1]);
    expect(await kept(standard, 'beat-2')).toEqual([45]);
    expect(await kept(forever, 'beat-1')).toEqual([60, 50, 40, 31, 1]);
    expect(await kept(forever, 'beat-2')).toEqual([52, 45]);
    expect(s.log.find((e) => e.msg === 'retention: removed heartbeat pings')?.meta).toMatchObject({ accountId: standard, deleted: 5 });
  });

  it('refuses a malformed cron pattern, time zone or number of days when Vigil is built', () => {
    const build = (retention: object) => createVigil({ storage: memoryStorage(), secretKey: SECRET, engine: { retention } }).engine;
    expect(() => build({ cron: 'every hour' })).toThrow(/engine.retention: .*five or six/);
    expect(() => build({ timezone: 'Mars/Olympus' })).toThrow(/engine.retention: Invalid time zone/);
    expect(() => build({ days: 0 })).toThrow('engine.retention.days must be a positive number, got 0');
    expect(() => build({ batch: -1 })).toThrow('engine.retention.batch must be a positive number');
    expect(() => build({ deliveredDays: 0 })).toThrow('engine.retention.deliveredDays must be a positive number, got 0');
  });
});

describe('RetentionJob', () => {
  it('stops before its deadline and answers "at once", so the next claim goes on where it stopped', async () => {
    const deps = testDeps();
    const clock = deps.clock;
    const a = (await deps.storage.accounts.insert({ id: '0a6c1f2e-1111-4a1b-8c1d-000000000001', name: 'a', alertSettings: {} as never, created_at: T0, updated_at: null })).id;
    // One result per hour for ten hours, 100 days back; each call to the store takes 2 s.
    await seed(deps.storage, a, Array.from({ length: 10 }, (_, i) => 100 * DAY + i * HOUR));
    const prune = deps.storage.checkResults.prune.bind(deps.storage.checkResults);
    const calls: number[] = [];
    deps.storage.checkResults.prune = async (...args) => {
      clock.advance(2_000);
      const out = await prune(...args);
      calls.push(out.deleted);
      return out;
    };
    const job = new RetentionJob(deps, { batch: 2 });
    const deadline = new Date(Date.parse(T0) + 7_000);
    const next = await job.run(deadline);
    // 2 s a batch: after two (at 4 s) a third is not started, since the job allows twice its slowest batch.
    expect(calls).toEqual([2, 2]);
    expect(next).toEqual(clock.now());
    expect(await ages(deps.storage, a)).toHaveLength(6);
    const report = await job.prune(new Date(clock.now().getTime() + 60_000));
    expect(report).toEqual({ accounts: 1, deleted: 6, rolledUp: 0, finished: true, outbox: { messages: 0, attempts: 0 } });
    expect(await ages(deps.storage, a)).toEqual([]);
    expect(job.nextRun(new Date('2026-05-01T12:17:00.000Z'))).toEqual(new Date('2026-05-01T13:17:00.000Z'));
  });

  it('starts no batch once its signal aborts (the engine stopping) and answers "at once"', async () => {
    const deps = testDeps();
    const a = (await deps.storage.accounts.insert({ id: '0a6c1f2e-1111-4a1b-8c1d-000000000001', name: 'a', alertSettings: {} as never, created_at: T0, updated_at: null })).id;
    await seed(deps.storage, a, [100 * DAY]);
    const controller = new AbortController();
    controller.abort();
    const job = new RetentionJob(deps, {});
    expect(await job.run(new Date(Date.parse(T0) + 60_000), controller.signal)).toEqual(deps.clock.now());
    expect(await ages(deps.storage, a)).toEqual([100 * DAY]);
  });

  it('a process with retention off that claims the entry passes it on an hour later', async () => {
    const deps = testDeps();
    const job = new RetentionJob(deps, false);
    expect(job.entry(deps.clock.now())).toBeNull();
    expect(await job.run(new Date(Date.parse(T0) + 60_000))).toEqual(new Date(Date.parse(T0) + HOUR));
  });
});

describe('RetentionJob with a store that drops whole time ranges (dropBefore)', () => {
  /**
   * Two accounts on the memory store, its checkResults given a dropBefore that records its calls
   * and deletes what started before `before` through deleteOlderThan; retentionFor answers
   * `plans`, throws for 'fail', and records whom it was asked about. The clock is at 12:25.
   */
  async function dropping(plans: Record<string, number | null | 'fail'>, withDrop = true) {
    const log: Entry[] = [];
    const deps = testDeps({ logger: recordingLogger(log) });
    const results = deps.storage.checkResults;
    const drops: string[] = [];
    const upkeep: string[] = [];
    const rollupPrunes: string[] = [];
    if (withDrop) {
      deps.storage.checkResults = {
        ...results,
        async dropBefore(before) {
          drops.push(before.toISOString());
          return { rolledUp: 0, deleted: await results.deleteOlderThan(before) };
        },
        async maintain(now) {
          upkeep.push(now.toISOString());
        },
        async pruneRollups(accountId, before) {
          rollupPrunes.push(`${accountId}<${before.toISOString()}`);
          return 0;
        },
      };
    }
    for (const id of [ACCOUNT_A, ACCOUNT_B]) await deps.storage.accounts.insert({ id, name: id, alertSettings: {} as never, created_at: T0, updated_at: null });
    // A keeps 7 days at most, B 30: B's result 10 minutes inside the hour the cut-off falls in stays.
    await seed(deps.storage, ACCOUNT_A, [6 * DAY, 8 * DAY, 31 * DAY, 40 * DAY]);
    await seed(deps.storage, ACCOUNT_B, [6 * DAY, 29 * DAY, 30 * DAY - 10 * 60_000, 30 * DAY + 10 * 60_000, 40 * DAY]);
    deps.clock.advance(25 * 60_000);
    const asked: string[] = [];
    const job = new RetentionJob(deps, {
      retentionFor: (id) => {
        asked.push(id);
        const plan = plans[id];
        if (plan === 'fail') throw new Error('plans service down');
        return plan;
      },
    });
    return { deps, log, drops, upkeep, rollupPrunes, asked, job };
  }

  it('drops once a pass at the longest retention, rounded down to the hour; the per-account pass removes the rest', async () => {
    const d = await dropping({ [ACCOUNT_A]: 7, [ACCOUNT_B]: 30 });
    const report = await d.job.prune();
    expect(d.drops).toEqual(['2026-04-01T12:00:00.000Z']);
    expect(await ages(d.deps.storage, ACCOUNT_A)).toEqual([6 * DAY]);
    expect(await ages(d.deps.storage, ACCOUNT_B)).toEqual([6 * DAY, 29 * DAY, 30 * DAY - 10 * 60_000]);
    // Four results went in the drop, A's 8-day-old one in the per-account pass.
    expect(report).toEqual({ accounts: 1, deleted: 5, rolledUp: 0, finished: true, outbox: { messages: 0, attempts: 0 } });
    expect(d.log.filter((e) => e.msg.startsWith('retention: dropped') || e.msg === 'retention: removed check results')).toEqual([
      { level: 'info', msg: 'retention: dropped whole ranges of check results', meta: { before: '2026-04-01T12:00:00.000Z', deleted: 4, rolledUp: 0 } },
      { level: 'info', msg: 'retention: removed check results', meta: { accountId: ACCOUNT_A, before: '2026-04-24T12:00:00.000Z', days: 7, deleted: 1, rolledUp: 0 } },
    ]);
    expect(d.asked.sort()).toEqual([ACCOUNT_A, ACCOUNT_B]);
    // Roll-ups are kept 400 days by default, whatever the account's raw retention.
    const rollupCut = new Date(Math.floor((d.deps.clock.now().getTime() - 400 * DAY) / 3_600_000) * 3_600_000).toISOString();
    expect(d.rollupPrunes.sort()).toEqual([`${ACCOUNT_A}<${rollupCut}`, `${ACCOUNT_B}<${rollupCut}`]);
    expect(await d.job.prune()).toMatchObject({ accounts: 0, deleted: 0, finished: true });
    expect(d.drops).toEqual(['2026-04-01T12:00:00.000Z', '2026-04-01T12:00:00.000Z']);
    expect(d.asked.sort()).toEqual([ACCOUNT_A, ACCOUNT_A, ACCOUNT_B, ACCOUNT_B]);
  });

  it('drops nothing while an account keeps its results for ever, and still gives the store its upkeep each pass', async () => {
    const d = await dropping({ [ACCOUNT_A]: 7, [ACCOUNT_B]: null });
    expect(await d.job.prune()).toMatchObject({ accounts: 1, deleted: 3 });
    expect(d.drops).toEqual([]);
    expect(d.upkeep).toEqual([d.deps.clock.now().toISOString()]);
    expect(await ages(d.deps.storage, ACCOUNT_A)).toEqual([6 * DAY]);
    expect(await ages(d.deps.storage, ACCOUNT_B)).toHaveLength(5);
  });

  it('drops nothing while an account is skipped because its retentionFor failed', async () => {
    const d = await dropping({ [ACCOUNT_A]: 7, [ACCOUNT_B]: 'fail' });
    expect(await d.job.prune()).toMatchObject({ accounts: 1, deleted: 3 });
    expect(d.drops).toEqual([]);
    expect(await ages(d.deps.storage, ACCOUNT_B)).toHaveLength(5);
    expect(d.log.filter((e) => e.level === 'warn').map((e) => [e.msg, e.meta.accountId])).toEqual([['retention: retentionFor failed; the account is skipped', ACCOUNT_B]]);
  });

  it('a store without dropBefore ends with the same results, all deleted by the per-account pass', async () => {
    const d = await dropping({ [ACCOUNT_A]: 7, [ACCOUNT_B]: 30 }, false);
    expect(d.deps.storage.checkResults.dropBefore).toBeUndefined();
    expect(await d.job.prune()).toEqual({ accounts: 2, deleted: 5, rolledUp: 0, finished: true, outbox: { messages: 0, attempts: 0 } });
    expect(await ages(d.deps.storage, ACCOUNT_A)).toEqual([6 * DAY]);
    expect(await ages(d.deps.storage, ACCOUNT_B)).toEqual([6 * DAY, 29 * DAY, 30 * DAY - 10 * 60_000]);
  });

  it('a failing drop is logged and the per-account pass still removes every account\'s old results', async () => {
    const d = await dropping({ [ACCOUNT_A]: 7, [ACCOUNT_B]: 30 });
    d.deps.storage.checkResults.dropBefore = async () => {
      throw new Error('partition locked');
    };
    expect(await d.job.prune()).toMatchObject({ accounts: 2, deleted: 5, finished: true });
    expect(d.log.filter((e) => e.level === 'warn').map((e) => [e.msg, e.meta.error])).toEqual([
      ['retention: dropping whole ranges of check results failed; the next run tries again', 'partition locked'],
    ]);
  });

  it('does not start the drop once no time is left, and reports the pass unfinished', async () => {
    const d = await dropping({ [ACCOUNT_A]: 7, [ACCOUNT_B]: 30 });
    const job = new RetentionJob(d.deps, { retentionFor: () => (d.deps.clock.advance(30_000), 30) });
    const report = await job.prune(new Date(d.deps.clock.now().getTime() + 50_000));
    expect(report).toMatchObject({ deleted: 0, finished: false });
    expect(d.drops).toEqual([]);
    expect(await ages(d.deps.storage, ACCOUNT_A)).toHaveLength(4);
  });
});
