import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const host = fileURLToPath(new URL('./support/lifecycle-host.mjs', import.meta.url));
let target: Server;
let port = 0;
const dir = mkdtempSync(join(tmpdir(), 'vigil-lifecycle-'));

beforeAll(async () => {
  // A host that ends mid-check resets its connection: nothing to report here.
  target = createServer((socket) => socket.on('error', () => {}).end('PONG\n'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  port = (target.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => target.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the host; answers its exit code and output, and when it ended (ms after `ready`). */
function runHost(mode: 'close' | 'signals', onReady: (child: ReturnType<typeof spawn>) => void) {
  const child = spawn(process.execPath, [host], {
    env: { ...process.env, MODE: mode, TARGET_PORT: String(port), DB_FILE: join(dir, `${mode}.sqlite`) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let readyAt = 0;
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (!readyAt && out.includes('ready')) {
      readyAt = Date.now();
      onReady(child);
    }
  });
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise<{ code: number | null; out: string; afterReadyMs: number }>((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, out, afterReadyMs: readyAt ? Date.now() - readyAt : -1 });
    });
  });
}

describe('a host\'s lifecycle', () => {
  it('after close() nothing Vigil opened keeps the process alive: it ends on its own', async () => {
    const r = await runHost('close', () => {});
    expect(r.out).toContain('closed');
    expect(r.code).toBe(0);
    expect(r.afterReadyMs).toBeGreaterThanOrEqual(0);
    expect(r.afterReadyMs).toBeLessThan(5_000);
  });

  it('closeOnSignals stops the engine, closes everything and ends the process on SIGTERM', async () => {
    const r = await runHost('signals', (child) => child.kill('SIGTERM'));
    expect(r.out).toContain('SIGTERM: Vigil is stopping');
    expect(r.out).toContain('Vigil stopped');
    expect(r.code).toBe(0);
    expect(r.afterReadyMs).toBeLessThan(5_000);
  });
});
