import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built command, run as an installed bin runs it. */
export const bin = fileURLToPath(new URL('../dist/bin.mjs', import.meta.url));

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/bin.mjs ...args` in `cwd` with only PATH and `env` set. */
export function run(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Result> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * A folder under this package's test directory, so that a config file in it resolves the
 * workspace's packages (`@vigil/core`, `@vigil/cli`, ...) as a host's would. Removed by `remove`.
 */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.tmp-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes `files` (name → text) into `dir`, making subfolders. */
export function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    const file = join(dir, name);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
  }
}

export const ACCOUNT = '0a6c2f5e-7d1b-4c7e-9a51-3f1de0c4b201';
export const SECRET_KEY = 'ab'.repeat(32);

/**
 * A TypeScript config: the host's Vigil on a SQLite file (VIGIL_TEST_DB) with the TCP runner,
 * its account made when missing, and one TCP check on CLI_TEST_PORT. When VIGIL_TEST_CLOSED names
 * a file, closing the Vigil writes it (the command must close what it built).
 */
export const TS_CONFIG = `import { writeFileSync } from 'node:fs';
import { createVigil, type Vigil } from '@vigil/core';
import { TcpCheck } from '@vigil/core/constructs';
import { registerTcpRunner } from '@vigil/runner-tcp';
import { registerKnexStorage } from '@vigil/storage-knex';
import { defineConfig, type CliVigilOptions } from '@vigil/cli';

const account: string = '${ACCOUNT}';

async function vigil(options: CliVigilOptions): Promise<Vigil> {
  const built = createVigil({ secretKey: '${SECRET_KEY}', ...options }, (container) => {
    registerKnexStorage(container, { client: 'sqlite3', connection: process.env.VIGIL_TEST_DB! });
    registerTcpRunner(container);
  });
  await built.accounts.ensure(account);
  const closed = process.env.VIGIL_TEST_CLOSED;
  if (!closed) return built;
  return new Proxy(built, {
    get: (target, key, receiver) => key === 'close'
      ? async (deadlineMs?: number) => { await target.close(deadlineMs); writeFileSync(closed, JSON.stringify(options)); }
      : Reflect.get(target, key, receiver),
  });
}

export default defineConfig({
  vigil,
  account,
  project: 'cli-test',
  constructs: [
    new TcpCheck('db', {
      name: 'Database port',
      request: { hostname: '127.0.0.1', port: Number(process.env.CLI_TEST_PORT) },
      tags: ['smoke'],
    }),
  ],
});
`;
