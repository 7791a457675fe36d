// Storage figures of @vigil/storage-knex, each beside a baseline measured in the same run:
// result ingestion (batched) against a plain knex batch insert of the same rows, analytics
// percentiles over 1,000,000 results against a hand-written SQL query, and bytes per result.
//
// Ingestion: BENCH_RESULTS (default 20,000) scheduled TCP runs a round, as the runner and the
// scheduler record them: 100 checks `bench-check-<n>`, one run a minute each on its own slot (id
// slotResultId(check, location, due, 1)), the location alternating us-east-1 / eu-west-1 by check,
// timings in whole hundredths of a ms, 2 % failing. The store keeps them as narrow rows in
// check_runs_tcp plus a detail document (check_result_details) for each failing run and one
// passing run per check, location and hour. Every round has its own due times, so nothing conflicts.
// The baseline: the rows the store wrote for a round, read back with `select *`, inserted with knex
// into plain copies of those two tables as a knex user would: one transaction per batch of 1,000
// results, 500 rows a statement (the most knex's multi-row insert takes on SQLite, where it is a
// compound SELECT; the store itself sends one statement per table and batch). SQLite: the copies
// are made from the originals' SQL (WITHOUT ROWID, primary key (check_key, slot)). PostgreSQL:
// partitioned by day like the store's tables, with the same unique index, the partitions made
// before the clock starts. Order: the store's warm-up round and the baseline's warm-up with that
// round's rows; then BENCH_ROUNDS (default 3) timed rounds, each the store's round followed by the
// baseline's insert of that round's rows, so both sides are measured warm, into tables holding the
// same rows. The best round of each side is reported (other load on the machine only ever slows a
// round down).
//
// Analytics: the store's p95/p99 aggregate (storage-knex runs it in a transaction that first does
// `set local work_mem`, exact-aggregate.ts) against the same percentiles written by hand, run in a
// transaction with the same `set local work_mem`: the setting is read from the statements the
// store sent, so both sides sort with the same memory. The setting is printed beside the row.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { slotResultId } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import knexFactory from 'knex';

const PG_URL = process.env.VIGIL_PG_URL;
const N = Number(process.env.BENCH_RESULTS ?? 20_000);
const BATCH = 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHECKS = 100;
const MIN = 60_000;
const ACCOUNT = 'bench-account';
const t0 = Date.UTC(2026, 4, 1);
// The store's slot layout (compact/layout.ts): slot = (due - 2020-01-01) * 4096 + location * 16 + attempt.
const EPOCH_MS = Date.UTC(2020, 0, 1);
const SLOTS_PER_MS = 4096;
const dueOfSlot = (slot) => Math.floor(Number(slot) / SLOTS_PER_MS) + EPOCH_MS;
const MINUTES = Math.ceil(N / CHECKS);
/** The first due time of a round: each round has its own minutes. */
const roundStart = (round) => t0 + round * MINUTES * MIN;

/** Run `i` of a round: check i % 100, due at the round's minute i / 100. */
function result(round, i) {
  const check = i % CHECKS;
  const due = roundStart(round) + Math.floor(i / CHECKS) * MIN;
  const checkId = `bench-check-${check}`;
  const location = check % 2 ? 'eu-west-1' : 'us-east-1';
  const started = due + 3 + (i % 7);
  const dns = 50 + (i % 40);
  const data = 20 + (i % 30);
  const connection = 300 + ((i * 7919) % 9000);
  const total = dns + connection + data; // hundredths of a ms
  const stopped = new Date(started + Math.round(total / 100)).toISOString();
  const failed = i % 50 === 0;
  return {
    id: slotResultId(checkId, location, new Date(due), 1), checkId, checkType: 'TCP', name: `bench ${check}`, runLocation: location,
    startedAt: new Date(started).toISOString(), stoppedAt: stopped, created_at: stopped,
    responseTime: total / 100, hasFailures: failed, hasErrors: false, isDegraded: false, overMaxResponseTime: false, attempts: 1,
    resultType: 'FINAL', runSource: 'SCHEDULER', checkSessionId: null, sequenceId: null,
    errorMessage: failed ? 'Connection refused by 10.0.3.17:6379: nothing is listening on that port' : null,
    phases: { dns: dns / 100, connection: connection / 100, data: data / 100, total: total / 100 }, statusCode: null, sslDaysRemaining: null,
    details: failed ? { ipFamily: 'IPv4', remoteAddress: '10.0.3.17', bytesSent: 6, bytesReceived: 0, responseEnded: 'refused' } : null,
  };
}

const rows = (round) => Array.from({ length: N }, (_, i) => result(round, i));

async function ingest(storage, results) {
  const start = performance.now();
  for (let i = 0; i < results.length; i += BATCH) await storage.checkResults.insertMany(ACCOUNT, results.slice(i, i + BATCH));
  return performance.now() - start;
}

const TABLES = ['vigil_check_runs_tcp', 'vigil_check_result_details'];
const plainName = (table) => table.replace(/^vigil_/, 'plain_');

/** Plain copies of the narrow table and the detail documents (see the header). */
async function plainTables(knex, pg) {
  for (const table of TABLES) {
    if (pg) {
      // Partitioned by day like the store's tables, with the same unique index.
      await knex.raw('create table ?? (like ?? including defaults) partition by range (slot)', [plainName(table), table]);
      await knex.raw('create unique index on ?? (check_key, slot)', [plainName(table)]);
    }
    else {
      const { sql } = await knex('sqlite_master').where({ type: 'table', name: table }).first('sql');
      if (!sql.includes(table)) throw new Error(`unexpected definition of ${table}: ${sql}`);
      await knex.raw(sql.replace(table, plainName(table)));
    }
  }
}

/**
 * The rows the store wrote for a round, as knex reads them (`select *`), grouped by the batch of
 * 1,000 results they came from and in the order the store inserted them (due time, then check).
 * PostgreSQL answers int8 slots as strings; they go back to the numbers the store inserted.
 */
async function writtenRows(knex, round) {
  const from = (roundStart(round) - EPOCH_MS) * SLOTS_PER_MS;
  const to = (roundStart(round + 1) - EPOCH_MS) * SLOTS_PER_MS;
  const batches = Array.from({ length: Math.ceil(N / BATCH) }, () => ({ runs: [], docs: [] }));
  for (const [table, key] of [[TABLES[0], 'runs'], [TABLES[1], 'docs']]) {
    const read = await knex(table).select('*').where('slot', '>=', from).andWhere('slot', '<', to);
    const sorted = read.map((r) => ({ ...r, slot: Number(r.slot) }))
      .sort((a, b) => dueOfSlot(a.slot) - dueOfSlot(b.slot) || a.check_key - b.check_key);
    for (const r of sorted) batches[Math.floor(((dueOfSlot(r.slot) - roundStart(round)) / MIN) * CHECKS / BATCH)][key].push(r);
  }
  const count = batches.reduce((n, b) => n + b.runs.length, 0);
  if (count !== N) throw new Error(`the store wrote ${count} narrow rows for ${N} results`);
  return batches;
}

/** PostgreSQL: the plain copies get the day partitions the store's tables have (made before the baseline's clock starts). */
async function mirrorPartitions(knex) {
  if (!['pg', 'postgres', 'postgresql'].includes(String(knex.client.config.client))) return;
  for (const table of TABLES) {
    const parts = (await knex.raw(
      'select c.relname, pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass', [table],
    )).rows;
    for (const { relname, bound } of parts) {
      await knex.raw(`create table if not exists ?? partition of ?? ${bound}`, [plainName(relname), plainName(table)]);
    }
  }
}

/** The baseline: the same row objects, inserted by knex into the plain copies with the store's statement shape. */
async function plainIngest(knex, batches) {
  await mirrorPartitions(knex);
  const start = performance.now();
  for (const { runs, docs } of batches) {
    await knex.transaction(async (trx) => {
      for (let i = 0; i < runs.length; i += 500) await trx(plainName(TABLES[0])).insert(runs.slice(i, i + 500));
      for (let i = 0; i < docs.length; i += 500) await trx(plainName(TABLES[1])).insert(docs.slice(i, i + 500));
    });
  }
  return performance.now() - start;
}

/**
 * A warm-up round of each side, then ROUNDS timed rounds of each, alternating (the store's round,
 * then the baseline's insert of its rows): the best results/s of the store and of the baseline.
 */
async function ingestion(storage, knex, pg) {
  await plainTables(knex, pg);
  await ingest(storage, rows(0));
  await plainIngest(knex, await writtenRows(knex, 0));
  let vigilMs = Infinity;
  let plainMs = Infinity;
  for (let round = 1; round <= ROUNDS; round++) {
    vigilMs = Math.min(vigilMs, await ingest(storage, rows(round)));
    plainMs = Math.min(plainMs, await plainIngest(knex, await writtenRows(knex, round)));
  }
  const docs = (await knex(TABLES[1]).count({ n: '*' }))[0].n;
  return { vigil: rate(vigilMs), plain: rate(plainMs), docs: Number(docs) };
}

const rate = (ms) => Math.round(N / (ms / 1000));
const line = (what, figure, baseline, unit = 'results/s') => console.log(`${what.padEnd(46)} ${String(figure).padStart(9)} ${unit.padEnd(9)} baseline ${String(baseline).padStart(9)}   ratio ${(figure / baseline).toFixed(2)}`);
const bytesLine = (what, bytes, count, note) =>
  console.log(`${what.padEnd(46)} ${String(Math.round(bytes / count)).padStart(9)} bytes     (${count} narrow rows${note})`);
const narrowCount = async (knex) => Number((await knex(TABLES[0]).count({ n: '*' }))[0].n);

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  try {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'vigil.sqlite') });
    await storage.migrate();
    const { vigil, plain, docs } = await ingestion(storage, storage.knex, false);
    line('ingestion, SQLite file', vigil, plain);
    console.log(`${''.padEnd(46)} target >= 0.80x (${docs} detail documents for ${(ROUNDS + 1) * N} runs)`);
    const size = (await storage.knex.raw('select sum(pgsize) as b from dbstat where name = ?', [TABLES[0]]))[0].b;
    bytesLine('bytes per stored passing TCP result, SQLite', Number(size), await narrowCount(storage.knex), ', dbstat');
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
    const ingested = await ingestion(storage, knex, true);
    line('ingestion, PostgreSQL', ingested.vigil, ingested.plain);
    console.log(`${''.padEnd(46)} target >= 0.80x (${ingested.docs} detail documents for ${(ROUNDS + 1) * N} runs)`);
    const size = (await knex.raw('select coalesce(sum(pg_total_relation_size(inhrelid)), 0) as b from pg_inherits where inhparent = ?::regclass', [TABLES[0]])).rows[0].b;
    bytesLine('bytes per stored passing TCP result, PostgreSQL', Number(size), await narrowCount(knex), ', partitions with index');

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
    // The work_mem the store sets for its aggregate, read from the statements it sends.
    const settings = new Set();
    const seen = (q) => { const m = /^set local work_mem = '([^']+)'$/i.exec(String(q.sql).trim()); if (m) settings.add(m[1]); };
    knex.on('query', seen);
    const vigil = await best(() => storage.checkResults.aggregate('bench-account', query));
    knex.off('query', seen);
    if (settings.size !== 1) throw new Error(`the store's aggregate set work_mem ${settings.size} ways (${[...settings].join(', ')}); expected one`);
    const [workMem] = settings;
    const serverDefault = (await knex.raw('show work_mem')).rows[0].work_mem;
    // The same percentiles by hand, with the store's work_mem set the same way: `set local` in a
    // transaction (its statements as the store's: begin, set, select, commit).
    const setWorkMem = (trx) => trx.raw(`set local work_mem = '${workMem}'`);
    const applied = await knex.transaction(async (trx) => { await setWorkMem(trx); return (await trx.raw('show work_mem')).rows[0].work_mem; });
    if (applied !== workMem) throw new Error(`set local work_mem = '${workMem}' left work_mem at ${applied}`);
    const hand = await best(() => knex.transaction(async (trx) => {
      await setWorkMem(trx);
      return trx.raw(`select percentile_cont(0.95) within group (order by response_time),
        percentile_cont(0.99) within group (order by response_time)
        from vigil_check_results where account_id = 'bench-account' and check_id = 'big-check' and started_ms >= ? and started_ms < ?`, [t0, t0 + (M + 1) * 1000]);
    }));
    console.log(`${`analytics p95/p99 over ${M} results, PostgreSQL`.padEnd(46)} ${vigil.toFixed(0).padStart(9)} ms        baseline ${hand.toFixed(0).padStart(9)} ms   ratio ${(vigil / hand).toFixed(2)} (time: lower is better)`);
    console.log(`${''.padEnd(46)} work_mem ${workMem} on both sides (set local in the query's transaction; server default ${serverDefault})`);
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
