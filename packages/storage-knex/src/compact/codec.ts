/*
 * A scheduled run as a narrow row and back. A run is stored narrow only when it is a scheduled
 * slot's run (its id is the slot id of its check, location, due time and attempt) of a type with
 * a narrow table; the row then states it exactly or its detail document says what the row cannot.
 */
import { slotResultId, type CheckResult } from '@vigil/core';
import { FLAG, layoutOf, MAX_ATTEMPT, MAX_OFFSET_MS, NO_PHASE, NO_SSL, packable, type Layout } from './layout.js';

type Result = Omit<CheckResult, 'accountId'>;
type Row = Record<string, number>;

export interface Narrow {
  layout: Layout;
  dueMs: number;
  /** The row, its keys (slot, check_key) still 0. */
  row: Row;
  /** What the row cannot state: the fields that differ from its decoding. */
  inexact: Partial<Result>;
  failing: boolean;
}

const cents = (ms: number) => Math.round(ms * 100);

const DIGITS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Midnight of each day a store has parsed times of, by `YYYY-MM-DD` (NaN: not a day toISOString writes). */
const days = new Map<string, number>();

function dayMs(text: string): number {
  let ms = days.get(text);
  if (ms === undefined) {
    ms = Date.parse(`${text}T00:00:00.000Z`);
    if (!(ms >= 0) || new Date(ms).toISOString().slice(0, 10) !== text) ms = NaN;
    if (days.size >= 1000) days.clear();
    days.set(text, ms);
  }
  return ms;
}

const two = (t: string, at: number) => (t.charCodeAt(at) - 48) * 10 + t.charCodeAt(at + 1) - 48;

/**
 * The instant of a time written exactly as toISOString writes it (so that it reads back the same:
 * `YYYY-MM-DDTHH:mm:ss.sssZ`), NaN for any other text. A fifth of Date.parse's time: the day is
 * looked up, the time of day read digit by digit.
 */
function isoMs(t: string): number {
  if (typeof t !== 'string' || t.length !== 24 || !DIGITS.test(t)) return NaN;
  const h = two(t, 11);
  const m = two(t, 14);
  const s = two(t, 17);
  if (h > 23 || m > 59 || s > 59) return NaN;
  return dayMs(t.slice(0, 10)) + h * 3_600_000 + m * 60_000 + s * 1000 + two(t, 20) * 10 + t.charCodeAt(22) - 48;
}
const INT4 = 2_147_483_647;
const INT2 = 32_767;

/** A run the compact layout can hold, as its row; null for one that is kept as a full row. */
export function toNarrow(r: Result): Narrow | null {
  const layout = layoutOf(r.checkType);
  if (!layout || r.runSource !== 'SCHEDULER' || r.checkSessionId !== null || r.sequenceId !== null) return null;
  if (!Number.isInteger(r.attempts) || r.attempts < 1 || r.attempts > MAX_ATTEMPT) return null;
  // The due time a slot id carries (checked whole below: the id must be the slot's own).
  const dueMs = typeof r.id === 'string' && r.id.length === 36 && r.id[14] === '7' ? parseInt(r.id.slice(0, 8), 16) * 65_536 + parseInt(r.id.slice(9, 13), 16) : NaN;
  if (!packable(dueMs) || slotResultId(r.checkId, r.runLocation, new Date(dueMs), r.attempts) !== r.id) return null;
  const inexact: Partial<Result> = {};
  const started = isoMs(r.startedAt);
  const stopped = isoMs(r.stoppedAt);
  const startOff = started - dueMs;
  const stopOff = stopped - started;
  const startOk = Number.isInteger(startOff) && Math.abs(startOff) <= MAX_OFFSET_MS;
  const stopOk = startOk && Number.isInteger(stopOff) && stopOff >= 0 && stopOff <= MAX_OFFSET_MS;
  if (!startOk) inexact.startedAt = r.startedAt;
  if (!stopOk) inexact.stoppedAt = r.stoppedAt;
  if (r.created_at !== r.stoppedAt || !stopOk) inexact.created_at = r.created_at;
  const rt = cents(r.responseTime);
  const rtOk = rt / 100 === r.responseTime && rt <= INT4;
  if (!rtOk) inexact.responseTime = r.responseTime;
  // The keys are filled in by the writer; they come first, as the table's columns do.
  const row: Row = { slot: 0, check_key: 0, rt: rtOk ? rt : Math.min(INT4, Math.max(0, rt || 0)) };
  let phasesOk = true;
  for (const p of layout.phases) {
    const v = r.phases[p.phase];
    if (v === undefined && p.optional) {
      row[p.column] = NO_PHASE;
      continue;
    }
    const c = v === undefined ? 0 : cents(v);
    if (v === undefined || c / 100 !== v || c < 0 || c > INT4) phasesOk = false;
    row[p.column] = Math.min(INT4, Math.max(0, c || 0));
  }
  if (r.phases.total !== r.responseTime) phasesOk = false;
  else for (const k in r.phases) if (k !== 'total' && !layout.phaseNames.has(k)) phasesOk = false;
  if (!phasesOk) inexact.phases = r.phases;
  row.start_off = startOk ? startOff : 0;
  row.stop_off = stopOk ? stopOff : 0;
  row.flags = (r.hasFailures ? FLAG.failures : 0) | (r.hasErrors ? FLAG.errors : 0) | (r.isDegraded ? FLAG.degraded : 0)
    | (r.overMaxResponseTime ? FLAG.overMax : 0) | (r.resultType === 'ATTEMPT' ? FLAG.attempt : 0);
  if (layout.http) {
    const code = r.statusCode;
    const codeOk = code === null || (Number.isInteger(code) && code > 0 && code <= INT2);
    row.status_code = code !== null && codeOk ? code : 0;
    if (!codeOk) inexact.statusCode = code;
    const ssl = r.sslDaysRemaining;
    const sslOk = ssl === null || (Number.isInteger(ssl) && Math.abs(ssl) <= INT2);
    row.ssl_days = ssl !== null && sslOk ? ssl : NO_SSL;
    if (!sslOk) inexact.sslDaysRemaining = ssl;
  } else {
    if (r.statusCode !== null) inexact.statusCode = r.statusCode;
    if (r.sslDaysRemaining !== null) inexact.sslDaysRemaining = r.sslDaysRemaining;
  }
  if (r.errorMessage !== null) inexact.errorMessage = r.errorMessage;
  const failing = r.hasFailures || r.hasErrors || r.isDegraded || r.overMaxResponseTime || r.resultType === 'ATTEMPT';
  return { layout, dueMs, row, inexact, failing };
}

/** The detail document a run keeps: its full detail, or only what its row cannot state (null: nothing). */
export function detailDoc(r: Result, narrow: Narrow, full: boolean): Record<string, unknown> | null {
  if (full) return { ...narrow.inexact, name: r.name, errorMessage: r.errorMessage, details: r.details };
  return Object.keys(narrow.inexact).length > 0 ? { ...narrow.inexact } : null;
}

export interface Stored {
  layout: Layout;
  accountId: string;
  checkId: string;
  /** The check's name as of its latest run (a run without its own detail reads with it). */
  name: string;
  location: string;
  slot: { dueMs: number; attempt: number };
  row: Record<string, unknown>;
  doc: Record<string, unknown> | null;
}

/** A narrow row (with its document, if any) as the result it stores. */
export function fromNarrow(s: Stored): CheckResult {
  const { layout, row } = s;
  const n = (col: string) => Number(row[col]);
  const flags = n('flags');
  const started = s.slot.dueMs + n('start_off');
  const stoppedAt = new Date(started + n('stop_off')).toISOString();
  const responseTime = n('rt') / 100;
  const phases: Record<string, number> = {};
  for (const p of layout.phases) if (!(p.optional && n(p.column) === NO_PHASE)) phases[p.phase] = n(p.column) / 100;
  phases.total = responseTime;
  const due = new Date(s.slot.dueMs);
  const result: CheckResult = {
    id: slotResultId(s.checkId, s.location, due, s.slot.attempt),
    checkId: s.checkId,
    checkType: layout.checkType,
    name: s.name,
    runLocation: s.location,
    startedAt: new Date(started).toISOString(),
    stoppedAt,
    created_at: stoppedAt,
    responseTime,
    hasFailures: (flags & FLAG.failures) !== 0,
    hasErrors: (flags & FLAG.errors) !== 0,
    isDegraded: (flags & FLAG.degraded) !== 0,
    overMaxResponseTime: (flags & FLAG.overMax) !== 0,
    attempts: s.slot.attempt,
    resultType: (flags & FLAG.attempt) !== 0 ? 'ATTEMPT' : 'FINAL',
    runSource: 'SCHEDULER',
    checkSessionId: null,
    sequenceId: null,
    errorMessage: null,
    phases,
    statusCode: layout.http && n('status_code') !== 0 ? n('status_code') : null,
    sslDaysRemaining: layout.http && n('ssl_days') !== NO_SSL ? n('ssl_days') : null,
    details: null,
    accountId: s.accountId,
  };
  return s.doc ? ({ ...result, ...s.doc } as CheckResult) : result;
}
