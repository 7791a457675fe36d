// HTTP figures of @vigil/http-express-adapter with 10,000 checks in SQLite, measured by autocannon
// from this process against a server in a child process: GET /api/v1/checks/{id} and
// GET /api/v1/check-statuses, each beside a bare Express route of the same server that returns
// the same JSON from memory.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const CHECKS = Number(process.env.BENCH_CHECKS ?? 10_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);

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
  const vigil = createVigil({ storage, secretKey: 'b'.repeat(64) });
  const account = await vigil.accounts.ensure('bench');
  const { key } = await vigil.apiKeys.create(account.id, { name: 'bench' });
  const started = performance.now();
  let first;
  for (let i = 0; i < CHECKS; i++) {
    const check = await vigil.checks.create(account.id, 'TCP', {
      name: `check ${i}`, request: { hostname: `db-${i}.internal`, port: 5432 }, tags: ['bench', `shard-${i % 10}`],
    }, { autoAssignAlerts: false });
    first ??= check;
  }
  const seedSeconds = (performance.now() - started) / 1000;
  const checkJson = await vigil.checks.get(account.id, first.id);
  const statusesJson = await vigil.checkStatuses.list(account.id);
  const app = express();
  app.get('/bare/check', (_req, res) => res.json(checkJson));
  app.get('/bare/statuses', (_req, res) => res.json(statusesJson));
  app.use('/api', vigilRouter(vigil, { rateLimit: false }));
  const server = app.listen(0, '127.0.0.1', () => {
    process.send({ port: server.address().port, key, accountId: account.id, checkId: first.id, seedSeconds });
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

function load(url, headers, connections) {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections, duration: DURATION }, (err, r) => {
      if (err) return reject(err);
      if (r.non2xx > 0 || r.errors > 0) return reject(new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`));
      resolve({ rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50 });
    });
  });
}

const rows = [];

async function measure(db) {
  const child = fork(fileURLToPath(import.meta.url), ['serve', db], { stdio: 'inherit' });
  const info = await new Promise((resolve) => child.once('message', resolve));
  const base = `http://127.0.0.1:${info.port}`;
  const headers = { authorization: `Bearer ${info.key}`, 'x-service-account': info.accountId };
  console.log(`${db}: seeded ${CHECKS} TCP checks through the API service in ${info.seedSeconds.toFixed(1)} s; ${DURATION} s per load`);
  const pair = async (label, vigilUrl, bareUrl, connections) => {
    // Warm both routes before measuring.
    await load(vigilUrl, headers, connections).catch((e) => { throw e; });
    const bare = await load(bareUrl, headers, connections);
    const api = await load(vigilUrl, headers, connections);
    rows.push({
      db, measure: label, connections,
      'vigil req/s': Math.round(api.rps), 'vigil p50 ms': api.p50, 'vigil p99 ms': api.p99,
      'bare req/s': Math.round(bare.rps), 'bare p99 ms': bare.p99, 'ratio (req/s)': +(api.rps / bare.rps).toFixed(2),
    });
  };
  await pair('GET /api/v1/checks/{id}', `${base}/api/v1/checks/${info.checkId}`, `${base}/bare/check`, 10);
  await pair(`GET /api/v1/check-statuses (${CHECKS} checks)`, `${base}/api/v1/check-statuses`, `${base}/bare/statuses`, 1);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.disconnect();
  await exited;
}

async function main() {
  await measure('sqlite');
  if (process.env.VIGIL_PG_URL) await measure('postgres');
  else console.log('postgres: skipped (set VIGIL_PG_URL)');
  console.table(rows);
  console.log('targets: check read >= 0.5 of the bare route; check statuses for 10,000 checks under 100 ms (p99 above)');
}

if (process.argv[2] === 'serve') await serve();
else await main();
