/**
 * The frequencyOffset rules of the spec (TCP and API checks):
 * - frequency 0: the offset is 10, 20 or 30 and means a run every that many seconds;
 * - frequency 1..60: 1..floor(frequency * 10), in units of 6 seconds;
 * - frequency above 60: 1..ceil(frequency / 60), in units of one hour.
 */
export const SUB_MINUTE_OFFSETS = [10, 20, 30] as const;

/** The largest offset a frequency allows (for frequency 0, the largest interval in seconds). */
export function maxFrequencyOffset(frequency: number): number {
  if (frequency === 0) return 30;
  if (frequency <= 60) return Math.floor(frequency * 10);
  return Math.ceil(frequency / 60);
}

/** Why `offset` is not allowed with `frequency`, or null when it is. */
export function frequencyOffsetError(frequency: number, offset: number): string | null {
  if (!Number.isInteger(offset)) return 'must be an integer';
  if (frequency === 0) {
    return (SUB_MINUTE_OFFSETS as readonly number[]).includes(offset)
      ? null
      : 'must be 10, 20 or 30 when frequency is 0';
  }
  const max = maxFrequencyOffset(frequency);
  if (offset < 1 || offset > max) return `must be between 1 and ${max} when frequency is ${frequency}`;
  return null;
}

export function isValidFrequencyOffset(frequency: number, offset: number): boolean {
  return frequencyOffsetError(frequency, offset) === null;
}

/**
 * How far into each period an offset places a run, in milliseconds. Frequency 0 has no phase:
 * its offset is the interval itself.
 */
export function offsetToPhaseMs(frequency: number, offset: number): number {
  if (frequency === 0) return 0;
  if (frequency <= 60) return offset * 6_000;
  return offset * 3_600_000;
}

/** The period between two runs in milliseconds. */
export function periodMs(frequency: number, offset?: number | null): number {
  if (frequency === 0) return (offset ?? 10) * 1_000;
  return frequency * 60_000;
}
