// The writes every scheduled run makes on PostgreSQL (its narrow result row, its status's and alert
// state's compare-and-set, its schedule entry's completion) run as named statements prepared once
// per connection of the store's own pool: they write what they wrote through knex, a stale
// compare-and-set still writes nothing, a run stored twice is still a conflict, a statement the
// server no longer has is sent once more, and `preparedStatements: false` sends them unnamed.
import { ConflictError, slotResultId, type AlertState, type CheckStatus, type ScheduleEntry } from '@vigil/core';
import { alertStateFixture, checkResultFixture, checkStatusFixture, outboxMessageFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { onOwnedPgStore, PG_URL } from './support/fresh-store.js';

const ACCOUNT = '0a6c1f2e-5555-4a1b-8c1d-000000000001';
const DUE = Date.parse('2026-05-01T10:00:00.000Z');
const MINUTE = 60_000;

/** A passing scheduled TCP run of `checkId`, due `minutes` after DUE. */
const run = (checkId: string, minutes: number) => {
  const due = new Date(DUE + minutes * MINUTE);
  const at = (ms: number) => new Date(due.getTime() + ms).toISOString();
  return checkResultFixture(checkId, {
    id: slotResultId(checkId, 'us-east-1', due, 1), runLocation: 'us-east-1', startedAt: at(5), stoppedAt: at(85), created_at: at(85),
    responseTime: 80, phases: { dns: 10, connection: 30, data: 40, total: 80 }, details: { response: 'PONG', errorCode: null },
  });
};

const entry = (checkId: string, minutes: number): ScheduleEntry => ({
  kind: 'run', accountId: ACCOUNT, checkId, location: 'us-east-1', dueAt: new Date(DUE + minutes * MINUTE).toISOString(),
});

/** The named statements of the store's one connection, by the table each writes (updates and inserts only). */
async function preparedWrites(storage: KnexStorage, prefix: string): Promise<string[]> {
  const rows = (await storage.knex.raw("select statement from pg_prepared_statements where name like 'vigil_%'")).rows as { statement: string }[];
  return rows
    .map((r) => /^(update|insert into|delete from) "([^"]+)"/.exec(r.statement))
    .filter((m) => m !== null)
    .map((m) => `${m[1]} ${m[2]!.slice(prefix.length)}`)
    .sort();
}

/**
 * The writes of one scheduled run, three times, as the engine makes them: the result, the status, the
 * alert state, the schedule entry. Answers the results stored and the entry's next due time.
 */
async function threeRuns(storage: KnexStorage) {
  await storage.schedule.upsert(entry('check-1', 0));
  let status: CheckStatus | null = null;
  let state: AlertState | null = null;
  for (const minutes of [0, 1, 2]) {
    if (minutes > 0) await storage.schedule.upsert(entry('check-1', minutes));
    const [job] = await storage.schedule.claimDue(new Date(DUE + minutes * MINUTE), {}, 10, 30_000, 'engine-1');
    expect(job?.checkId).toBe('check-1');
    await storage.checkResults.insertMany(ACCOUNT, [run('check-1', minutes)]);
    const nextStatus = checkStatusFixture('check-1', { name: `run ${minutes}`, longestRun: 80 + minutes });
    expect(await storage.checkStatuses.replace(ACCOUNT, status, nextStatus)).toBe(true);
    status = { ...nextStatus, accountId: ACCOUNT };
    const nextState = alertStateFixture({ consecutiveFailures: 0, lastRunId: run('check-1', minutes).id });
    expect(await storage.alertStates.transition(ACCOUNT, 'check-1', state, nextState, [])).toBe(true);
    state = nextState;
    expect(await storage.schedule.complete(job!, new Date(DUE + (minutes + 1) * MINUTE))).toBe(true);
  }
  return { status: status!, state: state! };
}

describe.runIf(PG_URL)('PostgreSQL: the writes of every run on named prepared statements', () => {
  it('are prepared once per connection and write as through knex; a stale compare-and-set writes nothing', async () => {
    // One connection: the writes and the look at its prepared statements share it.
    await onOwnedPgStore('prepwrites', { pool: { min: 0, max: 1 } }, async (storage, prefix) => {
      const { state } = await threeRuns(storage);
      // The narrow insert of a check this process has stored before, the two compare-and-sets
      // (the first of each is an insert) and the schedule entry's completion.
      expect(await preparedWrites(storage, prefix)).toEqual([
        'insert into check_runs_tcp', 'update alert_states', 'update check_statuses', 'update schedule',
      ]);
      const results = await storage.checkResults.listByCheck(ACCOUNT, 'check-1', { limit: 10, offset: 0 });
      expect(results.items.map((r) => r.id).sort()).toEqual([0, 1, 2].map((m) => run('check-1', m).id).sort());
      expect((await storage.checkStatuses.get(ACCOUNT, 'check-1'))?.name).toBe('run 2');
      expect(await storage.alertStates.get(ACCOUNT, 'check-1')).toEqual(state);
      expect((await storage.schedule.list(ACCOUNT, 'check-1')).map((e) => e.dueAt)).toEqual([new Date(DUE + 3 * MINUTE).toISOString()]);
      // A stale expected value writes nothing through the prepared statements.
      const stale = { ...checkStatusFixture('check-1', { name: 'stale' }), accountId: ACCOUNT };
      expect(await storage.checkStatuses.replace(ACCOUNT, stale, checkStatusFixture('check-1', { name: 'lost' }))).toBe(false);
      expect(await storage.alertStates.transition(ACCOUNT, 'check-1', alertStateFixture({ consecutiveFailures: 9 }), alertStateFixture(), [])).toBe(false);
      expect((await storage.checkStatuses.get(ACCOUNT, 'check-1'))?.name).toBe('run 2');
      expect(await storage.alertStates.get(ACCOUNT, 'check-1')).toEqual(state);
      // The completed entry is free to claim (its lease cleared) at its next due time.
      const [job] = await storage.schedule.claimDue(new Date(DUE + 3 * MINUTE), {}, 10, 30_000, 'engine-2');
      expect([job?.checkId, job?.reclaimed]).toEqual(['check-1', false]);
      // A job whose entry moved while it ran (a changed check) keeps the move and loses its lease.
      await storage.schedule.upsert(entry('check-1', 10));
      expect(await storage.schedule.complete(job!, new Date(DUE + 4 * MINUTE))).toBe(true);
      expect((await storage.schedule.list(ACCOUNT, 'check-1')).map((e) => e.dueAt)).toEqual([new Date(DUE + 10 * MINUTE).toISOString()]);
      const [moved] = await storage.schedule.claimDue(new Date(DUE + 10 * MINUTE), {}, 10, 30_000, 'engine-3');
      expect([moved?.checkId, moved?.reclaimed]).toEqual(['check-1', false]);
      // Another owner's job completes nothing; a job with no next run removes its entry.
      expect(await storage.schedule.complete(job!, new Date(DUE + 20 * MINUTE))).toBe(false);
      expect(await storage.schedule.complete(moved!, null)).toBe(true);
      expect(await storage.schedule.list(ACCOUNT, 'check-1')).toEqual([]);
      expect(await preparedWrites(storage, prefix)).toContain('delete from schedule');
      // A run stored twice is a conflict, as through knex.
      await expect(storage.checkResults.insertMany(ACCOUNT, [run('check-1', 2)])).rejects.toBeInstanceOf(ConflictError);
      // A step that queues an alert writes its compare-and-set inside its transaction, on the
      // transaction's connection (on a pool of one, a statement sent past it would wait for ever).
      const failing = alertStateFixture({ consecutiveFailures: 1, lastRunId: 'failed-run' });
      const alert = outboxMessageFixture(ACCOUNT, { checkId: 'check-1' });
      expect(await storage.alertStates.transition(ACCOUNT, 'check-1', state, failing, [alert])).toBe(true);
      expect(await storage.alertStates.get(ACCOUNT, 'check-1')).toEqual(failing);
      expect((await storage.outbox.claim(new Date('2030-01-01'), 10, 30_000, 'sender')).map((m) => m.id)).toEqual([alert.id]);
    });
  });

  it('answer as before when writers meet: of compare-and-sets from one status on several connections, one writes', async () => {
    await onOwnedPgStore('prepwrites', { pool: { min: 0, max: 4 } }, async (storage) => {
      const { status } = await threeRuns(storage);
      const racers = await Promise.all(['a', 'b', 'c', 'd'].map((name) => storage.checkStatuses.replace(ACCOUNT, status, checkStatusFixture('check-1', { name }))));
      expect(racers.filter(Boolean)).toHaveLength(1);
      expect((await storage.checkStatuses.get(ACCOUNT, 'check-1'))?.name).toBe(['a', 'b', 'c', 'd'][racers.indexOf(true)]);
    });
  });

  it('send a statement once more when the server no longer has it (a pooler moved the session)', async () => {
    await onOwnedPgStore('prepwrites', { pool: { min: 0, max: 1 } }, async (storage) => {
      const { status } = await threeRuns(storage);
      await storage.knex.raw('DEALLOCATE ALL');
      await storage.checkResults.insertMany(ACCOUNT, [run('check-1', 3)]);
      const next = checkStatusFixture('check-1', { name: 'after the session moved' });
      expect(await storage.checkStatuses.replace(ACCOUNT, status, next)).toBe(true);
      expect((await storage.checkStatuses.get(ACCOUNT, 'check-1'))?.name).toBe('after the session moved');
      expect((await storage.checkResults.listByCheck(ACCOUNT, 'check-1', { limit: 10, offset: 0 })).total).toBe(4);
    });
  });

  it('are sent unnamed with preparedStatements: false', async () => {
    await onOwnedPgStore('prepwrites', { pool: { min: 0, max: 1 }, preparedStatements: false }, async (storage, prefix) => {
      await threeRuns(storage);
      expect(await preparedWrites(storage, prefix)).toEqual([]);
      expect((await storage.checkStatuses.get(ACCOUNT, 'check-1'))?.name).toBe('run 2');
    });
  });
});
