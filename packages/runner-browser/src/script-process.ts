import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { endWithHost, scriptProcessFlags } from '@vigil/core';
import type { CodeCache } from './code-cache.js';
import type { DevToolsGate, GateClient } from './devtools-gate.js';

/** What a script's process tells about a line it logged or an image it took. */
export interface ScriptLog {
  source: 'script' | 'stdout' | 'stderr';
  level: string;
  text: string;
}
export interface ScriptArtifact {
  name: string;
  contentType: string;
  data: Uint8Array;
}
export interface ScriptError {
  name: string;
  message: string;
  stack: string;
  /** Thrown by node:assert or expect. */
  assertion?: boolean;
}

export type ScriptOutcome =
  | { kind: 'done'; ok: true; degraded: string | null }
  | { kind: 'done'; ok: false; error: ScriptError; degraded: string | null }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'exited'; code: number | null; signal: string | null; outOfMemory: boolean };

export interface ScriptJob {
  contextId: string;
  env: Record<string, string>;
  scriptFile: string;
  /** The script and its dependencies, written by the process before the script starts. */
  files: { path: string; content: string }[];
  code: string;
  /** The names the script's code is wrapped with (validate.ts). */
  params: string;
  secrets: string[];
  /** Modules the script may not require (core's WITHHELD_SCRIPT_MODULES). */
  withheld: readonly string[];
  /**
   * The run is under a target policy: the process opens no connection of its own (TCP, UDP, a
   * DNS server of its choosing; child/network-fence.cjs), and reports each one it refused.
   */
  fenceNetwork: boolean;
}

/** A connection the script's process refused under a target policy: where it was going. */
export interface ScriptConnection {
  host: string;
  port: number;
}

export interface ScriptProcessOptions {
  /** The process's entry (child/load-worker.cjs), which loads `workerFile` with the code cache. */
  loaderFile: string;
  /** The worker: dist/script-worker.cjs (bundled with its modules), or child/worker.cjs from the sources. */
  workerFile: string;
  /** Core's child/fence.cjs, by its real path: the loader requires it first (it is in `readPaths`). */
  fenceFile: string;
  /** What the script's process may read besides its run folder and the code cache: files, or folders as `dir/*`. */
  readPaths: string[];
  codeCache: CodeCache;
  memoryLimitMb: number;
  /** How long the process may take to start and connect to the browser. */
  startTimeoutMs: number;
}

const TAIL_BYTES = 4096;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/**
 * The host's handle on one script process: started ahead (modules loaded, connected to its
 * browser) so a run does not wait for it, used for exactly one run, then killed with its folder.
 */
export class ScriptProcess {
  private stderrTail = '';
  private exited: { code: number | null; signal: string | null } | null = null;
  private listeners: ((m: Record<string, unknown>) => void)[] = [];
  private onExit: (() => void) | null = null;
  private logSink: ((log: ScriptLog) => void) | null = null;
  /** Its connection to the browser, through the gate. */
  private devtools: GateClient | null = null;

  private constructor(
    private readonly child: ChildProcess,
    /** The run's own folder: the script, its dependencies, anything it writes. */
    readonly dir: string,
    private readonly options: ScriptProcessOptions,
    private readonly makeCodeCache: boolean,
  ) {
    child.on('message', (m: Record<string, unknown>) => {
      if (m?.type === 'cdp') {
        if (typeof m.data === 'string') this.devtools?.receive(m.data);
        return;
      }
      for (const l of this.listeners) l(m);
    });
    // A process that died under a send reports through its exit; the send itself is not an error.
    child.on('error', () => {});
    child.on('exit', (code, signal) => {
      this.exited = { code, signal };
      this.onExit?.();
    });
    child.on('close', () => {
      this.output('stdout', '', true);
      this.output('stderr', '', true);
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.output('stdout', chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-TAIL_BYTES);
      this.output('stderr', chunk);
    });
  }

  private readonly partial = { stdout: '', stderr: '' };

  /** Whole lines only, so that a secret split across two pipe reads is still one line to scrub. */
  private output(source: 'stdout' | 'stderr', chunk: string, flush = false) {
    const lines = (this.partial[source] + chunk).split('\n');
    this.partial[source] = flush ? '' : lines.pop()!;
    for (const line of lines) {
      if (line.trim() !== '') this.logSink?.({ source, level: source === 'stderr' ? 'error' : 'info', text: line });
    }
  }

  get alive(): boolean {
    return this.exited === null;
  }

  /**
   * Starts a process with an empty environment. It loads its modules while the host makes the
   * run's context; `connect` then hands it the browser.
   */
  static async spawn(options: ScriptProcessOptions): Promise<ScriptProcess> {
    const dir = await mkdtemp(join(tmpdir(), 'vigil-run-'));
    const cache = await options.codeCache.next();
    const execArgv = scriptProcessFlags({ readPaths: [...options.readPaths, `${dirname(cache.file)}/*`], writeDir: dir, memoryLimitMb: options.memoryLimitMb });
    const child = fork(options.loaderFile, [options.workerFile, cache.file, options.fenceFile], {
      cwd: dir,
      env: {},
      execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    // A host killed while the process waits or runs takes it along, also one stuck in a loop.
    endWithHost(child);
    return new ScriptProcess(child, dir, options, cache.make);
  }

  /** Connects the process to the browser through `gate`, limited to the run's context and folder; disposes of it when that fails. */
  async connect(gate: DevToolsGate, viewport: { width: number; height: number } | null, contextId: string): Promise<void> {
    this.devtools = gate.client({ contextId, dir: this.dir, send: (data) => this.send({ type: 'cdp', data }) });
    let rejected = false;
    const onCache = (m: Record<string, unknown>) => {
      // Taken only while starting: once a script runs, what the process sends is the script's.
      if (m.type === 'code-cache' && m.data instanceof Uint8Array) void this.options.codeCache.store(m.data);
      else if (m.type === 'ready' && m.codeCacheRejected === true) rejected = true;
    };
    this.listeners.push(onCache);
    try {
      await this.expect('ready', this.options.startTimeoutMs, () => this.send({ type: 'connect', viewport, contextId, makeCodeCache: this.makeCodeCache }));
      if (rejected) this.options.codeCache.invalidate();
    } catch (err) {
      await this.dispose();
      throw err;
    } finally {
      this.listeners = this.listeners.filter((l) => l !== onCache);
    }
  }

  private expect(type: string, timeoutMs: number, kick: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`The script process did not start within ${timeoutMs} ms`)), timeoutMs);
      const finish = (err?: Error) => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
        this.onExit = null;
        if (err) reject(err);
        else resolve();
      };
      const listener = (m: Record<string, unknown>) => {
        if (m.type === type) finish();
        else if (m.type === 'fatal') finish(new Error(`The script process could not start: ${(m.error as ScriptError).message}`));
      };
      this.listeners.push(listener);
      this.onExit = () => finish(new Error(`The script process ended while starting: ${this.stderrTail.trim().split('\n').pop() ?? ''}`));
      kick();
    });
  }

  /**
   * Runs the job and resolves with how it ended: the script's own verdict, its time limit, an
   * abort from the engine, or the process ending (exit, a crash, out of memory).
   */
  run(
    job: ScriptJob,
    limitMs: number,
    signal: AbortSignal,
    sinks: { log: (log: ScriptLog) => void; artifact: (a: ScriptArtifact) => void; started: () => void; refused?: (c: ScriptConnection) => void },
  ): Promise<ScriptOutcome> {
    this.logSink = sinks.log;
    return new Promise<ScriptOutcome>((resolve) => {
      let settled = false;
      const timer = setTimeout(() => settle({ kind: 'timeout' }), limitMs);
      const onAbort = () => settle({ kind: 'aborted' });
      const settle = (outcome: ScriptOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.listeners = [];
        this.onExit = null;
        // Nothing a script does after its verdict counts; the process goes at once.
        this.kill();
        resolve(outcome);
      };
      this.listeners.push((m) => {
        if (m.type === 'log') sinks.log({ source: 'script', level: String(m.level), text: String(m.text) });
        else if (m.type === 'artifact') {
          // The script can call process.send itself: only an image with a plain name is taken.
          const { name, contentType, data } = m as Partial<ScriptArtifact>;
          if (data instanceof Uint8Array && typeof name === 'string' && typeof contentType === 'string' && IMAGE_TYPES.has(contentType)) {
            sinks.artifact({ name: name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100), contentType, data });
          }
        }
        else if (m.type === 'started') sinks.started();
        else if (m.type === 'net-refused' && job.fenceNetwork) {
          // Sent by the fence, or by the script itself, which then only fails its own run.
          sinks.refused?.({ host: String(m.host).slice(0, 300), port: Number(m.port) || 0 });
        }
        else if (m.type === 'done') {
          const degraded = (m.degraded as string | null) ?? null;
          settle(m.ok ? { kind: 'done', ok: true, degraded } : { kind: 'done', ok: false, error: m.error as ScriptError, degraded });
        }
      });
      this.onExit = () => {
        // The exit event may come before the stderr pipe has been read to its end.
        setImmediate(() => settle({
          kind: 'exited',
          code: this.exited?.code ?? null,
          signal: this.exited?.signal ?? null,
          outOfMemory: /heap out of memory|Allocation failed/i.test(this.stderrTail),
        }));
      };
      if (signal.aborted) return settle({ kind: 'aborted' });
      signal.addEventListener('abort', onAbort, { once: true });
      if (!this.alive) return this.onExit();
      this.send({ type: 'run', ...job });
    });
  }

  private send(message: unknown): void {
    if (this.alive && this.child.connected) this.child.send(message as object, () => {});
  }

  kill(): void {
    this.devtools?.close();
    if (this.alive) this.child.kill('SIGKILL');
  }

  /** Kills the process and removes its folder. */
  async dispose(): Promise<void> {
    this.kill();
    await rm(this.dir, { recursive: true, force: true }).catch(() => {});
  }
}
