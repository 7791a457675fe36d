import { performance } from 'node:perf_hooks';
import { scrubDeep, scrubSecrets, type RunJob, type RunResult } from '@vigil/core';
import type { HopRequest, HopResponse } from './exchange.js';
import { headerCredentials, type OutgoingRequest } from './request.js';
import { runScriptPhase, type ScriptLine, type ScriptPhase } from './script-process.js';
import type { RefusedConnection } from './script-targets.js';
import {
  phaseFailure,
  refusalFailure,
  requestFromScript,
  scriptRequestOf,
  scriptResponseOf,
  secretsMadeBy,
  sentRequestOf,
  type PhaseFailure,
  type PhaseScripts,
} from './scripts.js';

/** Lines of script output a run keeps, and characters of each (cut after secrets are scrubbed). */
const MAX_LOG_LINES = 200;
const MAX_LINE_CHARS = 2_000;
/** Characters of a setup's or teardown's failure message kept (cut after secrets are scrubbed). */
const MAX_PHASE_MESSAGE = 2_000;
/** A line longer than this is cut on arrival: far past what is kept, so a secret at the cut is past it too. */
const RAW_LINE_CHARS = 64 * 1024;

export interface ScriptedRunOptions {
  job: RunJob;
  scripts: PhaseScripts;
  signal: AbortSignal;
  workerFile: string;
  memoryLimitMb: number;
}

interface LogEntry extends ScriptLine {
  phase: ScriptPhase;
  /** Milliseconds since the run started. */
  at: number;
}

/** What a teardown is handed: the last request sent and its answer, if one came. */
export interface Exchanged {
  request: HopRequest;
  response: HopResponse | null;
  text: string | null;
  timings: Record<string, number>;
  responseTime: number;
}

/**
 * The setup and teardown of one run: each phase in its own process, the variables the setup
 * leaves handed to the teardown, the scripts' output kept as the run's logs.
 */
export class ScriptedRun {
  private readonly started = performance.now();
  private readonly logs: LogEntry[] = [];
  private dropped = 0;
  private env: Record<string, string>;
  private readonly madeSecrets: string[] = [];
  private readonly phases: { phase: ScriptPhase; scripts: string[]; durationMs: number; passed: boolean }[] = [];

  constructor(private readonly o: ScriptedRunOptions) {
    this.env = { ...(o.job.environment ?? {}) };
  }

  private log(phase: ScriptPhase, line: ScriptLine): void {
    if (this.logs.length >= MAX_LOG_LINES) {
      this.dropped += 1;
      return;
    }
    this.logs.push({ phase, ...line, text: line.text.slice(0, RAW_LINE_CHARS), at: Math.round(performance.now() - this.started) });
  }

  /**
   * Runs one phase's scripts. Under a target policy that refuses internal addresses, each
   * connection they open is checked, and a refused one fails the phase (`refusal`) even when the
   * scripts caught the error and went on.
   */
  private async phase(phase: ScriptPhase, limitMs: number, request: unknown, response: unknown) {
    const scripts = this.o.scripts[phase];
    const began = performance.now();
    const policy = this.o.job.targetPolicy?.refuseInternalAddresses ? this.o.job.targetPolicy : null;
    const refused: RefusedConnection[] = [];
    const outcome = await runScriptPhase(
      { phase, scripts, env: this.env, request, response },
      {
        workerFile: this.o.workerFile, memoryLimitMb: this.o.memoryLimitMb, limitMs, signal: this.o.signal, log: (line) => this.log(phase, line),
        targets: policy ? { policy, refused: (r) => refused.push(r) } : null,
      },
    );
    const refusal = refusalFailure(phase, refused);
    this.phases.push({ phase, scripts: scripts.map((s) => s.label), durationMs: Math.round((performance.now() - began) * 100) / 100, passed: outcome.kind === 'done' && !refusal });
    return { outcome, refusal, context: { scripts, limitMs, memoryLimitMb: this.o.memoryLimitMb } };
  }

  /** Runs the setup on the request; answers the request to send, or why none is sent. */
  async setup(request: OutgoingRequest, limitMs: number): Promise<{ ok: true; request: OutgoingRequest } | { ok: false; failure: PhaseFailure }> {
    const { outcome, refusal, context } = await this.phase('setup', limitMs, scriptRequestOf(request), null);
    if (refusal) return { ok: false, failure: this.bounded(refusal) };
    if (outcome.kind !== 'done') return { ok: false, failure: this.bounded(phaseFailure('setup', outcome, context)) };
    this.keep(secretsMadeBy(this.env, outcome.env, [...this.o.job.secrets, ...this.madeSecrets]));
    this.env = outcome.env;
    const changed = requestFromScript(outcome.request, request);
    if (!changed.ok) return { ok: false, failure: { message: changed.message, kind: 'OTHER', ours: false } };
    // A credential header the setup set (a token it fetched) is scrubbed like a secret; those it
    // left as they were are the job's already.
    const sent = new Set(request.headers.map(([name, value]) => `${name.toLowerCase()}:${value}`));
    this.keep(headerCredentials(changed.request.headers.filter(([name, value]) => !sent.has(`${name.toLowerCase()}:${value}`))));
    return changed;
  }

  /** Adds values the run met to the secrets it scrubs (the response's cookies, say), each once. */
  keep(values: readonly string[]): void {
    for (const value of values) {
      if (!this.o.job.secrets.includes(value) && !this.madeSecrets.includes(value)) this.madeSecrets.push(value);
    }
  }

  /** Runs the teardown on what was sent and what came back (null when no answer came). */
  async teardown(exchanged: Exchanged, limitMs: number): Promise<PhaseFailure | null> {
    const response = exchanged.response && exchanged.text !== null
      ? scriptResponseOf(exchanged.response, exchanged.text, exchanged.timings, exchanged.responseTime)
      : null;
    const { outcome, refusal, context } = await this.phase('teardown', limitMs, sentRequestOf(exchanged.request), response);
    if (refusal) return this.bounded(refusal);
    return outcome.kind === 'done' ? null : this.bounded(phaseFailure('teardown', outcome, context));
  }

  /** A phase's failure with its message scrubbed of every secret known so far and only then cut (a script may throw a message of megabytes). */
  private bounded(failure: PhaseFailure): PhaseFailure {
    return { ...failure, message: cut(scrubSecrets(failure.message, [...this.o.job.secrets, ...this.madeSecrets]), MAX_PHASE_MESSAGE) };
  }

  /**
   * The result with the scripts' logs and phases in its details, and every secret scrubbed: the
   * job's, and those the run met (runChecked knows only the job's). Lines are cut after they
   * are scrubbed, so that no part of a secret survives a cut.
   */
  finish(result: RunResult): RunResult {
    const secrets = [...this.o.job.secrets, ...this.madeSecrets];
    const logs = this.logs.map((l) => ({ ...l, text: cut(scrubSecrets(l.text, secrets)) }));
    if (this.dropped > 0) logs.push({ phase: logs[logs.length - 1]?.phase ?? 'setup', source: 'script', level: 'warn', text: `${this.dropped} more line(s) were not kept`, at: Math.round(performance.now() - this.started) });
    return scrubDeep({ ...result, details: { ...(result.details ?? {}), logs, scripts: this.phases } }, this.madeSecrets);
  }
}

const cut = (text: string, most = MAX_LINE_CHARS) => (text.length > most ? `${text.slice(0, most)}…` : text);

/** A result that also fails for a teardown: its message added after the run's own, its kind kept when the run already failed. */
export function withFailure(result: RunResult, failure: PhaseFailure): RunResult {
  const failing = result.hasFailures || result.hasErrors;
  return {
    ...result,
    hasFailures: result.hasFailures || !failure.ours,
    hasErrors: result.hasErrors || failure.ours,
    // A failing run is a failure, not also degraded (core's isDegradedRun).
    isDegraded: false,
    errorMessage: result.errorMessage ? `${result.errorMessage}; ${failure.message}` : failure.message,
    failureKind: failing ? result.failureKind : failure.kind,
    details: failure.details ? { ...(result.details ?? {}), ...failure.details } : result.details,
  };
}
