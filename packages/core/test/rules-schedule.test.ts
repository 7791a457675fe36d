import { describe, expect, it } from 'vitest';
import {
  candidateLocations, checkPhaseMs, defaultPhaseMs, isPrivateLocation, nextRunAt, previousRunAt,
  selectRunLocations, servedLocations, servesLocation, slotIndex,
} from '../src/rules/schedule.js';

describe('next run time', () => {
  const id = '3f2b8a3c-1d4e-4f5a-9b6c-7d8e9f0a1b2c';

  it('runs at phase + k * period and answers the first run strictly after an instant', () => {
    const check = { id, frequency: 5, frequencyOffset: 10 }; // 60 s into each 5-minute period
    expect(nextRunAt(check, new Date('2026-05-01T12:00:00Z')).toISOString()).toBe('2026-05-01T12:01:00.000Z');
    expect(nextRunAt(check, new Date('2026-05-01T12:01:00Z')).toISOString()).toBe('2026-05-01T12:06:00.000Z');
    expect(previousRunAt(check, new Date('2026-05-01T12:05:59Z')).toISOString()).toBe('2026-05-01T12:01:00.000Z');
    expect(slotIndex(check, new Date('2026-05-01T12:06:00Z')) - slotIndex(check, new Date('2026-05-01T12:01:00Z'))).toBe(1);
  });

  it('frequency above 60 places runs on the offset hour; frequency 0 runs every 10/20/30 s', () => {
    expect(nextRunAt({ id, frequency: 1440, frequencyOffset: 3 }, new Date('2026-05-01T12:00:00Z')).toISOString()).toBe('2026-05-02T03:00:00.000Z');
    const fast = { id, frequency: 0, frequencyOffset: 20 };
    const a = nextRunAt(fast, new Date('2026-05-01T12:00:00Z'));
    expect(nextRunAt(fast, a).getTime() - a.getTime()).toBe(20_000);
  });

  it('without an offset the phase comes from the id: stable, and inside the period', () => {
    const check = { id, frequency: 10, frequencyOffset: null };
    expect(checkPhaseMs(check)).toBe(checkPhaseMs({ ...check }));
    expect(checkPhaseMs(check)).toBeGreaterThanOrEqual(0);
    expect(checkPhaseMs(check)).toBeLessThan(600_000);
    expect(defaultPhaseMs('a', 60_000)).not.toBe(defaultPhaseMs('b', 60_000));
  });

  it('a set offset wins over the id; without one, frequency 0 runs every 10 s at a phase from the id', () => {
    expect(checkPhaseMs({ id: 'a', frequency: 10, frequencyOffset: 5 })).toBe(30_000);
    expect(checkPhaseMs({ id: 'b', frequency: 10, frequencyOffset: 5 })).toBe(30_000);
    expect(checkPhaseMs({ id: 'a', frequency: 1, frequencyOffset: 10 })).toBe(0);
    const fast = { id, frequency: 0, frequencyOffset: null };
    expect(checkPhaseMs(fast)).toBe(defaultPhaseMs(id, 10_000));
    expect(checkPhaseMs(fast)).toBeLessThan(10_000);
    const first = nextRunAt(fast, new Date('2026-05-01T12:00:00Z'));
    expect(nextRunAt(fast, first).getTime() - first.getTime()).toBe(10_000);
    expect(first.getTime() % 10_000).toBe(checkPhaseMs(fast));
  });

  it('an instant 1 ms before a run gets that run; the run itself gets the next', () => {
    const check = { id, frequency: 1, frequencyOffset: 5 }; // 30 s into each minute
    expect(nextRunAt(check, new Date('2026-05-01T12:00:29.999Z')).toISOString()).toBe('2026-05-01T12:00:30.000Z');
    expect(nextRunAt(check, new Date('2026-05-01T12:00:30.000Z')).toISOString()).toBe('2026-05-01T12:01:30.000Z');
    expect(previousRunAt(check, new Date('2026-05-01T12:00:30.000Z')).toISOString()).toBe('2026-05-01T12:00:30.000Z');
    expect(previousRunAt(check, new Date('2026-05-01T12:00:29.999Z')).toISOString()).toBe('2026-05-01T11:59:30.000Z');
    const at = new Date('2026-05-01T12:00:30.000Z');
    expect(slotIndex(check, at)).toBe((at.getTime() - 30_000) / 60_000);
    expect(slotIndex(check, new Date(at.getTime() - 1))).toBe(slotIndex(check, at) - 1);
  });

  it('10,000 checks of one frequency spread over the period', () => {
    const buckets = new Array(60).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const phase = defaultPhaseMs(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, 60_000);
      buckets[Math.floor(phase / 1000)]++;
    }
    expect(buckets.filter((b) => b > 0).length).toBeGreaterThanOrEqual(55);
    expect(Math.max(...buckets)).toBeLessThan(3 * (10_000 / 60));
  });
});

describe('run locations', () => {
  it('round-robin by slot, all with runParallel, the default when none are chosen', () => {
    const input = { locations: ['eu-west-1', 'us-east-1'], privateLocations: ['dc-berlin'] };
    expect([0, 1, 2, 3, -1].map((slot) => selectRunLocations(input, slot, 'us-east-1')[0])).toEqual([
      'eu-west-1', 'us-east-1', 'dc-berlin', 'eu-west-1', 'dc-berlin',
    ]);
    expect(selectRunLocations({ ...input, runParallel: true }, 7, 'x')).toEqual(['eu-west-1', 'us-east-1', 'dc-berlin']);
    expect(selectRunLocations({ locations: [], privateLocations: null }, 3, 'ap-south-1')).toEqual(['ap-south-1']);
    expect(candidateLocations({ locations: ['eu-west-1', 'eu-west-1'] }, 'x')).toEqual(['eu-west-1']);
  });

  it('a process runs only the locations it serves; private ones are told apart from data centers', () => {
    expect(isPrivateLocation('eu-west-1')).toBe(false);
    expect(isPrivateLocation('dc-berlin')).toBe(true);
    const candidates = ['eu-west-1', 'us-east-1', 'dc-berlin', 'dc-paris'];
    expect(servedLocations(candidates, {})).toEqual(candidates);
    expect(servedLocations(candidates, { locations: 'all', privateLocations: [] })).toEqual(['eu-west-1', 'us-east-1']);
    expect(servedLocations(candidates, { locations: [], privateLocations: ['dc-paris'] })).toEqual(['dc-paris']);
    expect(servesLocation({ locations: ['us-east-1'] }, 'eu-west-1')).toBe(false);
  });
});
