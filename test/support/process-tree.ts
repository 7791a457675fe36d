import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// What becomes of a process's children when it is killed: Linux's /proc shows the tree, and a
// child's parent changes (to init or a subreaper) once its own is gone, so the tree is read first.

/** Reading process trees needs /proc: these tests run on Linux. */
export const HAS_PROC = process.platform === 'linux';

const LOADER = fileURLToPath(new URL('./sources-loader.mjs', import.meta.url));

export interface ProcessInfo {
  pid: number;
  command: string;
  /** When it started, in clock ticks since boot (pids wrap around; this does not). */
  started?: number;
}

function stat(pid: number): { ppid: number; state: string; started: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, ppid: Number(fields[1]), started: Number(fields[19]) };
  } catch {
    return null;
  }
}

function command(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/**
 * Whether `pid` still runs. `process.kill(pid, 0)` also answers for a zombie, a process that has
 * ended but whose parent has not collected it (the init of a container may never do so).
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const s = stat(pid);
  return s !== null && s.state !== 'Z';
}

/** Every running process below `root`, children first. */
function descendants(root: number): ProcessInfo[] {
  const parents = new Map<number, { pid: number; started: number }[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s === null || s.state === 'Z') continue;
    parents.set(s.ppid, [...(parents.get(s.ppid) ?? []), { pid, started: s.started }]);
  }
  const found: ProcessInfo[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const { pid, started } of parents.get(queue.shift()!) ?? []) {
      found.push({ pid, command: command(pid), started });
      queue.push(pid);
    }
  }
  return found;
}

/** The watcher `endWithHost` of @vigil/core starts: its code, on its command line, opens with this comment. */
export const isWatcher = (p: ProcessInfo): boolean => p.command.includes("// Vigil: ends the host's script processes");

/** The CPU time `pid` has used, in clock ticks (user and system; 100 a second on Linux). */
function cpuTicks(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * Resolves once `pid` has used `ticks` more CPU time than now: a process blocked on its IPC
 * channel or a timer uses next to none, so this tells a process stuck in a synchronous loop.
 */
export async function spinning(pid: number, ticks = 30, ms = 10_000): Promise<void> {
  const from = cpuTicks(pid);
  const end = Date.now() + ms;
  while (cpuTicks(pid) - from < ticks) {
    if (Date.now() > end) throw new Error(`process ${pid} used ${cpuTicks(pid) - from} ticks of CPU in ${ms} ms: it is not looping`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves once `pid` has used no CPU time for `quietMs`: it has started and waits for work. */
export async function idle(pid: number, quietMs = 300, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  let last = cpuTicks(pid);
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() > end) throw new Error(`process ${pid} did not come to rest within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
    const now = cpuTicks(pid);
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

/** Polls every 100 ms until none of `processes` runs or `ms` pass; answers those still running. */
export async function stillRunningAfter(processes: ProcessInfo[], ms: number): Promise<ProcessInfo[]> {
  const end = Date.now() + ms;
  for (;;) {
    const left = processes.filter((p) => isRunning(p.pid));
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Kills what a failed test left running, so that a stray script's loop does not outlive the test run. */
function killLeftovers(processes: ProcessInfo[]): void {
  for (const p of processes) {
    if (isRunning(p.pid)) process.kill(p.pid, 'SIGKILL');
  }
}

export interface Fixture {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Its stdout and stderr so far. */
  readonly output: string;
  /** Resolves with the first match of `pattern` in its output; rejects when it exits or `ms` pass first. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** Resolves when it has exited (at once if it has). */
  exited(): Promise<void>;
  /** The processes it started, and theirs, but for the loader's esbuild service (the harness, not the subject). */
  tree(): ProcessInfo[];
  /** Kills it and every process of its tree seen so far, for after a test (a failed one leaves them running). */
  cleanUp(): void;
}

/** Runs a TypeScript file of the repository as a process of its own, against the packages' sources. */
export function startFixture(file: string, env: Record<string, string> = {}): Fixture {
  const child = spawn(process.execPath, ['--import', LOADER, file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let ended = false;
  const seen = new Map<number, ProcessInfo>();
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const l of [...listeners]) l();
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    changed();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    changed();
  });
  child.once('exit', () => {
    ended = true;
    changed();
  });
  return {
    process: child,
    pid: child.pid!,
    get output() {
      return output;
    },
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no ${pattern} within ${ms} ms:\n${output}`)), ms);
        const check = () => {
          const m = pattern.exec(output);
          if (m) done(null, m);
          else if (ended) done(new Error(`it exited before ${pattern}:\n${output}`));
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
    tree() {
      const tree = descendants(child.pid!).filter((p) => !/\/esbuild(\s|$)/.test(p.command));
      for (const p of tree) seen.set(p.pid, p);
      return tree;
    },
    cleanUp() {
      if (!ended) {
        this.tree();
        child.kill('SIGKILL');
      }
      killLeftovers([...seen.values()]);
    },
    exited() {
      return new Promise((resolve) => {
        const check = () => {
          if (!ended) return;
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      });
    },
  };
}
