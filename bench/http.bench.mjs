// HTTP figures of @vigil/http-express-adapter with 10,000 checks in SQLite, measured by autocannon
// from this process against a server in a child process: GET /api/v1/checks/{id} and
// GET /api/v1/check-statuses, each beside a bare Express route of the same server that returns
// the same JSON from memory. Before measuring, every check has a stored run and status, written
// through the storage port as the engine's result sink writes them (results with insertMany in
// batches, each check's first status with checkStatuses.replace from none): the statuses route
// then answers 10,000 real statuses, not "no runs yet" entries, and the bare route answers the same
// JSON (checked before the load). The read of one check is measured twice: every request for the
// same check (as the goal's row), then a different check on each request (1,000 in turn, beside a
// bare route answering each from memory), where no two requests at once share a read.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const CHECKS = Number(process.env.BENCH_CHECKS ?? 10_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
/** How many checks the row that reads a different check per request goes round. */
const SPREAD = Math.min(CHECKS, 1000);

async function serve() {
  const express = (await import('express')).default;
  const { createVigil } = await import('@vigil/core');
  const { knexStorage } = await import('@vigil/storage-knex');
  const { vigilRouter } = await import('@vigil/http-express-adapter');
  const dir = mkdtempSync(join(tmpdir(), 'vigil-http-bench-'));
  const pg = process.argv[3] === 'postgres';
  const storage = pg
    ? knexStorage({ client: 'pg', connection: process.env.VIGIL_PG_URL, tablePrefix: `bench_http_${process.pid}_` })
    : knexStorage({ client: 'sqlite3', connection: join(dir, 'bench.sqlite') });
  // Internal errors (a 500 answered under load) are printed, so a failed load says why.
  const printed = (level) => (message, fields) => console.error(`server ${level}: ${message}`, fields ?? '');
  const logger = { debug() {}, info() {}, warn: printed('warn'), error: printed('error'), child: () => logger };
  const vigil = createVigil({ storage, secretKey: 'b'.repeat(64), logger });
  const account = await vigil.accounts.ensure('bench');
  const { key } = await vigil.apiKeys.create(account.id, { name: 'bench' });
  const started = performance.now();
  const checks = [];
  for (let i = 0; i < CHECKS; i++) {
    checks.push(await vigil.checks.create(account.id, 'TCP', {
      name: `check ${i}`, request: { hostname: `db-${i}.internal`, port: 5432 }, tags: ['bench', `shard-${i % 10}`],
    }, { autoAssignAlerts: false }));
  }
  const first = checks[0];
  const seedSeconds = (performance.now() - started) / 1000;
  const ranAt = performance.now();
  await storeRuns(storage, account.id, checks);
  const runSeconds = (performance.now() - ranAt) / 1000;
  const checkJson = await vigil.checks.get(account.id, first.id);
  // The checks read one each in turn (the bare route answers them from memory).
  const spread = new Map();
  for (const check of checks.slice(0, SPREAD)) spread.set(check.id, await vigil.checks.get(account.id, check.id));
  const statusesJson = await vigil.checkStatuses.list(account.id);
  const app = express();
  app.get('/bare/check', (_req, res) => res.json(checkJson));
  app.get('/bare/checks/:id', (req, res) => res.json(spread.get(req.params.id)));
  app.get('/bare/statuses', (_req, res) => res.json(statusesJson));
  app.use('/api', vigilRouter(vigil, { rateLimit: false }));
  const server = app.listen(0, '127.0.0.1', () => {
    process.send({ port: server.address().port, key, accountId: account.id, checkId: first.id, spreadIds: [...spread.keys()], seedSeconds, runSeconds });
  });
  process.on('disconnect', async () => {
    server.close();
    if (pg) {
      const tables = await storage.knex.raw("select tablename from pg_tables where tablename like ?", [`bench_http_${process.pid}_%`]);
      for (const { tablename } of tables.rows) await storage.knex.schema.dropTableIfExists(tablename);
    }
    await vigil.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

/**
 * One scheduled run of every check, stored as the engine's result sink stores it: the results with
 * checkResults.insertMany (batches of 1,000), then each check's first status with
 * checkStatuses.replace(expected none). 2 % of the runs fail; the rest pass in 3 to 92 ms.
 */
async function storeRuns(storage, accountId, checks) {
  const { slotResultId } = await import('@vigil/core');
  const due = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
  const results = checks.map((check, i) => {
    const runLocation = i % 2 ? 'eu-west-1' : 'us-east-1';
    const responseTime = 3 + ((i * 7919) % 9000) / 100;
    const startedAt = new Date(due.getTime() + 5).toISOString();
    const stoppedAt = new Date(due.getTime() + 5 + Math.round(responseTime)).toISOString();
    const failed = i % 50 === 0;
    return {
      id: slotResultId(check.id, runLocation, due, 1), checkId: check.id, checkType: 'TCP', name: check.name, runLocation,
      startedAt, stoppedAt, created_at: stoppedAt, responseTime, hasFailures: failed, hasErrors: false, isDegraded: false,
      overMaxResponseTime: false, attempts: 1, resultType: 'FINAL', runSource: 'SCHEDULER', checkSessionId: null, sequenceId: null,
      errorMessage: failed ? `Connection refused by db-${i}.internal:5432` : null,
      phases: { dns: 0.5, connection: responseTime - 1, data: 0.5, total: responseTime }, statusCode: null, sslDaysRemaining: null,
      details: null,
    };
  });
  for (let i = 0; i < results.length; i += 1000) await storage.checkResults.insertMany(accountId, results.slice(i, i + 1000));
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < results.length) {
      const r = results[next++];
      const written = await storage.checkStatuses.replace(accountId, null, {
        name: r.name, checkId: r.checkId, hasFailures: r.hasFailures, hasErrors: r.hasErrors, isDegraded: r.isDegraded,
        longestRun: r.responseTime, shortestRun: r.responseTime, lastRunLocation: r.runLocation, lastCheckRunId: r.id,
        sslDaysRemaining: r.sslDaysRemaining, created_at: r.stoppedAt, updated_at: r.stoppedAt,
      });
      if (!written) throw new Error(`the status of ${r.checkId} was there already`);
    }
  }));
}

/** Both routes answer the same statuses, one per check, each from a stored run. */
async function sameStatuses(vigilUrl, bareUrl, headers) {
  const [api, bare] = await Promise.all([vigilUrl, bareUrl].map(async (url) => {
    const res = await fetch(url, { headers });
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    return res.json();
  }));
  if (JSON.stringify(api) !== JSON.stringify(bare)) throw new Error('the bare statuses route does not answer the JSON of GET /api/v1/check-statuses');
  const ran = api.filter((s) => s.lastCheckRunId !== null && s.updated_at !== null).length;
  if (api.length !== CHECKS || ran !== CHECKS) throw new Error(`GET /api/v1/check-statuses answered ${api.length} statuses, ${ran} from a stored run; expected ${CHECKS}`);
  return api.filter((s) => s.hasFailures).length;
}

/** `paths`: each request takes the next of them in turn (default: the url's own path every time). */
function load(url, headers, connections, paths) {
  let next = 0;
  const requests = paths ? [{ setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }] : undefined;
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections, duration: DURATION, ...(requests ? { requests } : {}) }, (err, r) => {
      if (err) return reject(err);
      if (r.non2xx > 0 || r.errors > 0) return reject(new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors (statuses ${JSON.stringify(r.statusCodeStats)})`));
      resolve({ rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50 });
    });
  });
}

const rows = [];

async function measure(db) {
  // BENCH_SERVER_ARGS passes node options to the server (`--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const execArgv = (process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean);
  const child = fork(fileURLToPath(import.meta.url), ['serve', db], { stdio: 'inherit', execArgv });
  const info = await new Promise((resolve) => child.once('message', resolve));
  const base = `http://127.0.0.1:${info.port}`;
  const headers = { authorization: `Bearer ${info.key}`, 'x-service-account': info.accountId };
  const failing = await sameStatuses(`${base}/api/v1/check-statuses`, `${base}/bare/statuses`, headers);
  console.log(`${db}: seeded ${CHECKS} TCP checks through the API service in ${info.seedSeconds.toFixed(1)} s; ${DURATION} s per load`);
  console.log(`${db}: a stored run and status for each check (${failing} failing) in ${info.runSeconds.toFixed(1)} s; both statuses routes answer the same JSON`);
  const pair = async (label, vigilUrl, bareUrl, connections, paths = {}) => {
    // Warm both routes before measuring.
    await load(vigilUrl, headers, connections, paths.vigil);
    const bare = await load(bareUrl, headers, connections, paths.bare);
    const api = await load(vigilUrl, headers, connections, paths.vigil);
    rows.push({
      db, measure: label, connections,
      'vigil req/s': Math.round(api.rps), 'vigil p50 ms': api.p50, 'vigil p99 ms': api.p99,
      'bare req/s': Math.round(bare.rps), 'bare p99 ms': bare.p99, 'ratio (req/s)': +(api.rps / bare.rps).toFixed(2),
    });
    console.log(`${db}: ${JSON.stringify(rows.at(-1))}`);
  };
  await pair('GET /api/v1/checks/{id}', `${base}/api/v1/checks/${info.checkId}`, `${base}/bare/check`, 10);
  // The same route when no two requests at once ask for the same check: nothing is shared.
  await pair(`GET /api/v1/checks/{id} (${SPREAD} checks in turn)`, `${base}/api/v1/checks/${info.checkId}`, `${base}/bare/check`, 10, {
    vigil: info.spreadIds.map((id) => `/api/v1/checks/${id}`), bare: info.spreadIds.map((id) => `/bare/checks/${id}`),
  });
  await pair(`GET /api/v1/check-statuses (${CHECKS} checks)`, `${base}/api/v1/check-statuses`, `${base}/bare/statuses`, 1);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.disconnect();
  await exited;
}

async function main() {
  // BENCH_DBS=postgres (or sqlite) measures one database only.
  const dbs = (process.env.BENCH_DBS ?? 'sqlite,postgres').split(',');
  if (dbs.includes('sqlite')) await measure('sqlite');
  if (!dbs.includes('postgres')) return finish();
  if (process.env.VIGIL_PG_URL) await measure('postgres');
  else console.log('postgres: skipped (set VIGIL_PG_URL)');
  finish();
}

function finish() {
  console.table(rows);
  for (const line of goals(rows)) console.log(line);
}

/** Each goal beside its figure, per database: met or NOT met. */
function goals(measured) {
  const lines = [];
  for (const row of measured) {
    // The row of a different check per request has no goal of its own: it shows what sharing gives.
    if (row.measure.includes('in turn')) continue;
    const checks = row.measure.startsWith('GET /api/v1/checks/');
    const wanted = checks
      ? [['ratio (req/s) >= 0.7', row['ratio (req/s)'], row['ratio (req/s)'] >= 0.7]]
      : [['ratio (req/s) >= 0.6', row['ratio (req/s)'], row['ratio (req/s)'] >= 0.6], ['p99 < 100 ms', row['vigil p99 ms'], row['vigil p99 ms'] < 100]];
    for (const [goal, figure, met] of wanted) lines.push(`goal ${row.db} ${row.measure}: ${goal}: ${figure} ${met ? 'met' : 'NOT met'}`);
  }
  return lines;
}

if (process.argv[2] === 'serve') await serve();
else await main();
