import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { startNode, type Child } from './processes.js';

const SERVER = fileURLToPath(new URL('../../../examples/express-host/src/server.mjs', import.meta.url));

export interface Answer {
  status: number;
  body: any;
  /** How long the answer took. */
  ms: number;
}

export interface RunningHost {
  child: Child;
  base: string;
  /** Calls the Vigil API under /api with the account and key the host printed. */
  api(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<Answer>;
  /** GET of one of the host's own paths (probes). */
  get(path: string, timeoutMs?: number): Promise<Answer>;
  cleanup(): void;
}

async function call(url: string, init: RequestInit, timeoutMs: number): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, ms: Date.now() - started };
}

/**
 * Starts the example host (examples/express-host/src/server.mjs) as a user would, with its state
 * in a temporary directory, and waits until it listens.
 */
export async function startExampleHost(env: Record<string, string>): Promise<RunningHost> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-reliability-'));
  const child = startNode(SERVER, { PORT: '0', VIGIL_STATE_DIR: join(dir, 'state'), VIGIL_EXAMPLE_PAGES: 'false', ...env }, dir);
  const [, port] = await child.waitFor(/listening on http:\/\/localhost:(\d+)/, 30_000);
  const base = `http://127.0.0.1:${port}`;
  const account = /Vigil account: (\S+)/.exec(child.output)![1]!;
  const key = /Vigil API key: (\S+)/.exec(child.output)![1]!;
  const headers = { authorization: `Bearer ${key}`, 'x-service-account': account, 'content-type': 'application/json' };
  return {
    child,
    base,
    api: (method, path, body, timeoutMs = 15_000) =>
      call(`${base}/api${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }, timeoutMs),
    get: (path, timeoutMs = 15_000) => call(`${base}${path}`, {}, timeoutMs),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `startExampleHost` for a test file whose hosts are all killed and cleaned up after the file. */
export function exampleHostsOfFile(): (env: Record<string, string>) => Promise<RunningHost> {
  const hosts: RunningHost[] = [];
  afterAll(async () => {
    for (const host of hosts) {
      host.child.process.kill('SIGKILL');
      await host.child.exited();
      host.cleanup();
    }
  });
  return async (env) => {
    const host = await startExampleHost(env);
    hosts.push(host);
    return host;
  };
}
