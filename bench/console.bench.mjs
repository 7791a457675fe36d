// The console's home page with 1,000 checks, rendered in Chromium (Debian's, through
// puppeteer-core): from navigation start until every check's row is on the page and every
// sparkline on screen is drawn (the others are drawn as they scroll into view). Each check has 24 hours of hourly results in SQLite, so the page reads real
// statuses and a real aggregate. The baseline, in the same run and the same browser: the very
// HTML the console answered, served from memory by a bare route of the same server, with the same
// scripts (so it draws the same sparklines): the ratio is the share of the render the console's
// server adds. Goal: under 500 ms.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHECKS = Number(process.env.BENCH_CHECKS ?? 1_000);
const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const GOAL_MS = 500;
const HOUR = 3_600_000;
const executablePath = process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium';

if (!existsSync(executablePath)) {
  console.log(`console: skipped, no Chromium at ${executablePath}`);
  process.exit(0);
}

const express = (await import('express')).default;
const { createVigil, slotResultId } = await import('@vigil/core');
const { knexStorage } = await import('@vigil/storage-knex');
const { vigilConsole } = await import('@vigil/console');
const { default: puppeteer } = await import('puppeteer-core');

const dir = mkdtempSync(join(tmpdir(), 'vigil-console-bench-'));
const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'bench.sqlite') });
const vigil = createVigil({ storage, secretKey: 'c'.repeat(64) });
const account = await vigil.accounts.ensure('bench');
const { key } = await vigil.apiKeys.create(account.id, { name: 'bench' });
const seeded = performance.now();
const checks = [];
for (let i = 0; i < CHECKS; i++) {
  checks.push(await vigil.checks.create(account.id, 'TCP', {
    name: `check ${String(i).padStart(4, '0')}`, request: { hostname: `db-${i}.internal`, port: 5432 }, tags: ['bench', `shard-${i % 10}`],
  }, { autoAssignAlerts: false }));
}
// One run an hour for the last 24 hours per check; the newest one is its status.
const hour = Math.floor(Date.now() / HOUR) * HOUR;
for (let h = 23; h >= 0; h--) {
  const due = new Date(hour - h * HOUR + 60_000);
  const results = checks.map((check, i) => {
    const responseTime = 3 + ((i * 7919 + h * 104_729) % 9000) / 100;
    const failed = (i + h) % 97 === 0;
    const startedAt = due.toISOString();
    const stoppedAt = new Date(due.getTime() + Math.round(responseTime)).toISOString();
    return {
      id: slotResultId(check.id, 'eu-west-1', due, 1), checkId: check.id, checkType: 'TCP', name: check.name, runLocation: 'eu-west-1',
      startedAt, stoppedAt, created_at: stoppedAt, responseTime, hasFailures: failed, hasErrors: false, isDegraded: false,
      overMaxResponseTime: false, attempts: 1, resultType: 'FINAL', runSource: 'SCHEDULER', checkSessionId: null, sequenceId: null,
      errorMessage: failed ? 'Connection refused' : null, phases: { total: responseTime }, statusCode: null, sslDaysRemaining: null, details: null,
    };
  });
  for (let i = 0; i < results.length; i += 1000) await storage.checkResults.insertMany(account.id, results.slice(i, i + 1000));
  if (h === 0) {
    for (const r of results) {
      const before = await storage.checkStatuses.get(account.id, r.checkId);
      await storage.checkStatuses.upsert(account.id, {
        ...(before ?? {}), name: r.name, checkId: r.checkId, hasFailures: r.hasFailures, hasErrors: false, isDegraded: false,
        longestRun: r.responseTime, shortestRun: r.responseTime, lastRunLocation: r.runLocation, lastCheckRunId: r.id,
        sslDaysRemaining: null, created_at: before?.created_at ?? r.stoppedAt, updated_at: r.stoppedAt,
      });
    }
  }
}
const seedSeconds = (performance.now() - seeded) / 1000;

const app = express();
let bareHtml = '';
app.get('/bare', (_req, res) => res.type('html').send(bareHtml));
app.use('/console', vigilConsole(vigil, { refreshSeconds: 0 }));
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await puppeteer.launch({ executablePath, pipe: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
await page.goto(`${base}/console/sign-in`);
await page.type('#account', account.id);
await page.type('#key', key);
await Promise.all([page.waitForNavigation(), page.click('button[type=submit].primary')]);

/** Milliseconds from navigation start until every row is there and every sparkline drawn. */
async function render(url) {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  // Sparklines are drawn as their rows come near the viewport: every one on screen must be drawn.
  await page.waitForFunction((n) => {
    if (document.querySelectorAll('[data-check]').length !== n) return false;
    // Only the first rows can be on screen; asking where the others are would make the browser lay them out.
    const onScreen = [...document.querySelectorAll('.spark')].slice(0, 60).filter((el) => el.getBoundingClientRect().top < innerHeight);
    return onScreen.length > 0 && onScreen.every((el) => el.querySelector('canvas'));
  }, { polling: 'raf', timeout: 30_000 }, CHECKS);
  const [done, dcl] = await page.evaluate(() => [performance.now(), performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd]);
  if (process.env.BENCH_VERBOSE) console.log(url, "dcl", dcl.toFixed(0), "done", done.toFixed(0));
  return done;
}

const home = await fetch(`${base}/console/`, { headers: { cookie: (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
bareHtml = await home.text();
if ((bareHtml.match(/role="row" class="row" data-check=/g) ?? []).length !== CHECKS) throw new Error('the home page does not list every check');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const vigilMs = [];
const bareMs = [];
await render(`${base}/console/`); // warm-up: caches the hashed files, as a second visit has them
await render(`${base}/bare`);
for (let i = 0; i < LOADS; i++) {
  vigilMs.push(await render(`${base}/console/`));
  bareMs.push(await render(`${base}/bare`));
}
await browser.close();
server.close();
await vigil.close();
rmSync(dir, { recursive: true, force: true });

const v = median(vigilMs);
const b = median(bareMs);
console.log(`console: ${CHECKS} TCP checks with 24 hourly runs each seeded in ${seedSeconds.toFixed(1)} s; ${LOADS} loads each, median`);
console.log('| page | render (median) | max | baseline (same HTML from memory) | ratio vigil/baseline | goal |');
console.log('|---|---|---|---|---|---|');
console.log(`| home, ${CHECKS} checks | ${v.toFixed(0)} ms | ${Math.max(...vigilMs).toFixed(0)} ms | ${b.toFixed(0)} ms | ${(v / b).toFixed(2)} | < ${GOAL_MS} ms: ${v < GOAL_MS ? 'met' : 'NOT met'} |`);
