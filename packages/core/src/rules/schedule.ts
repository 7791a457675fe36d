import { createHash } from 'node:crypto';
import { LOCATIONS } from '../model/primitives.js';
import { offsetToPhaseMs, periodMs } from './frequency-offset.js';

export interface ScheduledCheckInput {
  id: string;
  frequency: number;
  frequencyOffset?: number | null;
}

/**
 * A stable phase in [0, period) from the check id, so that many checks of one frequency spread
 * over the period instead of all starting at its first second.
 */
export function defaultPhaseMs(checkId: string, period: number): number {
  const digest = createHash('sha256').update(checkId).digest();
  // 48 bits are plenty to spread over any period up to a day in milliseconds.
  return digest.readUIntBE(0, 6) % period;
}

export function checkPeriodMs(check: ScheduledCheckInput): number {
  return periodMs(check.frequency, check.frequencyOffset);
}

/** The check's phase: from frequencyOffset when set (frequency > 0), else from its id. */
export function checkPhaseMs(check: ScheduledCheckInput): number {
  const period = checkPeriodMs(check);
  if (check.frequency > 0 && check.frequencyOffset) return offsetToPhaseMs(check.frequency, check.frequencyOffset) % period;
  return defaultPhaseMs(check.id, period);
}

/** The run number of the slot at or before `at` (runs fall at phase + k * period since the epoch). */
export function slotIndex(check: ScheduledCheckInput, at: Date): number {
  return Math.floor((at.getTime() - checkPhaseMs(check)) / checkPeriodMs(check));
}

/** The first run strictly after `after`. */
export function nextRunAt(check: ScheduledCheckInput, after: Date): Date {
  const period = checkPeriodMs(check);
  const phase = checkPhaseMs(check);
  const k = Math.floor((after.getTime() - phase) / period) + 1;
  return new Date(phase + k * period);
}

/** The last run at or before `at`. */
export function previousRunAt(check: ScheduledCheckInput, at: Date): Date {
  const period = checkPeriodMs(check);
  const phase = checkPhaseMs(check);
  return new Date(phase + Math.floor((at.getTime() - phase) / period) * period);
}

export interface LocationChoiceInput {
  locations?: readonly string[] | null;
  privateLocations?: readonly string[] | null;
  runParallel?: boolean | null;
}

/** Every location a check may run in: data-center ones, then private ones; the default if none. */
export function candidateLocations(input: LocationChoiceInput, defaultLocation: string): string[] {
  const all = [...new Set([...(input.locations ?? []), ...(input.privateLocations ?? [])])];
  return all.length > 0 ? all : [defaultLocation];
}

/**
 * Where the run of a slot goes: every candidate with runParallel, else one, rotating round-robin by
 * slot number, so no state is needed to rotate.
 */
export function selectRunLocations(input: LocationChoiceInput, slot: number, defaultLocation: string): string[] {
  const candidates = candidateLocations(input, defaultLocation);
  if (input.runParallel) return candidates;
  const n = candidates.length;
  return [candidates[((slot % n) + n) % n]!];
}

export interface ServesInput {
  locations?: readonly string[] | 'all';
  privateLocations?: readonly string[] | 'all';
}

const DATA_CENTERS: ReadonlySet<string> = new Set(LOCATIONS);

export function isPrivateLocation(location: string): boolean {
  return !DATA_CENTERS.has(location);
}

/** Whether a process that serves `serves` runs jobs of `location`. */
export function servesLocation(serves: ServesInput, location: string): boolean {
  const list = isPrivateLocation(location) ? serves.privateLocations : serves.locations;
  return list === undefined || list === 'all' || list.includes(location);
}

/** The candidates this process runs. */
export function servedLocations(candidates: readonly string[], serves: ServesInput): string[] {
  return candidates.filter((l) => servesLocation(serves, l));
}
