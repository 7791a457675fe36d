/*
 * A scheduled run as a narrow row and back. A run is stored narrow only when it is a scheduled
 * slot's run (its id is the slot id of its check, location, due time and attempt) of a type with
 * a narrow table; the row then states it exactly or its detail document says what the row cannot.
 */
import { slotIdDueAt, slotResultId, type CheckResult } from '@vigil/core';
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

/**
 * Whether a time that parsed is written as toISOString writes it (so that it reads back the
 * same): `YYYY-MM-DDTHH:mm:ss.sssZ`, hours below 24. Cheaper than formatting the date again.
 */
const canonical = (t: string) => t.length === 24 && t[10] === 'T' && t[19] === '.' && t[23] === 'Z' && t[4] === '-' && t.slice(11, 13) < '24';
const INT4 = 2_147_483_647;
const INT2 = 32_767;

/** A run the compact layout can hold, as its row; null for one that is kept as a full row. */
export function toNarrow(r: Result): Narrow | null {
  const layout = layoutOf(r.checkType);
  if (!layout || r.runSource !== 'SCHEDULER' || r.checkSessionId !== null || r.sequenceId !== null) return null;
  if (!Number.isInteger(r.attempts) || r.attempts < 1 || r.attempts > MAX_ATTEMPT) return null;
  const due = slotIdDueAt(r.id);
  if (!due || !packable(due.getTime()) || slotResultId(r.checkId, r.runLocation, due, r.attempts) !== r.id) return null;
  const dueMs = due.getTime();
  const inexact: Partial<Result> = {};
  const started = Date.parse(r.startedAt);
  const stopped = Date.parse(r.stoppedAt);
  const startOff = started - dueMs;
  const stopOff = stopped - started;
  const startOk = Number.isInteger(startOff) && Math.abs(startOff) <= MAX_OFFSET_MS && canonical(r.startedAt);
  const stopOk = startOk && Number.isInteger(stopOff) && stopOff >= 0 && stopOff <= MAX_OFFSET_MS && canonical(r.stoppedAt);
  if (!startOk) inexact.startedAt = r.startedAt;
  if (!stopOk) inexact.stoppedAt = r.stoppedAt;
  if (r.created_at !== r.stoppedAt || !stopOk) inexact.created_at = r.created_at;
  const rt = cents(r.responseTime);
  const rtOk = rt / 100 === r.responseTime && rt <= INT4;
  if (!rtOk) inexact.responseTime = r.responseTime;
  // The keys are filled in by the writer; they come first, as the table's columns do.
  const row: Row = { slot: 0, check_key: 0, rt: rtOk ? rt : Math.min(INT4, Math.max(0, rt || 0)) };
  let phasesOk = true;
  const named = new Set(['total']);
  for (const p of layout.phases) {
    named.add(p.phase);
    const v = r.phases[p.phase];
    if (v === undefined && p.optional) {
      row[p.column] = NO_PHASE;
      continue;
    }
    const c = v === undefined ? 0 : cents(v);
    if (v === undefined || c / 100 !== v || c < 0 || c > INT4) phasesOk = false;
    row[p.column] = Math.min(INT4, Math.max(0, c || 0));
  }
  if (r.phases.total !== r.responseTime || Object.keys(r.phases).some((k) => !named.has(k))) phasesOk = false;
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
