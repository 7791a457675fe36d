import { describe, expect, it } from 'vitest';
import {
  SUB_MINUTE_OFFSETS, frequencyOffsetError, isValidFrequencyOffset, maxFrequencyOffset, offsetToPhaseMs, periodMs,
} from '../src/rules/frequency-offset.js';

describe('frequencyOffset: which offsets a frequency allows', () => {
  it.each([
    [0, 9, false], [0, 10, true], [0, 15, false], [0, 20, true], [0, 30, true], [0, 31, false], [0, 0, false],
    [1, 0, false], [1, 1, true], [1, 10, true], [1, 11, false],
    [5, 0, false], [5, 1, true], [5, 50, true], [5, 51, false],
    [60, 0, false], [60, 1, true], [60, 600, true], [60, 601, false],
    [120, 0, false], [120, 1, true], [120, 2, true], [120, 3, false],
    [720, 0, false], [720, 12, true], [720, 13, false],
    [1440, 0, false], [1440, 1, true], [1440, 24, true], [1440, 25, false],
    [10, -1, false],
  ])('frequency %i with offset %i: valid %s', (frequency, offset, valid) => {
    expect(isValidFrequencyOffset(frequency, offset)).toBe(valid);
    expect(frequencyOffsetError(frequency, offset) === null).toBe(valid);
  });

  it.each([[0, 10.5], [1, 1.5], [60, 599.9], [1440, 23.5], [5, Number.NaN]])(
    'frequency %i rejects the non-integer offset %d',
    (frequency, offset) => {
      expect(frequencyOffsetError(frequency, offset)).toBe('must be an integer');
    },
  );

  it('names the allowed values in its message', () => {
    expect(frequencyOffsetError(0, 15)).toBe('must be 10, 20 or 30 when frequency is 0');
    expect(frequencyOffsetError(1, 0)).toBe('must be between 1 and 10 when frequency is 1');
    expect(frequencyOffsetError(60, 601)).toBe('must be between 1 and 600 when frequency is 60');
    expect(frequencyOffsetError(720, 13)).toBe('must be between 1 and 12 when frequency is 720');
    expect(SUB_MINUTE_OFFSETS).toEqual([10, 20, 30]);
  });

  it('the maximum is frequency*10 up to 60 minutes and ceil(frequency/60) hours above', () => {
    expect([0, 1, 5, 10, 60, 120, 180, 720, 1440].map(maxFrequencyOffset)).toEqual([30, 10, 50, 100, 600, 2, 3, 12, 24]);
  });
});

describe('frequencyOffset: where runs fall', () => {
  it('up to 60 minutes an offset is 6-second units; above, whole hours; frequency 0 has no phase', () => {
    expect(offsetToPhaseMs(1, 1)).toBe(6_000);
    expect(offsetToPhaseMs(5, 10)).toBe(60_000);
    expect(offsetToPhaseMs(60, 600)).toBe(3_600_000);
    expect(offsetToPhaseMs(120, 1)).toBe(3_600_000);
    expect(offsetToPhaseMs(720, 3)).toBe(3 * 3_600_000);
    expect(offsetToPhaseMs(0, 20)).toBe(0);
  });

  it('the period is the frequency in minutes, or for frequency 0 the offset in seconds (default 10)', () => {
    expect(periodMs(1)).toBe(60_000);
    expect(periodMs(15, 3)).toBe(900_000);
    expect(periodMs(1440)).toBe(86_400_000);
    expect(periodMs(0, 10)).toBe(10_000);
    expect(periodMs(0, 30)).toBe(30_000);
    expect(periodMs(0, null)).toBe(10_000);
    expect(periodMs(0)).toBe(10_000);
  });
});
