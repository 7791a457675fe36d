import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { endWithHost, scriptProcessFlags, WITHHELD_SCRIPT_MODULES } from '@vigil/core';
import { answerOverLimit, answerTargetCheck, MAX_TARGET_CHECKS, recordLocalRefusal, type PhaseTargets } from './script-targets.js';

export type ScriptPhase = 'setup' | 'teardown';

/** One piece of code of a phase: a group's snippet or its local script. */
export interface PhaseScript {
  /** How messages name it: `the group's localSetupScript`, `setup snippet 3 ("Get a token")`. */
  label: string;
  /** The file name its stack traces show. */
  filename: string;
  /** Compiled as is (core's apiScriptSource). */
  source: string;
}

export interface ScriptLine {
  source: 'script' | 'stdout' | 'stderr';
  level: string;
  text: string;
}

export interface ScriptError {
  name: string;
  message: string;
  stack: string;
  /** Thrown by node:assert. */
  assertion: boolean;
  /** The script that threw, when one was running. */
  label: string | null;
  /** The error's `code` (`ECONNREFUSED`, `ETARGETPOLICY`), when it had one. */
  code?: string | null;
}

export type PhaseOutcome =
  | { kind: 'done'; request: unknown; env: Record<string, string> }
  | { kind: 'failed'; error: ScriptError }
  | { kind: 'timeout'; label: string | null }
  | { kind: 'aborted'; label: string | null }
  | { kind: 'exited'; label: string | null; code: number | null; signal: string | null; outOfMemory: boolean }
  /** The process did not come up: Vigil's side, not the script's. */
  | { kind: 'not-started'; message: string };

export interface PhaseJob {
  phase: ScriptPhase;
  scripts: PhaseScript[];
  env: Record<string, string>;
  request: unknown;
  response: unknown;
}

export interface PhaseLimits {
  /** child/script-worker.cjs, resolved to its real path. */
  workerFile: string;
  memoryLimitMb: number;
  limitMs: number;
  signal: AbortSignal;
  log: (line: ScriptLine) => void;
  /**
   * Under a target policy that refuses internal addresses: every connection the scripts open is
   * checked here first (child/target-fence.cjs asks), and each refusal is reported.
   */
  targets?: PhaseTargets | null;
}

/** A worker a fenced script process runs: its entry file and what it may read to load. */
export interface ScriptWorker {
  /** The entry, resolved to its real path; core's child/fence.cjs is found from it. */
  file: string;
  /** Files, or folders as `dir/*`, the process may read besides its run folder and core's fence. */
  readPaths: string[];
}

export interface ScriptProcessLimits extends Omit<PhaseLimits, 'workerFile'> {
  worker: ScriptWorker;
  /** Every message of the worker the supervisor does not handle itself (a worker's own records). */
  onMessage?: (message: Record<string, unknown>) => void;
}

/** How a fenced script process ended; `done` carries what the worker reported with it. */
export type ScriptOutcome =
  | { kind: 'done'; report: Record<string, unknown> }
  | Exclude<PhaseOutcome, { kind: 'done' }>;

/**
 * Core's child/fence.cjs, where the worker's package finds it. The worker is handed its real path
 * and requires that: resolving the name itself would read the folders on the way (a workspace's
 * or pnpm's symlinks), which its permissions do not cover.
 */
const coreFenceOf = (workerFile: string) => realpathSync(createRequire(workerFile).resolve('@vigil/core/child/fence.cjs'));

const TAIL_BYTES = 4096;
/**
 * Characters of a script's error message (and of a label) kept from its process: the run's
 * message is cut to far less once secrets are scrubbed (so no part of one survives the cut), and
 * a script that throws a 20 MB message has it cut here first.
 */
export const RAW_MESSAGE_CHARS = 16 * 1024;

/** A value a process sent, as text: strings and numbers only (the script can call process.send itself, with any shape). */
export const textOf = (value: unknown, most = RAW_MESSAGE_CHARS): string =>
  (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '').slice(0, most);
/** Longest a killed process may take to be reaped before its folder goes anyway. */
const REAP_MS = 2_000;

/**
 * Runs one phase of setup or teardown code in a process of its own (runScriptProcess with
 * child/script-worker.cjs, which reads only itself and the two files it loads beside it).
 */
export async function runScriptPhase(job: PhaseJob, limits: PhaseLimits): Promise<PhaseOutcome> {
  const { workerFile, ...rest } = limits;
  const child = (name: string) => join(dirname(workerFile), name);
  const worker = { file: workerFile, readPaths: [workerFile, child('target-fence.cjs'), child('script-guard.cjs')] };
  const outcome = await runScriptProcess({ ...job }, { ...rest, worker });
  if (outcome.kind !== 'done') return outcome;
  const env = outcome.report.env;
  return {
    kind: 'done',
    request: outcome.report.request ?? null,
    env: env !== null && typeof env === 'object' ? Object.fromEntries(Object.entries(env).map(([k, v]) => [k, textOf(v, Infinity)])) : {},
  };
}

/**
 * Runs a script in a process of its own: an empty environment (the script's variables come over
 * IPC in `job`, sent as the `run` message once the worker is ready), Node's permission model
 * reading only the worker's files, core's fence and a fresh folder and writing only that folder,
 * a heap limit, killed with SIGKILL when the worker reports `done`, its time is up or the run is
 * aborted, and its folder removed. Nothing a script does reaches the host's process. One
 * supervisor serves every worker of the package (setup and teardown, multi-step scripts).
 */
export async function runScriptProcess(job: Record<string, unknown>, limits: ScriptProcessLimits): Promise<ScriptOutcome> {
  let dir: string;
  let child: ChildProcess;
  try {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'vigil-api-script-')));
  } catch (err) {
    return { kind: 'not-started', message: `its run folder could not be made: ${err instanceof Error ? err.message : String(err)}` };
  }
  try {
    const coreFence = coreFenceOf(limits.worker.file);
    child = fork(limits.worker.file, [coreFence], {
      cwd: dir,
      env: {},
      execArgv: scriptProcessFlags({
        readPaths: [...limits.worker.readPaths, coreFence],
        writeDir: dir,
        memoryLimitMb: limits.memoryLimitMb,
      }),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    // A host killed mid-phase takes the process with it, also one stuck in a loop.
    endWithHost(child);
  } catch (err) {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    return { kind: 'not-started', message: err instanceof Error ? err.message : String(err) };
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    return await supervise(child, job, limits);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, REAP_MS).unref())]);
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

function supervise(child: ChildProcess, job: Record<string, unknown>, limits: ScriptProcessLimits): Promise<ScriptOutcome> {
  return new Promise<ScriptOutcome>((resolve) => {
    let ready = false;
    let label: string | null = null;
    let stderrTail = '';
    let settled = false;
    const partial = { stdout: '', stderr: '' };

    // Whole lines only, so that a secret split across two pipe reads is still one line to scrub.
    const output = (source: 'stdout' | 'stderr', chunk: string, flush = false) => {
      const lines = (partial[source] + chunk).split('\n');
      partial[source] = flush ? '' : lines.pop()!;
      for (const line of lines) {
        if (line.trim() !== '') limits.log({ source, level: source === 'stderr' ? 'error' : 'info', text: line });
      }
    };
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => output('stdout', chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-TAIL_BYTES);
      output('stderr', chunk);
    });

    const settle = (outcome: ScriptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.signal.removeEventListener('abort', onAbort);
      // Nothing a script does after its phase counts: the process goes at once.
      child.kill('SIGKILL');
      output('stdout', '', true);
      output('stderr', '', true);
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: 'timeout', label }), limits.limitMs);
    // The key the host signs its answers to the fence with; the process gets it before the script runs.
    const fenceKey = randomBytes(32);
    // A check still being answered when the phase ends is not this phase's to report.
    const own = limits.targets;
    const targets: PhaseTargets | null = own
      ? {
          policy: own.policy,
          refused: (refusal) => {
            if (!settled) own.refused(refusal);
          },
        }
      : null;
    const onAbort = () => settle({ kind: 'aborted', label });
    let checksLeft = MAX_TARGET_CHECKS;
    let answering: Promise<void> = Promise.resolve();

    // A process that died under a send reports through its exit; the send itself is not an error.
    child.on('error', () => {});
    const onMessage = (m: Record<string, unknown>) => {
      if (m.type === 'ready' && !ready) {
        ready = true;
        const message = { type: 'run', ...job, withheld: [...WITHHELD_SCRIPT_MODULES], fenceTargets: Boolean(limits.targets), fenceKey: fenceKey.toString('hex') };
        if (child.connected) child.send(message, () => {});
      } else if (m.type === 'log') {
        if (typeof m.text === 'string') limits.log({ source: 'script', level: LEVELS.has(m.level as string) ? (m.level as string) : 'info', text: m.text });
      } else if (m.type === 'target-check' && ready && targets) {
        // One lookup at a time and a bounded number per phase, so that a script cannot tie up the host's resolver.
        const answer = --checksLeft >= 0 ? () => answerTargetCheck(child, m, targets, label, fenceKey) : () => answerOverLimit(child, m, fenceKey);
        // A check that fails (a message of a shape the worker never sends) goes unanswered, and the next is answered.
        answering = answering.then(answer, answer).catch(() => {});
      } else if (m.type === 'target-refused' && ready && targets) {
        recordLocalRefusal(m, targets, label);
      } else if (m.type === 'script' && typeof m.label === 'string') {
        label = m.label.slice(0, RAW_MESSAGE_CHARS);
      } else if (m.type === 'done' && ready) {
        if (m.ok === true) settle({ kind: 'done', report: m });
        else settle({ kind: 'failed', error: scriptError(m.error, label) });
      } else if (ready && !settled) {
        limits.onMessage?.(m);
      }
    };
    child.on('message', (raw) => {
      if (raw === null || typeof raw !== 'object') return;
      // The script can call process.send itself: a message of a shape the worker never sends is
      // ignored, whatever it holds, and never throws in the host.
      try {
        onMessage(raw as Record<string, unknown>);
      } catch {
        // Ignored.
      }
    });
    child.on('exit', (code, signal) => {
      // The exit event may come before the stderr pipe has been read to its end.
      setImmediate(() => {
        if (!ready) {
          settle({ kind: 'not-started', message: `its process ended while starting (${signal ?? `code ${code}`}): ${stderrTail.trim().split('\n').pop() ?? ''}` });
        } else {
          settle({ kind: 'exited', label, code, signal, outOfMemory: /heap out of memory|Allocation failed/i.test(stderrTail) });
        }
      });
    });
    if (limits.signal.aborted) onAbort();
    else limits.signal.addEventListener('abort', onAbort, { once: true });
  });
}

const LEVELS = new Set(['info', 'warn', 'error', 'debug']);

/** What the process said about an error, checked: the script can call process.send itself. */
function scriptError(raw: unknown, label: string | null): ScriptError {
  const e = (raw !== null && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  return {
    name: typeof e.name === 'string' ? e.name.slice(0, 100) : 'Error',
    message: typeof e.message === 'string' ? e.message.slice(0, RAW_MESSAGE_CHARS) : 'The script failed',
    stack: typeof e.stack === 'string' ? e.stack.slice(0, RAW_MESSAGE_CHARS) : '',
    assertion: e.assertion === true,
    label: typeof e.label === 'string' ? e.label.slice(0, RAW_MESSAGE_CHARS) : label,
    code: typeof e.code === 'string' ? e.code.slice(0, 64) : null,
  };
}
