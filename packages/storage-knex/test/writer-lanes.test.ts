// SQLite's one writer serves an alert's writes (a step that queues alerts, a tick) ahead of the
// bookkeeping that was queued before them; the rest keeps the order it was asked in, gets the
// writer at least once in nine hand-overs, and a wait for the writer ends as knex's own would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AlertState, ScheduleEntry } from '@vigil/core';
import { outboxMessageFixture } from '@vigil/core/testing';
import knexFactory from 'knex';
import { knexStorage } from '../src/index.js';
import { holdWrite } from './support/hold-write.js';
import { prioritizeWriter } from '../src/writer-lanes.js';

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const dir = mkdtempSync(join(tmpdir(), 'vigil-writer-lanes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const entry = (kind: ScheduleEntry['kind'], checkId: string): ScheduleEntry => ({
  kind, accountId: ACCOUNT, checkId, location: kind === 'run' ? 'us-east-1' : '', dueAt: '2026-05-01T12:00:00.000Z',
});
const failing = { status: 'FAILING' } as unknown as AlertState;

describe('SQLite\'s writer', () => {
  it('writes an alert\'s step and tick before the bookkeeping queued ahead of them, and the bookkeeping in its order', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    await storage.migrate();
    const { release } = await holdWrite(storage);
    const order: string[] = [];
    const done = (name: string) => () => void order.push(name);
    const writes = [
      storage.schedule.upsert(entry('run', 'check-1')).then(done('run 1')),
      storage.alertStates.transition(ACCOUNT, 'check-2', null, failing, []).then(done('quiet step 2')),
      storage.schedule.upsert(entry('alert-tick', 'check-3')).then(done('tick 3')),
      storage.alertStates.transition(ACCOUNT, 'check-3', null, failing, [outboxMessageFixture(ACCOUNT, { checkId: 'check-3' })]).then(done('step 3')),
      storage.schedule.upsert(entry('run', 'check-4')).then(done('run 4')),
    ];
    // Every write is waiting for the writer before it is let go.
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual([]);
    await release();
    await Promise.all(writes);
    // A step that queues no alert is bookkeeping.
    expect(order).toEqual(['tick 3', 'step 3', 'run 1', 'quiet step 2', 'run 4']);
    expect((await storage.outbox.pending(ACCOUNT)).map((m) => m.checkId)).toEqual(['check-3']);
    expect((await storage.alertStates.get(ACCOUNT, 'check-3'))?.status).toBe('FAILING');
    expect((await storage.schedule.list(ACCOUNT, 'check-4')).map((e) => e.kind)).toEqual(['run']);
    await storage.close();
  });

  it('gives the bookkeeping the writer once after eight alerts in a row', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    await storage.migrate();
    const { release } = await holdWrite(storage);
    const order: string[] = [];
    const writes = [
      ...[1, 2].map((i) => storage.schedule.upsert(entry('run', `check-${i}`)).then(() => void order.push(`run ${i}`))),
      ...Array.from({ length: 10 }, (_, i) => storage.schedule.upsert(entry('alert-tick', `check-${i}`)).then(() => void order.push(`tick ${i}`))),
    ];
    await new Promise((r) => setTimeout(r, 50));
    await release();
    await Promise.all(writes);
    expect(order).toEqual(['tick 0', 'tick 1', 'tick 2', 'tick 3', 'tick 4', 'tick 5', 'tick 6', 'tick 7', 'run 1', 'tick 8', 'tick 9', 'run 2']);
    await storage.close();
  });

  it('fails a write that waits longer than knex\'s acquire timeout, as knex would, and serves the next one', async () => {
    const storage = knexStorage({ knex: knexFactory({
      client: 'sqlite3', connection: { filename: join(dir, `db-${++n}.sqlite`) }, useNullAsDefault: true, acquireConnectionTimeout: 300, pool: { min: 1, max: 1 },
    }) });
    prioritizeWriter(storage.knex);
    await storage.migrate();
    const { release } = await holdWrite(storage);
    // A store error says the database cannot be reached (503), not a hang.
    await expect(storage.schedule.upsert(entry('run', 'check-1'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await release();
    await storage.schedule.upsert(entry('alert-tick', 'check-1'));
    expect((await storage.schedule.list(ACCOUNT, 'check-1')).map((e) => e.kind)).toEqual(['alert-tick']);
    await storage.knex.destroy();
  });

  it('fails the writes still waiting when the store is closed, at once', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    await storage.migrate();
    const { release } = await holdWrite(storage);
    const waiting = [storage.schedule.upsert(entry('run', 'check-1')), storage.schedule.upsert(entry('alert-tick', 'check-2'))];
    for (const w of waiting) w.catch(() => {});
    const started = Date.now();
    const closing = storage.close();
    await release();
    await closing;
    for (const w of waiting) await expect(w).rejects.toThrow(/Unable to acquire a connection|aborted/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('goes on serving after a write that failed', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, `db-${++n}.sqlite`) });
    await storage.migrate();
    await expect(storage.knex('no_such_table').insert({ a: 1 })).rejects.toThrow(/no_such_table/);
    await expect(storage.knex.transaction(async (trx) => {
      await trx('vigil_checks').where('id', 'none').update({ name: 'x' });
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    await storage.alertStates.transition(ACCOUNT, 'check-1', null, failing, []);
    await storage.schedule.upsert(entry('run', 'check-1'));
    expect((await storage.alertStates.get(ACCOUNT, 'check-1'))?.status).toBe('FAILING');
    await storage.close();
  });
});
