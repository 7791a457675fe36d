// A check's schedule entries are found through the schedule's key (kind, check, location, ref):
// every write of a check replaces its entries, and a group's write those of each member, so a
// read of the whole schedule there would cost as much as the schedule is big, once per check.
import type { ScheduleEntry } from '@vigil/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';
import { captured, planOf, readsWholeTable } from './support/plans.js';

const ACCOUNT = '0a6c1f2e-2222-4a1b-8c1d-000000000001';
const DUE = '2026-05-01T12:00:00.000Z';
const entry = (kind: ScheduleEntry['kind'], checkId: string, location = ''): ScheduleEntry => ({ kind, accountId: ACCOUNT, checkId, location, dueAt: DUE });

let storage: KnexStorage | null = null;
afterEach(async () => {
  await storage?.close();
  storage = null;
});

describe.each(STORES)('a check\'s schedule entries on %s', (kind) => {
  it('are removed and listed through the key, not by reading the whole schedule', async () => {
    const s = (storage = await freshStore(kind, 'vigil_schedkey'));
    const entries: ScheduleEntry[] = [];
    for (let i = 0; i < 2_000; i++) entries.push(entry('run', `check-${i}`, 'us-east-1'), entry('run', `check-${i}`, 'eu-west-1'));
    entries.push(entry('alert-tick', 'check-7'), entry('certificate', 'check-7'), entry('retention', ''));
    const session: ScheduleEntry = { ...entry('session', 'check-7', 'us-east-1'), session: { checkSessionId: 'cs-1', sequenceId: 'seq-1' } };
    await s.schedule.ensure([...entries, session]);
    if (kind === 'postgres') await s.knex.raw('ANALYZE vigil_schedule');
    const { result: listed, statements: seen } = await captured(s, async () => {
      const entries = await s.schedule.list(ACCOUNT, 'check-7');
      await s.schedule.remove(ACCOUNT, 'check-7');
      return entries;
    });
    expect(listed.map((e) => `${e.kind} ${e.location}`)).toEqual(['alert-tick ', 'certificate ', 'run eu-west-1', 'run us-east-1', 'session us-east-1']);
    // A session's run stays; the check's other entries go, and no other check's.
    expect((await s.schedule.list(ACCOUNT, 'check-7')).map((e) => e.kind)).toEqual(['session']);
    expect(await s.schedule.list(ACCOUNT, 'check-8')).toHaveLength(2);
    const [list, remove] = seen.filter((q) => /schedule/.test(q.sql));
    expect(list!.sql).toMatch(/^select/);
    expect(remove!.sql).toMatch(/^delete/);
    expect(readsWholeTable(kind, await planOf(kind, s, list!))).toBe(false);
    expect(readsWholeTable(kind, await planOf(kind, s, remove!))).toBe(false);
  });
});
