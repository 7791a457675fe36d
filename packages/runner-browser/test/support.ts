import { existsSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserCheck, RunJob } from '@vigil/core';
import { browserCheckFixture, runJobFixture } from '@vigil/core/testing';

export const CHROMIUM = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';
/** Debian's chromium-headless-shell: the lighter build the runner also supports. */
export const HEADLESS_SHELL = process.env.VIGIL_HEADLESS_SHELL ?? '/usr/bin/chromium-headless-shell';
/** Browser tests run where Chromium is; CI sets VIGIL_REQUIRE_BROWSER so that a missing browser fails rather than skips. */
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (process.env.VIGIL_REQUIRE_BROWSER) {
  for (const build of [CHROMIUM, HEADLESS_SHELL]) {
    if (!existsSync(build)) throw new Error(`VIGIL_REQUIRE_BROWSER is set but there is no Chromium at ${build}`);
  }
}
/** The Chromium builds on this machine that the runner's own tests run against, each in turn. */
export const CHROMIUM_BUILDS = [...new Set([CHROMIUM, HEADLESS_SHELL])].filter((build) => existsSync(build));

export interface Site {
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

type Route = string | ((req: http.IncomingMessage, res: http.ServerResponse) => void);

/** A real HTTP server on 127.0.0.1 serving the given pages (HTML strings or handlers); anything else is a 404. */
export async function serveSite(routes: Record<string, Route>): Promise<Site> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    const route = routes[path];
    if (typeof route === 'function') return route(req, res);
    if (typeof route === 'string') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(route);
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A shop's home page: title Shop, a heading #title that the button #add changes, and a console message. */
export const SHOP_PAGE = `<!doctype html><html lang="en"><head><title>Shop</title></head><body>
<h1 id="title">Welcome</h1>
<button id="add" onclick="document.getElementById('title').textContent = 'Added to cart'">Add</button>
<script>console.log('shop ready')</script>
</body></html>`;

export interface BrowserJobOptions {
  script: string;
  check?: Partial<Omit<BrowserCheck, 'script'>>;
  job?: Partial<Omit<RunJob, 'check'>>;
}

/** A RunJob for a browser check, built from the core fixture so every field has its schema default. */
export function browserJob({ script, check = {}, job = {} }: BrowserJobOptions): RunJob {
  const fullCheck: BrowserCheck = { ...browserCheckFixture(), accountId: 'account-1', ...check, script };
  return runJobFixture(fullCheck, { timeoutMs: 30_000, ...job });
}
