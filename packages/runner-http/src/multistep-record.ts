import { performance } from 'node:perf_hooks';
import { headerCredentials } from './request.js';
import type { ScriptError, ScriptLine } from './script-process.js';

// What a multi-step run records, from the messages its process sends as it goes: a process that
// is killed mid-step (its time limit, memory, an abort) leaves what it did until then.

/** Steps, requests and assertions a run records at most (the counts go on; only records stop). */
export const MAX_STEPS = 50;
export const MAX_REQUESTS = 100;
export const MAX_ASSERTIONS = 200;
/** Steps that get a phase (`step1` ... `step20`), as core's analytics reads them. */
export const PHASED_STEPS = 20;
const MAX_LOG_LINES = 200;
const MAX_LINE_CHARS = 2_000;
const MAX_TEXT = 2_000;
/**
 * Credential values kept to scrub, and the longest: far more than a script sends. A script that
 * sends more, or longer ones, through process.send itself is only hiding its own values.
 */
const MAX_CREDENTIALS = 1_000;
const MAX_CREDENTIAL_CHARS = 16 * 1024;

export interface RequestRecord {
  method: string;
  url: string;
  status: number | null;
  statusText: string | null;
  timings: { firstByte: number; download: number; total: number };
  error: string | null;
}

export interface AssertionRecord {
  matcher: string;
  soft: boolean;
  passed: boolean;
  message: string | null;
}

export type StepStatus = 'passed' | 'failed' | 'not run';

export interface StepRecord {
  name: string;
  status: StepStatus;
  /** Milliseconds since the run's script started. */
  startMs: number;
  durationMs: number;
  requests: RequestRecord[];
  assertions: AssertionRecord[];
  error: string | null;
}

/** The first failed assertion of the run, and where. */
export interface FailedAssertion {
  step: string | null;
  record: AssertionRecord;
}

const text = (value: unknown, most = MAX_TEXT): string => {
  const s = String(value ?? '');
  return s.length > most ? `${s.slice(0, most)}…` : s;
};
const ms = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value * 100) / 100 : 0);
const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** A request record as the process sent it, checked: the script can call process.send itself. */
function requestOf(raw: unknown): RequestRecord {
  const r = isObject(raw) ? raw : {};
  const t = isObject(r.timings) ? r.timings : {};
  return {
    method: text(r.method, 16),
    url: text(r.url),
    status: typeof r.status === 'number' ? r.status : null,
    statusText: typeof r.statusText === 'string' ? text(r.statusText, 200) : null,
    timings: { firstByte: ms(t.firstByte), download: ms(t.download), total: ms(t.total) },
    error: typeof r.error === 'string' ? text(r.error) : null,
  };
}

function assertionOf(raw: unknown): AssertionRecord {
  const r = isObject(raw) ? raw : {};
  return { matcher: text(r.matcher, 200), soft: r.soft === true, passed: r.passed === true, message: typeof r.message === 'string' ? text(r.message) : null };
}

/** Collects a run's steps, requests, assertions, logs and credentials from its process's messages. */
export class StepRecorder {
  private readonly started = performance.now();
  readonly steps: StepRecord[] = [];
  /** Durations of every step run, recorded or not: the run's response time is their sum. */
  readonly durations: number[] = [];
  private readonly requests: RequestRecord[] = [];
  private readonly assertions: AssertionRecord[] = [];
  private current: { record: StepRecord | null; name: string; began: number } | null = null;
  private counts = { steps: 0, requests: 0, assertions: 0 };
  private readonly logs: (ScriptLine & { at: number })[] = [];
  private droppedLines = 0;
  /** Values the script sent as credentials (headers, a URL's password) and the cookies set: scrubbed. */
  readonly credentials: string[] = [];
  degradedReason: string | null = null;
  firstFailedAssertion: FailedAssertion | null = null;
  failedAssertions = 0;
  /** The first step that failed by an error thrown out of it (its name and error). */
  failedStep: { name: string; error: ScriptError } | null = null;
  /** The last step that failed by an error thrown out of it. */
  lastFailedStep: { name: string; error: ScriptError } | null = null;

  private now = () => performance.now() - this.started;

  log = (line: ScriptLine): void => {
    if (this.logs.length >= MAX_LOG_LINES) {
      this.droppedLines += 1;
      return;
    }
    this.logs.push({ ...line, text: line.text.slice(0, 64 * 1024), at: Math.round(this.now()) });
  };

  onMessage = (m: Record<string, unknown>): void => {
    switch (m.type) {
      case 'step-start': {
        const name = text(m.name, 200);
        this.counts.steps += 1;
        const record: StepRecord | null = this.counts.steps <= MAX_STEPS
          ? { name, status: 'passed', startMs: Math.round(this.now()), durationMs: 0, requests: [], assertions: [], error: null }
          : null;
        if (record) this.steps.push(record);
        this.current = { record, name, began: this.now() };
        break;
      }
      case 'step-end': {
        if (!this.current) break;
        const error = isObject(m.error) ? m.error : null;
        this.closeStep(ms(m.durationMs), error ? errorOf(error) : null);
        break;
      }
      case 'request':
        this.counts.requests += 1;
        if (this.counts.requests <= MAX_REQUESTS) (this.current?.record?.requests ?? (this.current ? null : this.requests))?.push(requestOf(m.record));
        break;
      case 'assertion': {
        this.counts.assertions += 1;
        const record = assertionOf(m.record);
        if (!record.passed) {
          this.failedAssertions += 1;
          this.firstFailedAssertion ??= { step: this.current?.name ?? null, record };
          if (this.current?.record) this.current.record.status = 'failed';
        }
        if (this.counts.assertions <= MAX_ASSERTIONS) (this.current?.record?.assertions ?? (this.current ? null : this.assertions))?.push(record);
        break;
      }
      case 'degraded':
        this.degradedReason = text(m.reason, 1_000);
        break;
      case 'credentials': {
        const headers = Array.isArray(m.headers) ? m.headers.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2).map(([k, v]) => [String(k), String(v)] as const) : [];
        const values = Array.isArray(m.values) ? m.values.map(String) : [];
        for (const value of [...headerCredentials(headers), ...values]) {
          if (this.credentials.length >= MAX_CREDENTIALS) break;
          if (value.length <= MAX_CREDENTIAL_CHARS && !this.credentials.includes(value)) this.credentials.push(value);
        }
        break;
      }
      default:
        break;
    }
  };

  private closeStep(durationMs: number, error: ScriptError | null): void {
    const current = this.current!;
    this.current = null;
    this.durations.push(durationMs);
    if (error) {
      this.failedStep ??= { name: current.name, error };
      this.lastFailedStep = { name: current.name, error };
    }
    if (current.record) {
      current.record.durationMs = durationMs;
      if (error) {
        current.record.status = 'failed';
        current.record.error = error.message;
      }
    }
  }

  /** The step still running when the process was stopped: failed, with the time it had run. */
  endOpenStep(message: string): string | null {
    if (!this.current) return null;
    const name = this.current.name;
    this.closeStep(ms(this.now() - this.current.began), { name: 'Error', message, stack: '', assertion: false, label: name, code: null });
    return name;
  }

  /**
   * After a hard failure: the declared steps (in source order) that did not run, each `not run`.
   * Each step run takes the first declared step of its name; those declared after the last one
   * taken are the steps the failure kept from running.
   */
  addNotRun(declared: readonly string[]): void {
    const taken = new Array<boolean>(declared.length).fill(false);
    let last = -1;
    for (const step of this.steps) {
      const at = declared.findIndex((name, i) => !taken[i] && name === step.name);
      if (at >= 0) {
        taken[at] = true;
        last = Math.max(last, at);
      }
    }
    for (let i = last + 1; i < declared.length && this.steps.length < MAX_STEPS; i++) {
      if (!taken[i]) this.steps.push({ name: declared[i]!, status: 'not run', startMs: 0, durationMs: 0, requests: [], assertions: [], error: null });
    }
  }

  /** `total` and the first steps' durations by position: `step1`, `step2`, ... */
  phases(responseTime: number): Record<string, number> {
    const out: Record<string, number> = { total: responseTime };
    this.durations.slice(0, PHASED_STEPS).forEach((d, i) => (out[`step${i + 1}`] = d));
    return out;
  }

  details(): Record<string, unknown> {
    const logs = this.logs.map((l) => ({ ...l, text: l.text.length > MAX_LINE_CHARS ? `${l.text.slice(0, MAX_LINE_CHARS)}…` : l.text }));
    if (this.droppedLines > 0) logs.push({ source: 'script', level: 'warn', text: `${this.droppedLines} more line(s) were not kept`, at: Math.round(this.now()) });
    const dropped = {
      steps: Math.max(0, this.counts.steps - MAX_STEPS),
      requests: Math.max(0, this.counts.requests - MAX_REQUESTS),
      assertions: Math.max(0, this.counts.assertions - MAX_ASSERTIONS),
    };
    return {
      steps: this.steps,
      requests: this.requests,
      assertions: this.assertions,
      degradedReason: this.degradedReason,
      logs,
      ...(dropped.steps + dropped.requests + dropped.assertions > 0 ? { notRecorded: dropped } : {}),
    };
  }
}

function errorOf(e: Record<string, unknown>): ScriptError {
  return {
    name: typeof e.name === 'string' ? text(e.name, 100) : 'Error',
    message: typeof e.message === 'string' ? text(e.message) : 'The step failed',
    stack: typeof e.stack === 'string' ? text(e.stack, 8_000) : '',
    assertion: e.assertion === true,
    label: typeof e.label === 'string' ? e.label : null,
    code: typeof e.code === 'string' ? text(e.code, 64) : null,
  };
}
