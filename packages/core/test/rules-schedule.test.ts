import { describe, expect, it } from 'vitest';
import {
  frequencyOffsetError, isValidFrequencyOffset, maxFrequencyOffset, offsetToPhaseMs, periodMs,
} from '../src/rules/frequency-offset.js';
import {
  candidateLocations, checkPhaseMs, defaultPhaseMs, isPrivateLocation, nextRunAt, previousRunAt,
  selectRunLocations, servedLocations, servesLocation, slotIndex,
} from '../src/rules/schedule.js';

describe('frequencyOffset rules', () => {
  it.each([
    [0, 9, false], [0, 10, true], [0, 15, false], [0, 20, true], [0, 30, true], [0, 31, false],
    [1, 0, false], [1, 1, true], [1, 10, true], [1, 11, false],
    [5, 50, true], [5, 51, false], [60, 600, true], [60, 601, false],
    [120, 2, true], [120, 3, false], [720, 12, true], [720, 13, false], [1440, 24, true], [1440, 25, false],
    [10, 1.5, false],
  ])('frequency %i with offset %s: valid %s', (frequency, offset, valid) => {
    expect(isValidFrequencyOffset(frequency, offset)).toBe(valid);
    expect(frequencyOffsetError(frequency, offset) === null).toBe(valid);
  });

  it('names the allowed range in its message', () => {
    expect(frequencyOffsetError(720, 13)).toBe('must be between 1 and 12 when frequency is 720');
    expect(frequencyOffsetError(0, 15)).toBe('must be 10, 20 or 30 when frequency is 0');
    expect(frequencyOffsetError(5, 2.5)).toBe('must be an integer');
    expect([0, 5, 60, 180].map(maxFrequencyOffset)).toEqual([30, 50, 600, 3]);
  });

  it('offsets are 6-second units up to 60 minutes and hours above; frequency 0 runs every offset seconds', () => {
    expect(offsetToPhaseMs(5, 10)).toBe(60_000);
    expect(offsetToPhaseMs(720, 3)).toBe(3 * 3_600_000);
    expect(offsetToPhaseMs(0, 20)).toBe(0);
    expect(periodMs(0, 20)).toBe(20_000);
    expect(periodMs(0, null)).toBe(10_000);
    expect(periodMs(15)).toBe(900_000);
  });
});

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
