import { describe, expect, it } from 'vitest';
import { compactCopy, SharingStats } from '../src/testing/memory-compact.js';
import { MemoryTable } from '../src/testing/memory-table.js';

describe('the in-memory store keeps rows compactly', () => {
  const settings = () => ({ escalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 }, tags: ['a', 'b'] });

  it('keeps equal plain members of different rows once, frozen', () => {
    const a = compactCopy({ id: 'a', settings: settings(), locations: [] as string[] });
    const b = compactCopy({ id: 'b', settings: settings(), locations: [] as string[] });
    expect(a.settings).toBe(b.settings);
    expect(a.locations).toBe(b.locations);
    expect(Object.isFrozen(a.settings.escalation)).toBe(true);
    // The row itself is the store's own: its members can be changed in place (a lease, a delivery time).
    expect(a).not.toBe(b);
    expect(Object.isFrozen(a)).toBe(false);
  });

  it('keeps members that differ, or differ in member order, apart and equal to what was given', () => {
    const a = compactCopy({ m: { x: 1, y: 2 } });
    const b = compactCopy({ m: { y: 2, x: 1 } });
    const c = compactCopy({ m: { x: 1, y: 3 } });
    expect(Object.keys(b.m)).toEqual(['y', 'x']);
    expect(a.m).not.toBe(b.m);
    expect(c.m).toEqual({ x: 1, y: 3 });
  });

  it('copies members JSON cannot hold (dates, bytes, undefined, -0) as they are', () => {
    const at = new Date('2026-11-27T01:00:00.000Z');
    const row = compactCopy({ d: { at }, bytes: new Uint8Array([1, 2]), u: { v: undefined }, z: [-0], top: undefined });
    expect(row.d.at).toBeInstanceOf(Date);
    expect(row.d.at.getTime()).toBe(at.getTime());
    expect(row.d.at).not.toBe(at);
    expect(row.bytes).toBeInstanceOf(Uint8Array);
    expect([...row.bytes]).toEqual([1, 2]);
    expect('v' in row.u).toBe(true);
    expect(Object.is(row.z[0], -0)).toBe(true);
    expect('top' in row).toBe(true);
  });

  it('answers copies a caller may change without changing the store or rows that share a member', () => {
    const table = new MemoryTable<{ id: string; accountId: string; settings: ReturnType<typeof settings> }>('t');
    table.add('a', { id: 'a', accountId: 'x', settings: settings() });
    table.add('b', { id: 'b', accountId: 'x', settings: settings() });
    const read = table.get('x', 'a')!;
    read.settings.escalation.failedRunThreshold = 9;
    read.settings.tags.push('c');
    expect(table.get('x', 'a')!.settings).toEqual(settings());
    expect(table.get('x', 'b')!.settings).toEqual(settings());
  });

  it('stops looking up a member that is seldom found shared, and keeps sharing the ones that are', () => {
    const stats = new SharingStats();
    const rows = Array.from({ length: 300 }, (_, i) => compactCopy({ id: i, settings: settings(), recent: [`run-${i}`, `run-${i + 1}`] }, stats));
    expect(stats.shares('recent')).toBe(false);
    expect(stats.shares('settings')).toBe(true);
    expect(rows[299]!.settings).toBe(rows[0]!.settings);
    // Past its trial the member is the row's own plain copy: equal to what was given, neither frozen nor shared.
    const given = ['run-x'];
    const a = compactCopy({ recent: given }, stats);
    const b = compactCopy({ recent: ['run-x'] }, stats);
    expect(a.recent).toEqual(given);
    expect(a.recent).not.toBe(given);
    expect(a.recent).not.toBe(b.recent);
    expect(Object.isFrozen(a.recent)).toBe(false);
    // Before it, the same member is still looked up and shared.
    expect(compactCopy({ recent: ['run-x'] }).recent).toBe(compactCopy({ recent: ['run-x'] }).recent);
  });

  it('keeps a table\'s rows equal to what was written once a member is no longer looked up', () => {
    const table = new MemoryTable<{ id: string; accountId: string; recent: string[] }>('t');
    for (let i = 0; i < 300; i++) table.put(`c${i % 10}`, { id: `c${i % 10}`, accountId: 'x', recent: [`r${i}`] });
    expect(table.get('x', 'c9')!.recent).toEqual(['r299']);
    const read = table.get('x', 'c9')!;
    read.recent.push('changed');
    expect(table.get('x', 'c9')!.recent).toEqual(['r299']);
  });
});
