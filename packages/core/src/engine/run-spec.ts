/*
 * What the stages of the run pipeline share: the run to make (RunSpec), what came of it
 * (RunOutcome), the abort reasons, and the ids that let a run made twice (its process died and
 * another made it again) be stored and alerted once.
 */
import type { CheckResult } from '../model/check-result.js';
import type { RunSource } from '../ports/runner.js';
import type { CheckForRun } from '../services/checks.js';
import type { MaintenanceWindowService } from '../services/maintenance-windows.js';
import { sha256Hex } from '../sha256.js';

/** The abort reason of a run whose session sequence the user cancelled: its result is kept. */
export const CANCELLED = 'cancelled';
/** The abort reason of a run cut short because its process stops: nothing is kept, another process runs it. */
export const STOPPING = 'engine stopping';

/**
 * How often a race-free write of a check's state reads again when another run changed it
 * meanwhile: each round one writer wins, so N runs finishing at once (a runParallel check in every
 * location, in several processes) need up to N.
 */
export const STATE_TRIES = 200;

/** One run to make: a scheduled slot or a session's sequence. */
export interface RunSpec {
  accountId: string;
  checkId: string;
  location: string;
  dueAt: Date;
  runSource: RunSource;
  session?: { checkSessionId: string; sequenceId: string; projectId?: string | null; environment?: string | null } | undefined;
  /** When the run must be over, retries included (the lease of a scheduled slot). */
  mustEndBy?: Date | undefined;
  /** Told when the run starts and stops waiting for its runner's turn (the engine does not count it as running meanwhile). */
  onRunnerWait?: ((waiting: boolean) => void) | undefined;
}

export type RunOutcome =
  | { kind: 'ran'; result: CheckResult; forRun: CheckForRun }
  | { kind: 'skipped'; reason: 'gone' | 'inactive' | 'paused' | 'cancelled' | 'duplicate' | 'stopped' | 'busy'; forRun?: CheckForRun };

/**
 * The id of a scheduled slot's result: the same in every process, so a slot that a second process
 * runs again (the first died before it moved the schedule on) is stored once. It has the UUID
 * version 7 layout: the first 48 bits are the due time in milliseconds, the rest a hash of the
 * check, location, due time and attempt. A store can therefore find a result by its id from the
 * check and due time alone, and recompute the id instead of keeping it.
 */
export function slotResultId(checkId: string, location: string, dueAt: Date, attempt: number): string {
  const ms = dueAt.getTime();
  const text = `${checkId}|${location}|${isoString(dueAt)}|${attempt}`;
  if (!(ms >= 0 && ms < 2 ** 48)) return hashedUuid(text);
  const t = ms.toString(16).padStart(12, '0');
  const h = sha256Hex(text);
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${h.slice(0, 3)}-${((parseInt(h[3]!, 16) & 3) | 8).toString(16)}${h.slice(4, 7)}-${h.slice(7, 19)}`;
}

const DAY_MS = 86_400_000;
/** The first instant of year 10000, from which toISOString writes six-digit years. */
const YEAR_10000 = 253_402_300_800_000;
let isoDay = NaN;
let isoDayText = '';
const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `toISOString()`, in a fifth of its time for the common case: the day's part is kept from the
 * call before (a store recomputes the ids of runs due on the same few days, millions a day).
 */
function isoString(at: Date): string {
  const ms = at.getTime();
  if (!(ms >= 0 && ms < YEAR_10000)) return at.toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== isoDay) {
    isoDayText = new Date(day * DAY_MS).toISOString().slice(0, 11);
    isoDay = day;
  }
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const sec = Math.floor(rest / 1000);
  return `${isoDayText}${pad2(h)}:${pad2(m)}:${pad2(sec)}.${pad3(rest - sec * 1000)}Z`;
}


/** The due time a version 7 slot id carries, or null for any other id. */
export function slotIdDueAt(id: string): Date | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)) return null;
  return new Date(parseInt(id.slice(0, 8) + id.slice(9, 13), 16));
}

/** A slot's id as results stored before version 7 slot ids have it (a hash only). */
export function legacySlotResultId(checkId: string, location: string, dueAt: Date, attempt: number): string {
  return hashedUuid(`${checkId}|${location}|${dueAt.toISOString()}|${attempt}`);
}

/** The id of a session sequence's result: the same in every process, like a slot's. */
export function sequenceResultId(sequenceId: string, attempt: number): string {
  return hashedUuid(`session|${sequenceId}|${attempt}`);
}

/** A UUID (version 5 layout) made from `text`: the same text gives the same id in every process. */
export function hashedUuid(text: string): string {
  const h = sha256Hex(text);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** What the maintenance windows in force at `at` do to a check's runs (pause them, silence their alerts). */
export function maintenanceEffect(windows: Pick<MaintenanceWindowService, 'activeEffect'>, accountId: string, forRun: CheckForRun, at: Date) {
  return windows.activeEffect(accountId, { tags: forRun.check.tags, groupTags: forRun.group?.tags ?? [] }, at);
}
