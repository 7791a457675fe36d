import { performance } from 'node:perf_hooks';
import { headerCredentials } from './request.js';
import { textOf, type ScriptError, type ScriptLine } from './script-process.js';

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
/** Characters of a step's name kept in the result. */
export const MAX_NAME = 200;
/** Characters of an assertion's message kept in the result. */
const MAX_ASSERTION = 1_000;
/**
 * Texts are kept as they arrive up to their limit and this much more, and cut to their limit only
 * once every secret is known and scrubbed: a secret at the cut is scrubbed whole before it.
 */
export const CUT_MARGIN = 16 * 1024;
/**
 * Credential values kept to scrub: at most this many, each at most MAX_CREDENTIAL_CHARS long and
 * MAX_CREDENTIALS_CHARS in all, far more than a script sends. A script that sends more, or longer
 * ones, through process.send itself is only hiding its own values; the bound keeps scrubbing its
 * run quick.
 */
const MAX_CREDENTIALS = 1_000;
const MAX_CREDENTIAL_CHARS = 16 * 1024;
export const MAX_CREDENTIALS_CHARS = 64 * 1024;

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

/** A value as it arrived, as text (strings and numbers only), kept up to `most` and CUT_MARGIN more. */
const text = (value: unknown, most = MAX_TEXT): string => textOf(value, most + CUT_MARGIN);
/** Text cut to `most` characters: call it on scrubbed text only. */
export const cut = (s: string, most: number): string => (s.length > most ? `${s.slice(0, most)}…` : s);
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
  return { matcher: text(r.matcher, 200), soft: r.soft === true, passed: r.passed === true, message: typeof r.message === 'string' ? text(r.message, MAX_ASSERTION) : null };
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
  private credentialChars = 0;
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
    this.logs.push({ ...line, text: line.text.slice(0, MAX_LINE_CHARS + CUT_MARGIN), at: Math.round(this.now()) });
  };

  onMessage = (m: Record<string, unknown>): void => {
    switch (m.type) {
      case 'step-start': {
        const name = text(m.name, MAX_NAME);
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
        this.degradedReason = typeof m.reason === 'string' ? text(m.reason, 1_000) : 'The script marked the run as degraded';
        break;
      case 'credentials': {
        const isText = (x: unknown): x is string => typeof x === 'string' && x.length <= MAX_CREDENTIAL_CHARS;
        const headers = Array.isArray(m.headers) ? m.headers.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2 && isText(p[0]) && isText(p[1])) : [];
        const values = Array.isArray(m.values) ? m.values.filter(isText) : [];
        for (const value of [...headerCredentials(headers), ...values]) {
          if (this.credentials.length >= MAX_CREDENTIALS) break;
          if (value.length > MAX_CREDENTIAL_CHARS || this.credentialChars + value.length > MAX_CREDENTIALS_CHARS || this.credentials.includes(value)) continue;
          this.credentials.push(value);
          this.credentialChars += value.length;
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
  addNotRun(declaredNames: readonly string[]): void {
    // Cut as the names that ran were on arrival, so that a long name matches itself.
    const declared = declaredNames.map((name) => text(name, MAX_NAME));
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

  /**
   * The records for the result: each text scrubbed (`scrub`, with every secret the run knows) and
   * only then cut to its limit, so that no part of a secret survives a cut.
   */
  details(scrub: (text: string) => string): Record<string, unknown> {
    const clean = (t: string, most: number) => cut(scrub(t), most);
    const request = (r: RequestRecord): RequestRecord => ({
      ...r,
      method: clean(r.method, 16),
      url: clean(r.url, MAX_TEXT),
      statusText: r.statusText === null ? null : clean(r.statusText, 200),
      error: r.error === null ? null : clean(r.error, MAX_TEXT),
    });
    const assertion = (a: AssertionRecord): AssertionRecord => ({ ...a, matcher: clean(a.matcher, 200), message: a.message === null ? null : clean(a.message, MAX_ASSERTION) });
    const steps = this.steps.map((s) => ({
      ...s,
      name: clean(s.name, MAX_NAME),
      error: s.error === null ? null : clean(s.error, MAX_TEXT),
      requests: s.requests.map(request),
      assertions: s.assertions.map(assertion),
    }));
    const logs = this.logs.map((l) => ({ ...l, text: clean(l.text, MAX_LINE_CHARS) }));
    if (this.droppedLines > 0) logs.push({ source: 'script', level: 'warn', text: `${this.droppedLines} more line(s) were not kept`, at: Math.round(this.now()) });
    const dropped = {
      steps: Math.max(0, this.counts.steps - MAX_STEPS),
      requests: Math.max(0, this.counts.requests - MAX_REQUESTS),
      assertions: Math.max(0, this.counts.assertions - MAX_ASSERTIONS),
    };
    return {
      steps,
      requests: this.requests.map(request),
      assertions: this.assertions.map(assertion),
      degradedReason: this.degradedReason === null ? null : clean(this.degradedReason, 1_000),
      logs,
      ...(dropped.steps + dropped.requests + dropped.assertions > 0 ? { notRecorded: dropped } : {}),
    };
  }
}

function errorOf(e: Record<string, unknown>): ScriptError {
  return {
    name: typeof e.name === 'string' ? text(e.name, 100) : 'Error',
    // Bounded as the supervisor bounds the error that ends the script, so that the two compare equal.
    message: typeof e.message === 'string' ? textOf(e.message) : 'The step failed',
    stack: typeof e.stack === 'string' ? text(e.stack, 8_000) : '',
    assertion: e.assertion === true,
    label: typeof e.label === 'string' ? text(e.label, MAX_NAME) : null,
    code: typeof e.code === 'string' ? text(e.code, 64) : null,
  };
}
