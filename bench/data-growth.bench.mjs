// How fast Vigil's database grows, on SQLite and PostgreSQL: bytes per stored check result (a TCP
// result and an API result as their runners record them), bytes per hourly roll-up row, what
// 1,000 checks at one-minute frequency fill after 30 days, and the retention job's speed (roll-up
// and delete, a batch at a time) beside a plain delete of the same rows; and p95/p99 of one
// check over 30 days answered from hourly roll-ups beside the exact SQL over its raw rows.
//
// Method: BENCH_GROWTH_RESULTS results (default 100,000: 1,000 checks x 100 one-minute slots) are
// stored through the store's own insertMany, then the space the results table takes with its
// indexes is read (SQLite: the dbstat pages of the table and its indexes; PostgreSQL:
// pg_total_relation_size, which counts TOAST and indexes). Bytes per result = that / results.
// The baseline beside it is the result's JSON (what the API answers for it).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knexStorage } from '@vigil/storage-knex';
import knexFactory from 'knex';
import { seededRandom as random } from '@vigil/core/testing';

const PG_URL = process.env.VIGIL_PG_URL;
const N = Number(process.env.BENCH_GROWTH_RESULTS ?? 100_000);
const CHECKS = 1_000;
const SLOTS = Math.ceil(N / CHECKS);
const BATCH = 1_000;
const ACCOUNT = randomUUID();
const MIN = 60_000;
const HOUR = 60 * MIN;
const t0 = Date.UTC(2026, 4, 1);
const checkIds = Array.from({ length: CHECKS }, () => randomUUID());
const round2 = (x) => Math.round(x * 100) / 100;

/** A TCP result as the TCP runner and the pipeline record it: an echo check with one assertion. */
function tcpResult(check, slot) {
  const started = t0 + slot * MIN + (check % 60) * 1000;
  const connection = round2(0.3 + (check % 13) * 0.07);
  const data = round2(0.2 + (slot % 7) * 0.05);
  const total = round2(connection + data);
  const failed = (check * 31 + slot) % 50 === 0;
  return {
    id: randomUUID(), checkId: checkIds[check], checkType: 'TCP', name: `orders-db-${check}`, runLocation: 'us-east-1',
    startedAt: new Date(started).toISOString(), stoppedAt: new Date(started + 2).toISOString(), created_at: new Date(started + 2).toISOString(),
    responseTime: total, hasFailures: failed, hasErrors: false, isDegraded: false, overMaxResponseTime: false, attempts: 1,
    resultType: 'FINAL', runSource: 'SCHEDULER', checkSessionId: null, sequenceId: null,
    errorMessage: failed ? 'Connection refused by 10.0.3.17:6379: nothing is listening on that port' : null,
    phases: { dns: 0, connection, data, total }, statusCode: null, sslDaysRemaining: null,
    details: {
      ipFamily: 'IPv4', remoteAddress: '10.0.3.17', bytesSent: 6, bytesReceived: 7, responseEnded: 'quiet', firstByte: data, response: '+PONG\r\n',
      assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', property: '', target: 'PONG', actual: '+PONG\r\n', passed: true }],
    },
  };
}

/** An API result as the HTTP runner records it: a JSON health endpoint over TLS, one status assertion. */
function apiResult(check, slot) {
  const r = tcpResult(check, slot);
  const body = JSON.stringify({ status: 'ok', version: '4.12.1', checks: { db: 'ok', cache: 'ok', queue: { depth: slot % 17, ok: true } }, time: r.startedAt });
  return {
    ...r, checkType: 'API', name: `orders-api-${check}`, statusCode: r.hasFailures ? 503 : 200, sslDaysRemaining: 61,
    errorMessage: r.hasFailures ? 'Assertion failed: STATUS_CODE EQUALS 200, got 503' : null,
    phases: { wait: 0.02, dns: 1.12, tcp: 0.41, tls: 3.87, firstByte: 12.6, download: 0.3, total: 18.32 }, responseTime: 18.32,
    details: {
      request: { method: 'GET', url: `https://api.example.com/health?check=${check}`, headers: { 'User-Agent': 'Vigil-API-Check/0.1', Authorization: '********' } },
      redirects: [], remoteAddress: '203.0.113.10', tlsProtocol: 'TLSv1.3', clientCertificate: null,
      response: {
        statusCode: r.hasFailures ? 503 : 200, statusText: r.hasFailures ? 'Service Unavailable' : 'OK',
        headers: {
          'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), date: new Date(Date.parse(r.startedAt)).toUTCString(),
          'cache-control': 'no-store', 'x-request-id': randomUUID(), server: 'nginx', connection: 'keep-alive', vary: 'Accept-Encoding',
        },
        body, bytesReceived: body.length, truncated: false,
      },
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200', actual: r.hasFailures ? 503 : 200, passed: !r.hasFailures }],
    },
  };
}

const sample = (make) => {
  const rows = [];
  for (let slot = 0; slot < SLOTS; slot++) for (let check = 0; check < CHECKS && rows.length < N; check++) rows.push(make(check, slot));
  return rows;
};

async function ingest(storage, rows) {
  for (let i = 0; i < rows.length; i += BATCH) await storage.checkResults.insertMany(ACCOUNT, rows.slice(i, i + BATCH));
}

const jsonBytes = (rows) => rows.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0) / rows.length;
const line = (what, figure, unit, baseline, baselineWhat) =>
  console.log(`${what.padEnd(48)} ${String(figure).padStart(10)} ${unit.padEnd(8)} ${baselineWhat} ${String(baseline).padStart(8)}   ratio ${(figure / baseline).toFixed(2)}`);
const gb = (bytes) => `${(bytes / 1e9).toFixed(1)} GB`;

/** Retention of the whole sample, the engine's way (prune, 20,000 a call), timed; and a plain delete of a copy. */
async function retention(storage, copy) {
  const before = new Date(t0 + (SLOTS + 120) * MIN);
  let start = performance.now();
  let rolledUp = 0;
  for (;;) {
    const step = await storage.checkResults.prune(ACCOUNT, before, 20_000);
    rolledUp += step.rolledUp;
    if (step.done) break;
  }
  const pruneMs = performance.now() - start;
  start = performance.now();
  await copy.checkResults.deleteOlderThan(before);
  const deleteMs = performance.now() - start;
  return { pruneMs, deleteMs, rolledUp };
}

function extrapolate(label, perResult, perRollup) {
  const perDay = CHECKS * 24 * 60;
  const raw30 = 30 * perDay * perResult;
  console.log(`  ${label}: 1,000 checks every minute store ${(perDay / 1e6).toFixed(2)} M results a day, ${gb(perDay * perResult)} a day`);
  console.log(`  ${label}: after 30 days, raw results kept (retention >= 30 days, the default is 90): ${gb(raw30)}`);
  for (const days of [7, 14]) {
    const kept = days * perDay * perResult + (30 - days) * CHECKS * 24 * perRollup;
    console.log(`  ${label}: after 30 days with retention ${days} days: ${gb(kept)} (${days} days raw + ${30 - days} days of hourly roll-ups)`);
  }
  const year90 = 90 * perDay * perResult + 275 * CHECKS * 24 * perRollup;
  console.log(`  ${label}: after a year with the default 90 days: ${gb(year90)} (roll-ups of the other 275 days: ${gb(275 * CHECKS * 24 * perRollup)})`);
}


const percentileCont = (sorted, p) => {
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  return sorted[lo] + ((sorted[Math.ceil(pos)] ?? sorted[lo]) - sorted[lo]) * (pos - lo);
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * p95/p99 of one check over 30 days at one run a minute (43,200 TCP results, log-normal response
 * times around 120 ms with 2% slow outliers): the aggregate once the hours are rolled up (720
 * roll-ups and the raw hour under way) beside the exact one over raw rows, each the median of 5,
 * with the roll-ups' relative error against the exact percentiles.
 */
async function percentiles30d(label, storage, afterIngest = async () => {}) {
  const rand = random(11);
  const start = t0;
  const now = start + 30 * 24 * HOUR + 25 * MIN;
  const rows = [];
  for (let i = 0; i < 30 * 24 * 60 + 25; i++) {
    const normal = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    const base = 120 * Math.exp(0.45 * normal);
    const responseTime = Math.round((rand() < 0.02 ? base * (5 + 20 * rand()) : base) * 10) / 10;
    const r = tcpResult(0, 0);
    rows.push({ ...r, checkId: 'check-30d', startedAt: new Date(start + i * MIN).toISOString(), responseTime, phases: { ...r.phases, total: responseTime } });
  }
  await ingest(storage, rows);
  await afterIngest();
  const query = {
    checkIds: ['check-30d'], from: new Date(now - 30 * 24 * HOUR), to: new Date(now),
    measures: [{ name: 'p95', field: 'responseTime', fn: 'p95' }, { name: 'p99', field: 'responseTime', fn: 'p99' }],
  };
  const timed = async () => {
    const ms = [];
    let row;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      [row] = await storage.checkResults.aggregate(ACCOUNT, query);
      ms.push(performance.now() - t);
    }
    return { row, ms: median(ms) };
  };
  const exact = await timed();
  let t = performance.now();
  for (let after = null; ;) {
    const step = await storage.checkResults.rollUp(ACCOUNT, after, new Date(now), 20_000);
    if (step.done) break;
    after = step.next;
  }
  const rollUpMs = performance.now() - t;
  const rolled = await timed();
  const sorted = rows.filter((r) => Date.parse(r.startedAt) >= query.from.getTime()).map((r) => r.responseTime).sort((a, b) => a - b);
  const error = (name, p) => Math.abs(rolled.row.values[name] - percentileCont(sorted, p)) / percentileCont(sorted, p);
  line(`p95/p99 of one check over 30 days, ${label}`, round2(rolled.ms), 'ms', round2(exact.ms), 'exact SQL over raw rows');
  console.log(`${''.padEnd(48)} (roll-ups: approximate=${rolled.row.approximate === true}, count ${rolled.row.count}; error p95 ${(100 * error('p95', 0.95)).toFixed(3)}%, p99 ${(100 * error('p99', 0.99)).toFixed(3)}%; exact SQL approximate=${exact.row.approximate === true}; rolling 30 days up took ${Math.round(rollUpMs)} ms)`);
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-growth-'));
  const sizes = {};
  try {
    for (const [kind, make] of [['TCP', tcpResult], ['API', apiResult]]) {
      const file = join(dir, `${kind}.sqlite`);
      const storage = knexStorage({ client: 'sqlite3', connection: file });
      const copy = knexStorage({ client: 'sqlite3', connection: join(dir, `${kind}-copy.sqlite`) });
      const rows = sample(make);
      await ingest(storage, rows);
      await ingest(copy, rows);
      const pages = async (table) => Number((await storage.knex.raw(
        'select coalesce(sum(pgsize), 0) as b from dbstat where name in (select name from sqlite_master where tbl_name = ?)', [table],
      ))[0].b);
      const resultBytes = await pages('vigil_check_results') / rows.length;
      const tableOnly = Number((await storage.knex.raw("select sum(pgsize) as b from dbstat where name = 'vigil_check_results'"))[0].b) / rows.length;
      await storage.knex.raw('pragma wal_checkpoint(truncate)');
      sizes[kind] = { resultBytes, file: statSync(file).size };
      line(`bytes per stored ${kind} result, SQLite`, Math.round(resultBytes), 'bytes', Math.round(jsonBytes(rows)), 'JSON of it');
      console.log(`${''.padEnd(48)} (table ${Math.round(tableOnly)}, indexes ${Math.round(resultBytes - tableOnly)})`);
      const { pruneMs, deleteMs, rolledUp } = await retention(storage, copy);
      const rollupBytes = await pages('vigil_check_result_rollups') / rolledUp;
      sizes[kind].rollupBytes = rollupBytes;
      line(`retention of ${kind} results (roll up + delete), SQLite`, Math.round(N / (pruneMs / 1000)), 'res/s', Math.round(N / (deleteMs / 1000)), 'plain delete');
      console.log(`${`bytes per hourly roll-up row, SQLite`.padEnd(48)} ${String(Math.round(rollupBytes)).padStart(10)} bytes    (${rolledUp} rows from ${N} results)`);
      await storage.close();
      await copy.close();
    }
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'percentiles.sqlite') });
    await percentiles30d('SQLite', storage);
    await storage.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`SQLite file after ${N} TCP results: ${(sizes.TCP.file / 1e6).toFixed(1)} MB; extrapolated:`);
  extrapolate('SQLite, TCP', sizes.TCP.resultBytes, sizes.TCP.rollupBytes);
  extrapolate('SQLite, API', sizes.API.resultBytes, sizes.API.rollupBytes);
}

async function postgres() {
  const schema = `vigil_growth_${Date.now()}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL });
  await admin.raw(`create schema ${schema}`);
  const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 1, max: 4 } });
  const sizes = {};
  try {
    for (const [kind, make] of [['TCP', tcpResult], ['API', apiResult]]) {
      const prefix = `${kind.toLowerCase()}_`;
      const storage = knexStorage({ knex, tablePrefix: prefix });
      const copy = knexStorage({ knex, tablePrefix: `${prefix}copy_` });
      const rows = sample(make);
      await ingest(storage, rows);
      await ingest(copy, rows);
      await knex.raw(`analyze ${prefix}check_results`);
      const size = async (table) => Number((await knex.raw('select pg_total_relation_size(?) as b', [table])).rows[0].b);
      const resultBytes = await size(`${prefix}check_results`) / rows.length;
      sizes[kind] = { resultBytes };
      line(`bytes per stored ${kind} result, PostgreSQL`, Math.round(resultBytes), 'bytes', Math.round(jsonBytes(rows)), 'JSON of it');
      const indexes = Number((await knex.raw('select pg_indexes_size(?) as b', [`${prefix}check_results`])).rows[0].b) / rows.length;
      console.log(`${''.padEnd(48)} (table and TOAST ${Math.round(resultBytes - indexes)}, indexes ${Math.round(indexes)})`);
      const { pruneMs, deleteMs, rolledUp } = await retention(storage, copy);
      await knex.raw(`vacuum ${prefix}check_result_rollups`);
      const rollupBytes = await size(`${prefix}check_result_rollups`) / rolledUp;
      sizes[kind].rollupBytes = rollupBytes;
      line(`retention of ${kind} results (roll up + delete), PG`, Math.round(N / (pruneMs / 1000)), 'res/s', Math.round(N / (deleteMs / 1000)), 'plain delete');
      console.log(`${`bytes per hourly roll-up row, PostgreSQL`.padEnd(48)} ${String(Math.round(rollupBytes)).padStart(10)} bytes    (${rolledUp} rows from ${N} results)`);
    }
    const storage = knexStorage({ knex, tablePrefix: 'p30_' });
    await percentiles30d('PostgreSQL', storage, () => knex.raw('analyze p30_check_results'));
  } finally {
    await knex.destroy();
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  }
  console.log('PostgreSQL, extrapolated:');
  extrapolate('PostgreSQL, TCP', sizes.TCP.resultBytes, sizes.TCP.rollupBytes);
  extrapolate('PostgreSQL, API', sizes.API.resultBytes, sizes.API.rollupBytes);
}

try {
  console.log(`${N} results of ${CHECKS} checks at one-minute frequency per case`);
  await sqlite();
  if (PG_URL) await postgres();
  else console.log('PostgreSQL figures skipped: set VIGIL_PG_URL');
} catch (err) {
  console.error(`data-growth benchmark failed: ${String(err.message ?? err).slice(0, 400)}`);
  process.exit(1);
}
