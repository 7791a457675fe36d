import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createVigil, type CheckSession, type Vigil } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import { freshDatabase, PG_URL, type FreshDatabase } from './support/postgres.js';
import { type Child, cleanupsAfterEach, sleep, startNode, until } from './support/processes.js';

const ENGINE = fileURLToPath(new URL('./support/engine-process.mjs', import.meta.url));
/** At most this many sessions: they are triggered one by one until engine a is killed (after 3 s or so). */
const CHECKS = 60;
const LEASE_MS = 6_000;
/** The runner's own time limit: no attempt outlives it, whatever the runner does. */
const TIME_LIMIT_MS = 3_000;
/** How long a run of the crash case works: under its time limit, long enough to be under way at the kill. */
const RUN_MS = '1500-2500';
/** For a poll to see the lease gone, and for storing, on a busy machine. */
const SLACK_MS = 5_000;
const FINAL = ['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'];

const cleanups = cleanupsAfterEach();

/** A run as an engine process reported it: its sequence, and when it started or handed its outcome back. */
interface Reported {
  what: 'start' | 'ran';
  sequenceId: string;
  at: number;
}

/** The session runs a process reported (a scheduled run, reported with "-", is none: daily checks seldom have one). */
function reported(child: Child): Reported[] {
  return [...child.output.matchAll(/^(start|ran) \S+ ([0-9a-f-]{36}) (\d+)$/gm)].map((m) => ({ what: m[1] as 'start' | 'ran', sequenceId: m[2]!, at: Number(m[3]) }));
}

interface Setup {
  db: FreshDatabase;
  host: Vigil;
  accountId: string;
  engine(owner: string, env?: Record<string, string>): Promise<Child>;
}

/**
 * A fresh database and the test's own Vigil on it, which makes checks and triggers sessions but
 * never starts an engine: one here (serving every location, as by default) would take sessions'
 * runs from the processes under test.
 */
async function setup(tag: string): Promise<Setup> {
  const db = await freshDatabase(tag);
  cleanups.push(() => db.drop());
  const secretKey = randomBytes(32).toString('hex');
  const host = createVigil({ storage: knexStorage({ client: 'pg', connection: db.url }), secretKey, alerts: { enabled: false } });
  cleanups.push(() => host.close());
  const account = await host.accounts.ensure();
  return {
    db,
    host,
    accountId: account.id,
    async engine(owner, env = {}) {
      const child = startNode(ENGINE, {
        VIGIL_DB: db.url, VIGIL_SECRET_KEY: secretKey, OWNER: owner, LEASE_MS: String(LEASE_MS),
        RUNNER_TIMEOUT_MS: String(TIME_LIMIT_MS), REPORT_RUNS: '1', ...env,
      });
      await child.waitFor(/ready/);
      return child;
    },
  };
}

async function sessionsOf(host: Vigil, accountId: string, ids: readonly string[]): Promise<CheckSession[]> {
  return Promise.all(ids.map((id) => host.checkSessions.getRecord(accountId, id)));
}

describe.runIf(PG_URL)('check sessions and a kill -9 of one of two engine processes', () => {
  it('every session ends within time limit and lease of the kill, and no sequence runs twice', async () => {
    const { db, host, accountId, engine } = await setup('sessions');
    const checkIds: string[] = [];
    for (let i = 0; i < CHECKS; i++) {
      const check = await host.checks.create(accountId, 'TCP', { name: `s${i}`, request: { hostname: '127.0.0.1', port: 1 }, frequency: 1440 });
      checkIds.push(check.id);
    }
    // Engine a polls more often, so that it takes its share of the sessions wherever the two
    // processes' polls fall.
    const [a, b] = await Promise.all([engine('engine-a', { RUN_MS, POLL_MS: '100' }), engine('engine-b', { RUN_MS })]);

    // Engine a is killed while it holds runs at each step: some under way in the runner, some
    // stored but with their sequence not ended yet. For the latter, writes of check statuses
    // (which come between storing a run and ending its sequence) wait on a lock until the kill.
    const lock = await db.raw.transaction();
    cleanups.push(async () => {
      if (!lock.isCompleted()) await lock.rollback();
    });
    await lock.raw('lock table vigil_check_statuses in exclusive mode');

    // One trigger per check, 100 ms apart, as pipelines trigger them, until engine a is killed.
    const sessionIds: string[] = [];
    let killed = false;
    const triggering = (async () => {
      for (const checkId of checkIds) {
        if (killed) return;
        const { sessions } = await host.checkSessions.trigger(accountId, { target: { checkId: [checkId] } });
        sessionIds.push(...sessions.map((s) => s.checkSessionId));
        await sleep(100);
      }
    })();
    // The kill comes once a run of a's was handed back 300 ms ago (it is stored by then) and
    // another started less than a second ago (runs take 1.5 s at least: it is under way).
    await until(async () => {
      const now = Date.now();
      const runs = reported(a);
      return runs.some((r) => r.what === 'ran' && r.at < now - 300) && runs.some((r) => r.what === 'start' && r.at > now - 1_000);
    }, 20_000, () => `engine a to hand a run back and start another:\n${a.output}`, 10);
    a.process.kill('SIGKILL');
    const killedAt = Date.now();
    killed = true;
    await lock.rollback();
    await triggering;
    expect((await a.exited()).signal).toBe('SIGKILL');
    const ofA = reported(a);
    const startedByA = new Set(ofA.filter((r) => r.what === 'start').map((r) => r.sequenceId));
    const ranByA = new Set(ofA.filter((r) => r.what === 'ran').map((r) => r.sequenceId));
    const underWay = [...startedByA].filter((s) => !ranByA.has(s));
    // The case is about runs the dead process held: it must have held some.
    expect(underWay.length).toBeGreaterThan(0);
    expect(ranByA.size).toBeGreaterThan(0);

    // Every lease of the dead process runs out LEASE_MS after its claim at the latest, and the run
    // claimed again then ends within its time limit.
    const deadline = killedAt + LEASE_MS + TIME_LIMIT_MS + SLACK_MS;
    const pending = async () => (await sessionsOf(host, accountId, sessionIds)).filter((s) => !FINAL.includes(s.status));
    await until(async () => (await pending()).length === 0, deadline - Date.now(), 'every session to end', 250).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify((await pending()).map((s) => [s.name, s.status, s.sequences]))}\nengine b:\n${b.output}`);
    });
    const exited = b.exited();
    b.process.kill('SIGTERM');
    expect((await exited).code).toBe(0);

    const sessions = await sessionsOf(host, accountId, sessionIds);
    for (const s of sessions) {
      // Every run passes, so a session that ended otherwise was given up rather than run again.
      expect({ name: s.name, status: s.status, sequences: s.sequences.map((q) => q.status) }).toEqual({ name: s.name, status: 'PASSED', sequences: ['PASSED'] });
      expect(s.stoppedAt).not.toBeNull();
      expect(Date.parse(s.stoppedAt!)).toBeLessThanOrEqual(deadline);
    }

    // Nothing runs twice. A sequence is one run, and each ends with exactly one FINAL result: one
    // the dead process stored ends from that result (the live one does not run and store it
    // again), and no run is stored twice. Each process starts a sequence at most once, and the
    // live one starts one the dead one had started only after the kill, never while the dead one
    // still ran it. A run the dead process had under way in its runner is run again by the live
    // one once the lease runs out: the one second start allowed. One it had handed back is run
    // again only if the kill came before it was stored.
    const rows = (await db.raw('vigil_check_results').whereIn('check_session_id', sessionIds)) as { result_type: string; data: string }[];
    const finals = new Map<string, number>();
    for (const row of rows) {
      expect(row.result_type).toBe('FINAL');
      const sequenceId = (JSON.parse(row.data) as { sequenceId: string }).sequenceId;
      finals.set(sequenceId, (finals.get(sequenceId) ?? 0) + 1);
    }
    const ofB = reported(b).filter((r) => r.what === 'start');
    const starts = (list: Reported[], seq: string) => list.filter((r) => r.what === 'start' && r.sequenceId === seq);
    const problems: string[] = [];
    for (const s of sessions) {
      const seq = s.sequences[0]!.sequenceId;
      const [byA, byB] = [starts(ofA, seq), starts(ofB, seq)];
      if (finals.get(seq) !== 1) problems.push(`${s.name}: ${finals.get(seq) ?? 0} final results`);
      if (byA.length > 1 || byB.length > 1) problems.push(`${s.name}: started ${byA.length} times by a and ${byB.length} by b`);
      if (byA.length > 0 && byB.some((r) => r.at < killedAt)) problems.push(`${s.name}: b started it while a ran it`);
      if (byA.length + byB.length === 0) problems.push(`${s.name}: never started`);
      if (underWay.includes(seq) && byB.length !== 1) problems.push(`${s.name}: under way in a at the kill, not run again by b`);
    }
    expect(problems).toEqual([]);
    // Those a had handed back and b never started were stored by a and ended by b from its result
    // (a's status writes waited on the lock until it died): the case must have come up.
    const endedFromStored = [...ranByA].filter((seq) => !ofB.some((r) => r.sequenceId === seq));
    expect(endedFromStored.length).toBeGreaterThan(0);
    const again = [...startedByA].filter((seq) => ofB.some((r) => r.sequenceId === seq));
    console.log(`session crash test: ${sessions.length} sessions; a started ${startedByA.size} runs (${underWay.length} under way at the kill, ${ranByA.size} handed back), b ${ofB.length}; `
      + `${again.length} run again, ${endedFromStored.length} ended from a's stored result; the last session ended ${Math.max(...sessions.map((s) => Date.parse(s.stoppedAt!))) - killedAt} ms after the kill`);
  }, 90_000);

  it('a session whose run never answers ends TIMED_OUT within its time limit and a lease, naming the cause', async () => {
    const { host, accountId, engine } = await setup('hang');
    const hang = await host.checks.create(accountId, 'TCP', { name: 'hang-forever', request: { hostname: '127.0.0.1', port: 1 }, frequency: 1440 });
    const fine = await host.checks.create(accountId, 'TCP', { name: 'after-the-hang', request: { hostname: '127.0.0.1', port: 1 }, frequency: 1440 });
    const child = await engine('engine-hang', { HANG_PREFIX: 'hang-', RUN_MS: '50-100' });

    const triggeredAt = Date.now();
    const [session] = (await host.checkSessions.trigger(accountId, { target: { checkId: [hang.id] } })).sessions;
    await child.waitFor(new RegExp(`^start ${hang.id} `, 'm'), 10_000);
    const waited = await host.checkSessions.completion(accountId, session!.checkSessionId, { maxWaitSeconds: '30' });
    const endedAfter = Date.now() - triggeredAt;
    expect(waited.done).toBe(true);
    expect(endedAfter).toBeLessThan(TIME_LIMIT_MS + LEASE_MS + SLACK_MS);
    // The attempt loses its race against the runner's time limit (a retry would outlive the lease).
    const ended = waited.session;
    expect(ended).toMatchObject({ status: 'TIMED_OUT', sequences: [{ status: 'TIMED_OUT' }] });
    expect(ended.stoppedAt).not.toBeNull();
    const finals = ended.results.filter((r) => r.resultType === 'FINAL');
    expect(finals).toHaveLength(1);
    expect(finals[0]).toMatchObject({ sequenceId: ended.sequences[0]!.sequenceId, hasFailures: true });
    expect(finals[0]!.errorMessage).toBe('The run did not finish within its time limit of 3 s');

    // The hung runner holds no slot of the engine: the next session runs and passes.
    const [next] = (await host.checkSessions.trigger(accountId, { target: { checkId: [fine.id] } })).sessions;
    const after = await host.checkSessions.completion(accountId, next!.checkSessionId, { maxWaitSeconds: '20' });
    expect(after).toMatchObject({ done: true, session: { status: 'PASSED' } });

    const exited = child.exited();
    child.process.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  }, 60_000);
});
