import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { storedSlotResult } from '../src/engine/result-sink.js';
import { legacySlotResultId, slotIdDueAt, slotResultId } from '../src/engine/run-spec.js';
import { checkResultFixture, memoryStorage } from '../src/testing/index.js';

const due = new Date('2026-05-01T12:00:00.000Z');

describe('slot ids', () => {
  it('carry their due time (UUID version 7 layout) and are the same in every process', () => {
    const id = slotResultId('check-1', 'eu-west-1', due, 1);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(slotIdDueAt(id)).toEqual(due);
    expect(slotResultId('check-1', 'eu-west-1', due, 1)).toBe(id);
    expect(new Set([slotResultId('check-1', 'eu-west-1', due, 2), slotResultId('check-1', 'us-east-1', due, 1), slotResultId('check-2', 'eu-west-1', due, 1)]).size).toBe(3);
    // Ids of other layouts carry no due time.
    expect(slotIdDueAt(legacySlotResultId('check-1', 'eu-west-1', due, 1))).toBeNull();
  });

  it('hash the due time as toISOString writes it, whatever day, millisecond or era it is', () => {
    // The id as the layout defines it, with the text formatted by toISOString itself.
    const reference = (checkId: string, at: Date) => {
      const t = at.getTime().toString(16).padStart(12, '0');
      const h = createHash('sha256').update(`${checkId}|eu-west-1|${at.toISOString()}|1`).digest('hex');
      return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${h.slice(0, 3)}-${((parseInt(h[3]!, 16) & 3) | 8).toString(16)}${h.slice(4, 7)}-${h.slice(7, 19)}`;
    };
    const times = [0, 1, 999, 86_399_999, 86_400_000, Date.UTC(2026, 4, 1, 23, 59, 59, 999), Date.UTC(2026, 4, 2), Date.UTC(2026, 4, 1, 9, 5, 7, 40), 253_402_300_799_999, 253_402_300_800_000];
    for (const ms of times) expect(slotResultId('check-1', 'eu-west-1', new Date(ms), 1)).toBe(reference('check-1', new Date(ms)));
    // Back and forth across midnight, as a batch of runs due on two days is.
    for (let i = 0; i < 200; i++) {
      const at = new Date(Date.UTC(2026, 4, 1, 23, 58) + (i % 2) * 3 * 60_000 + i * 37);
      expect(slotResultId(`c${i}`, 'eu-west-1', at, 1)).toBe(reference(`c${i}`, at));
    }
  });

  it('a slot stored before the layout changed is found by its older ids, so it is not run and stored again', async () => {
    const storage = memoryStorage();
    expect(await storedSlotResult(storage, 'acct', 'check-1', 'eu-west-1', due)).toBeNull();
    const attempt = checkResultFixture('check-1', { id: legacySlotResultId('check-1', 'eu-west-1', due, 1), runLocation: 'eu-west-1', resultType: 'ATTEMPT', hasFailures: true });
    const final = checkResultFixture('check-1', { id: legacySlotResultId('check-1', 'eu-west-1', due, 2), runLocation: 'eu-west-1', attempts: 2 });
    await storage.checkResults.insertMany('acct', [attempt, final]);
    expect((await storedSlotResult(storage, 'acct', 'check-1', 'eu-west-1', due))?.id).toBe(final.id);
    // A slot of the new layout is found by its own ids first.
    const fresh = checkResultFixture('check-1', { id: slotResultId('check-1', 'us-east-1', due, 1), runLocation: 'us-east-1' });
    await storage.checkResults.insertMany('acct', [fresh]);
    expect((await storedSlotResult(storage, 'acct', 'check-1', 'us-east-1', due))?.id).toBe(fresh.id);
  });
});
