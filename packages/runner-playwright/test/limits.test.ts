import { existsSync } from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playwrightRunner, type PlaywrightRunner } from '../src/index.js';
import { CHROMIUM, HAS_CHROMIUM, playwrightJob, processesWith } from './support.js';

/**
 * A suite whose test reports its folder, starts a process of its own (`node -e ... <marker>`, left
 * running) and then sleeps far past any limit. `report` is where it posts its folder.
 */
function sleeper(report: string, marker: string, sync = false): Record<string, string> {
  const wait = sync ? 'const until = Date.now() + 600_000;\n  while (Date.now() < until) {}' : 'await new Promise((r) => setTimeout(r, 600_000));';
  return {
    'sleep.spec.ts': `import { test } from '@playwright/test';
import { spawn } from 'node:child_process';
test('sleeps', async () => {
  test.setTimeout(0);
  spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '${marker}'], { stdio: 'ignore' });
  await fetch('${report}?marker=${marker}&dir=' + encodeURIComponent(process.cwd()));
  ${wait}
});
`,
  };
}

describe.skipIf(!HAS_CHROMIUM)('a suite past its limits', () => {
  let runner: PlaywrightRunner;
  let server: http.Server;
  let report: string;
  /** The folder each suite reported, by its marker, and a callback for the next one. */
  const reported = new Map<string, string>();
  let onReport: (() => void) | null = null;
  beforeAll(async () => {
    runner = playwrightRunner({ executablePath: CHROMIUM });
    server = http.createServer((req, res) => {
      const query = new URL(req.url!, 'http://x').searchParams;
      reported.set(query.get('marker')!, query.get('dir')!);
      res.end('ok');
      onReport?.();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    report = `http://127.0.0.1:${(server.address() as AddressInfo).port}/folder`;
  });
  afterAll(async () => {
    await runner.close();
    server.closeAllConnections();
    server.close();
  });

  it.concurrent('ends as a TIMEOUT shortly after globalTimeout, its folder removed and no process left', async () => {
    const marker = `vigil-marker-${process.pid}-timeout`;
    const started = Date.now();
    const result = await runner.run(playwrightJob(sleeper(report, marker), { globalTimeout: 10_000 }), new AbortController().signal);
    const elapsed = Date.now() - started;
    expect(result).toMatchObject({ hasFailures: true, hasErrors: false, failureKind: 'TIMEOUT', errorMessage: 'The suite ran past its globalTimeout of 10 s' });
    expect(result.details).toMatchObject({ timedOut: true });
    expect(elapsed).toBeGreaterThanOrEqual(10_000);
    // globalTimeout, Playwright's own ending, and a loaded CI machine.
    expect(elapsed).toBeLessThan(20_000);
    // Playwright calls the test it stopped `skipped`; the run says it was interrupted.
    expect((result.details as { tests: { status: string }[] }).tests.map((t) => t.status)).toEqual(['interrupted']);
    const dir = reported.get(marker)!;
    expect(dir).toMatch(/vigil-playwright-/);
    expect(existsSync(dir)).toBe(false);
    expect(processesWith(marker)).toEqual([]);
    expect(processesWith(dir)).toEqual([]);
  }, 40_000);

  it.concurrent('kills a suite stuck in a synchronous loop at its limit', async () => {
    const marker = `vigil-marker-${process.pid}-loop`;
    const started = Date.now();
    const result = await runner.run(playwrightJob(sleeper(report, marker, true), { globalTimeout: 10_000 }), new AbortController().signal);
    expect(result).toMatchObject({ failureKind: 'TIMEOUT', errorMessage: 'The suite ran past its globalTimeout of 10 s' });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(processesWith(marker)).toEqual([]);
    expect(processesWith(reported.get(marker)!)).toEqual([]);
  }, 40_000);

  it('ends a run promptly on abort, killing every process of the suite', async () => {
    const marker = `vigil-marker-${process.pid}-abort`;
    const controller = new AbortController();
    let abortedAt = 0;
    onReport = () => {
      // The suite and its own process are running: stop the run.
      setTimeout(() => {
        abortedAt = Date.now();
        controller.abort();
      }, 200);
    };
    const result = await runner.run(playwrightJob(sleeper(report, marker)), controller.signal);
    onReport = null;
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(3_000);
    expect(result).toMatchObject({ hasFailures: true, failureKind: 'TIMEOUT' });
    expect(processesWith(marker)).toEqual([]);
    const dir = reported.get(marker)!;
    expect(processesWith(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  }, 40_000);
});
