import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach } from 'vitest';

export interface Child {
  readonly process: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  readonly output: string;
  /** Its exit code (null: killed by a signal), or undefined while it runs. */
  readonly exitCode: number | null | undefined;
  /** Resolves with the first match of `pattern` in its output; rejects if it exits or `ms` pass first. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** Resolves with its exit code and how long after this call it came. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null; afterMs: number }>;
}

const running = new Set<ChildProcess>();

/** Starts `node script` with only the given environment (and PATH); output is kept, not shown. */
export function startNode(script: string, env: Record<string, string>, cwd?: string): Child {
  const child = spawn(process.execPath, [script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitWaiters: (() => void)[] = [];
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of [...listeners]) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  child.once('exit', (code, signal) => {
    running.delete(child);
    exit = { code, signal };
    for (const l of [...listeners]) l();
    for (const w of exitWaiters.splice(0)) w();
  });
  return {
    process: child,
    get output() { return output; },
    get exitCode() { return exit ? exit.code : undefined; },
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no ${pattern} in the output within ${ms} ms:\n${output}`)), ms);
        const check = () => {
          const m = pattern.exec(output);
          if (m) return done(null, m);
          if (exit) done(new Error(`the process exited (${exit.code ?? exit.signal}) before ${pattern}:\n${output}`));
        };
        function done(err: Error | null, m?: RegExpExecArray) {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolve(m!);
        }
        listeners.add(check);
        check();
      });
    },
    exited() {
      const from = Date.now();
      return new Promise((resolve) => {
        const answer = () => resolve({ code: exit!.code, signal: exit!.signal, afterMs: Date.now() - from });
        if (exit) answer();
        else exitWaiters.push(answer);
      });
    },
  };
}

/** Kills every child a test started and left running (after a failed assertion). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Polls `fn` every `everyMs` until it answers something truthy; throws after `ms`. */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, ms: number, what: string | (() => string) = 'a condition', everyMs = 200): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * The clean-ups of a test file's cases: after each case its processes are killed and what the case
 * pushed is undone, last first (and every process is killed after the file).
 */
export function cleanupsAfterEach(): (() => Promise<void> | void)[] {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    killAll();
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(killAll);
  return cleanups;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
