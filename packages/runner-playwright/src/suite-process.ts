import { spawn } from 'node:child_process';
import { endWithHost } from '@vigil/core';

export interface SuiteProcessOptions {
  cli: string;
  dir: string;
  configFile: string;
  args: string[];
  env: Record<string, string>;
  /** The whole process group is killed at this limit. */
  limitMs: number;
  signal: AbortSignal;
}

export interface SuiteProcessOutcome {
  /** How it ended: on its own, at the limit, or on abort. */
  end: 'exited' | 'limit' | 'aborted';
  exitCode: number | null;
  /** The tail of what it wrote (Playwright's errors when the suite does not load). */
  output: string;
  durationMs: number;
}

const TAIL = 16_384;

/** The process groups of the suites running now: the host's exit kills them (one handler for all of them). */
const liveGroups = new Set<() => void>();
let exitHandler = false;
function killOnExit(kill: () => void): () => void {
  if (!exitHandler) {
    exitHandler = true;
    process.on('exit', () => {
      for (const k of liveGroups) k();
    });
  }
  liveGroups.add(kill);
  return () => liveGroups.delete(kill);
}

/** Whether any process of a group is left. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `playwright test` with the host's Node in the suite's folder, in a process group of its
 * own, with no environment but what it is given. At the limit or on abort the whole group (the
 * runner, its workers, the processes a test started) gets SIGKILL; it resolves once the group is gone.
 */
export function runSuiteProcess(options: SuiteProcessOptions): Promise<SuiteProcessOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [options.cli, 'test', '-c', options.configFile, ...options.args], {
      cwd: options.dir,
      env: options.env,
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const take = (chunk: string) => {
      output = (output + chunk).slice(-TAIL);
    };
    child.stdout!.setEncoding('utf8').on('data', take);
    child.stderr!.setEncoding('utf8').on('data', take);
    endWithHost(child);
    const pid = child.pid;
    let end: SuiteProcessOutcome['end'] = 'exited';
    const killGroup = () => {
      if (pid === undefined) return;
      try {
        if (process.platform !== 'win32') process.kill(-pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const stop = (why: 'limit' | 'aborted') => {
      if (end === 'exited') end = why;
      killGroup();
    };
    // The host's exit takes the suite with it.
    const forget = killOnExit(killGroup);
    const timer = setTimeout(() => stop('limit'), options.limitMs);
    const onAbort = () => stop('aborted');
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    const closed = new Promise<void>((done) => child.once('close', () => done()));
    const finish = async (exitCode: number | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      forget();
      // Whatever the suite started and left behind (a worker, a web server) goes with its group.
      if (pid !== undefined && groupAlive(pid)) {
        killGroup();
        for (let i = 0; i < 100 && groupAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      }
      // The rest of its output, once the pipes close (they do, with every process of the group gone).
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1_000))]);
      resolve({ end, exitCode, output, durationMs: Date.now() - started });
    };
    child.once('error', (err) => {
      output += `\n${err.message}`;
      void finish(null);
    });
    child.once('exit', (code) => void finish(code));
  });
}
