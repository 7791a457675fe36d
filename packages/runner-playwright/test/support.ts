import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlaywrightCheck, RunJob } from '@vigil/core';
import { playwrightCheckFixture, runJobFixture } from '@vigil/core/testing';
import type { SuiteTest } from '../src/index.js';

export const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
/** Browser tests run where Chromium is; CI sets VIGIL_REQUIRE_BROWSER so that a missing browser fails rather than skips. */
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (process.env.VIGIL_REQUIRE_BROWSER && !HAS_CHROMIUM) throw new Error(`VIGIL_REQUIRE_BROWSER is set but there is no Chromium at ${CHROMIUM}`);

export interface Site {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 serving the given HTML pages; anything else is a 404. */
export async function serveSite(routes: Record<string, string>): Promise<Site> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    const page = routes[path];
    if (page === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A RunJob for a Playwright check of these files, with the engine's time limit of the runner. */
export function playwrightJob(files: Record<string, string>, check: Partial<PlaywrightCheck> = {}, job: Partial<Omit<RunJob, 'check'>> = {}): RunJob {
  const full: PlaywrightCheck = { ...playwrightCheckFixture(), accountId: 'account-1', ...check, files } as PlaywrightCheck;
  return runJobFixture(full, { timeoutMs: 660_000, ...job });
}

export const testsOf = (details: unknown) => (details as { tests: SuiteTest[] }).tests;

/** The pids of running processes whose command line or working folder holds `needle` (read from /proc). */
export function processesWith(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        // A process of another user, or one that just ended.
      }
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (state !== 'Z' && (cmdline.includes(needle) || cwd.includes(needle))) pids.push(Number(entry));
    } catch {
      // The process ended while being read.
    }
  }
  return pids;
}

/** Chromium's browser processes on this machine (not its renderers, helpers or crash handlers). */
export function browserProcesses(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const name = args[0]!.split('/').pop()!;
      if (/^(chromium|chrome|chrome-headless-shell|headless_shell)$/.test(name) && !args.some((a) => a.startsWith('--type='))) pids.push(Number(entry));
    } catch {
      // The process ended while being read.
    }
  }
  return pids;
}
