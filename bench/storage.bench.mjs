// Storage figures of @vigil/storage-knex, each beside a baseline measured in the same run:
// result ingestion (batched) against a plain knex batch insert of the same rows, analytics
// percentiles over 1,000,000 results against a hand-written SQL query, and bytes per result.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knexStorage } from '@vigil/storage-knex';
import knexFactory from 'knex';

const PG_URL = process.env.VIGIL_PG_URL;
const N = Number(process.env.BENCH_RESULTS ?? 20_000);
const BATCH = 1000;
const t0 = Date.UTC(2026, 4, 1);

function result(i) {
  const total = 5 + (i % 97);
  return {
    id: randomUUID(), checkId: 'bench-check', checkType: 'TCP', name: 'bench', runLocation: i % 2 ? 'eu-west-1' : 'us-east-1',
    startedAt: new Date(t0 + i * 1000).toISOString(), stoppedAt: new Date(t0 + i * 1000 + total).toISOString(), created_at: new Date(t0 + i * 1000 + total).toISOString(),
    responseTime: total, hasFailures: i % 50 === 0, hasErrors: false, isDegraded: false, overMaxResponseTime: false, attempts: 1,
    resultType: 'FINAL', runSource: 'SCHEDULER', checkSessionId: null, sequenceId: null, errorMessage: null,
    phases: { dns: 1, connection: total - 2, data: 1, total }, statusCode: null, sslDaysRemaining: null, details: null,
  };
}

async function ingest(storage, rows) {
  const start = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) await storage.checkResults.insertMany('bench-account', rows.slice(i, i + BATCH));
  return performance.now() - start;
}

/** The baseline: the same rows, as plain objects, batch-inserted by knex into a table of the same columns. */
async function plainIngest(knex, rows) {
  if (!(await knex.schema.hasTable('bench_plain'))) await knex.schema.createTable('bench_plain', (t) => {
    t.increments('seq'); t.string('id', 64).unique(); t.string('account_id', 64); t.string('check_id', 64); t.bigInteger('started_ms');
    t.string('run_location', 128); t.integer('status_code'); t.double('response_time'); t.boolean('failed'); t.integer('attempts');
    t.string('result_type', 16); t.string('check_session_id', 64); t.text('phases'); t.text('data');
    t.index(['account_id', 'check_id', 'started_ms']); t.index(['started_ms']);
  });
  const plain = rows.map((r) => ({
    id: r.id, account_id: 'bench-account', check_id: r.checkId, started_ms: Date.parse(r.startedAt), run_location: r.runLocation,
    status_code: null, response_time: r.responseTime, failed: r.hasFailures, attempts: 1, result_type: 'FINAL', check_session_id: null,
    phases: JSON.stringify(r.phases), data: JSON.stringify(r),
  }));
  const start = performance.now();
  // The same statement shape as the store: 500 rows a statement (SQLite's compound-select limit), one transaction a batch.
  for (let i = 0; i < plain.length; i += BATCH) {
    await knex.transaction(async (trx) => {
      for (let j = i; j < Math.min(i + BATCH, plain.length); j += 500) await trx('bench_plain').insert(plain.slice(j, Math.min(j + 500, i + BATCH)));
    });
  }
  return performance.now() - start;
}

const rows = (salt) => Array.from({ length: N }, (_, i) => ({ ...result(i + salt), id: randomUUID() }));
const rate = (ms) => Math.round(N / (ms / 1000));
const line = (what, figure, baseline, unit = 'results/s') => console.log(`${what.padEnd(46)} ${String(figure).padStart(9)} ${unit.padEnd(9)} baseline ${String(baseline).padStart(9)}   ratio ${(figure / baseline).toFixed(2)}`);

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  try {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'vigil.sqlite') });
    await storage.migrate();
    const before = statSync(join(dir, 'vigil.sqlite')).size;
    await ingest(storage, rows(0));
    const after = statSync(join(dir, 'vigil.sqlite')).size;
    await plainIngest(storage.knex, rows(N));
    // Measured after a first round of each, so neither pays for warming up.
    const vigilMs = await ingest(storage, rows(2 * N));
    const plainMs = await plainIngest(storage.knex, rows(3 * N));
    line('ingestion, SQLite file', rate(vigilMs), rate(plainMs));
    console.log(`${'bytes per stored TCP result, SQLite'.padEnd(46)} ${String(Math.round((after - before) / N)).padStart(9)} bytes`);
    await storage.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres() {
  const schema = `vigil_bench_${Date.now()}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL });
  await admin.raw(`create schema ${schema}`);
  const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 1, max: 4 } });
  try {
    const storage = knexStorage({ knex });
    await storage.migrate();
    await ingest(storage, rows(0));
    await plainIngest(knex, rows(N));
    const vigilMs = await ingest(storage, rows(2 * N));
    const plainMs = await plainIngest(knex, rows(3 * N));
    line('ingestion, PostgreSQL', rate(vigilMs), rate(plainMs));
    const size = (await knex.raw("select pg_total_relation_size('vigil_check_results') as b")).rows[0].b;
    console.log(`${'bytes per stored TCP result, PostgreSQL'.padEnd(46)} ${String(Math.round(Number(size) / (2 * N))).padStart(9)} bytes (with indexes)`);

    // 1,000,000 results of one check, generated inside the database.
    const M = Number(process.env.BENCH_ANALYTICS_RESULTS ?? 1_000_000);
    await knex.raw(`insert into vigil_check_results (id, account_id, check_id, started_ms, run_location, response_time, failed, attempts, result_type, phases, data)
      select 'gen-' || g, 'bench-account', 'big-check', ${t0} + g * 1000, 'eu-west-1', (g % 997) * 0.5, g % 50 = 0, 1, 'FINAL',
        json_build_object('total', (g % 997) * 0.5)::text, '{}'
      from generate_series(1, ${M}) g`);
    await knex.raw('analyze vigil_check_results');
    // total_p95 / total_p99 of the TCP analytics: the service reads TCP total as the response time.
    const query = { checkIds: ['big-check'], from: new Date(t0), to: new Date(t0 + (M + 1) * 1000), measures: [
      { name: 'total_p95', field: 'responseTime', fn: 'p95' }, { name: 'total_p99', field: 'responseTime', fn: 'p99' },
    ] };
    const best = async (fn) => { let b = Infinity; for (let i = 0; i < 3; i++) { const s = performance.now(); await fn(); b = Math.min(b, performance.now() - s); } return b; };
    const vigil = await best(() => storage.checkResults.aggregate('bench-account', query));
    const hand = await best(() => knex.raw(`select percentile_cont(0.95) within group (order by response_time),
      percentile_cont(0.99) within group (order by response_time)
      from vigil_check_results where account_id = 'bench-account' and check_id = 'big-check' and started_ms >= ? and started_ms < ?`, [t0, t0 + (M + 1) * 1000]));
    console.log(`${`analytics p95/p99 over ${M} results, PostgreSQL`.padEnd(46)} ${vigil.toFixed(0).padStart(9)} ms        baseline ${hand.toFixed(0).padStart(9)} ms   ratio ${(vigil / hand).toFixed(2)} (time: lower is better)`);
  } finally {
    await knex.destroy();
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  }
}

try {
  await sqlite();
  if (PG_URL) await postgres();
  else console.log('PostgreSQL figures skipped: set VIGIL_PG_URL');
} catch (err) {
  console.error(`storage benchmark failed: ${String(err.message ?? err).slice(0, 400)}`);
  process.exit(1);
}
