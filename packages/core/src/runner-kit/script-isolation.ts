import { Script } from 'node:vm';

/**
 * What a check's code (a browser script, an API check's setup or teardown) may not `require`:
 * raw sockets and process-level tools a check has no use for. Node's permission model does not
 * cover the network, so this keeps scripts to `fetch` and `http(s)`; `module` would hand out a
 * `require` that skips the fence. It is a fence in JavaScript, not a wall: the permission model,
 * the empty environment and the process of its own are the walls.
 */
export const WITHHELD_SCRIPT_MODULES: readonly string[] = Object.freeze([
  'net', 'tls', 'dgram', 'http2', 'inspector', 'cluster', 'child_process', 'worker_threads', 'v8', 'repl', 'trace_events', 'module',
  // Its hooks hand a script the internal handles of other connections (a way to raw sockets).
  'async_hooks',
]);

/** Node's switch for its permission model: `--permission` from Node 23, `--experimental-permission` before. */
export function permissionFlag(nodeVersion: string = process.versions.node): '--permission' | '--experimental-permission' {
  return Number(nodeVersion.split('.')[0]) >= 23 ? '--permission' : '--experimental-permission';
}

export interface ScriptProcessLimits {
  /** Files, or folders as `dir/*`, the process may read besides `writeDir` (its own worker file). */
  readPaths: readonly string[];
  /** The run's own folder: the only place it may write, and where it may read. */
  writeDir: string;
  /** Its V8 heap limit (`--max-old-space-size`). */
  memoryLimitMb: number;
  /** The Node version the process runs on; the host's by default. */
  nodeVersion?: string;
}

/**
 * The `execArgv` of a script's process: Node's permission model on (reads of `readPaths` and the
 * run folder, writes to the run folder; no child processes, worker threads or native addons, since
 * none is allowed), and a heap limit. The process also needs `env: {}`; the variables a script
 * may see are handed over its IPC channel.
 */
export function scriptProcessFlags(limits: ScriptProcessLimits): string[] {
  const memory = Math.floor(limits.memoryLimitMb);
  if (!Number.isFinite(memory) || memory < 1) throw new TypeError(`memoryLimitMb must be a positive number, got ${limits.memoryLimitMb}`);
  return [
    permissionFlag(limits.nodeVersion),
    ...[...limits.readPaths, `${limits.writeDir}/*`].map((p) => `--allow-fs-read=${p}`),
    `--allow-fs-write=${limits.writeDir}/*`,
    `--max-old-space-size=${memory}`,
    '--disable-warning=ExperimentalWarning',
  ];
}

/** The names an API check's setup or teardown code is called with, in order. */
export const API_SCRIPT_PARAMETERS = ['request', 'response', 'require', 'assert'] as const;

/**
 * The source an API check's setup or teardown code is compiled from: an async function of
 * `API_SCRIPT_PARAMETERS`, its body on the second line (compile with `lineOffset: -1` so that
 * errors name the lines as written), so that it may `await` and `return`.
 */
export function apiScriptSource(code: string): string {
  return `(async function (${API_SCRIPT_PARAMETERS.join(', ')}) {\n${code}\n})`;
}

/**
 * Why an API check's setup or teardown code does not compile, with its line, or null when it
 * does. It only compiles (nothing runs), so the host may ask before it stores the code.
 */
export function apiScriptSyntaxError(code: string): string | null {
  try {
    new Script(apiScriptSource(code), { filename: 'script.js', lineOffset: -1 });
    return null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const line = err instanceof Error ? /script\.js:(\d+)/.exec(String(err.stack))?.[1] : undefined;
    return line ? `${message} (line ${line})` : message;
  }
}
