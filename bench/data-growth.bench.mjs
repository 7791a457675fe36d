// How fast Vigil's database grows, on SQLite and PostgreSQL: bytes per passing and per failing
// stored check result (a TCP result and an API result as their runners record them, stored as
// scheduled runs), bytes per hourly roll-up row, what 1,000 checks at one-minute frequency fill
// after 30 days and a year, retention's speed beside a plain delete of the same rows (SQLite:
// roll up and delete; PostgreSQL: drop a whole day), and p95/p99 of one check over 30 days
// answered from hourly roll-ups beside the exact SQL over its raw rows, with the error.
//
// Method: BENCH_GROWTH_RESULTS results (default 100,000: 1,000 checks x 100 one-minute slots, 2 %
// failing) are stored through the store's own insertMany, then the space each results table
// takes with its indexes is read (SQLite: the dbstat pages of the table and its indexes;
// PostgreSQL: pg_total_relation_size of each partition, which counts TOAST and indexes). A
// passing result costs its narrow row; a failing one also its detail document. The baseline
// beside it is the result's JSON (what the API answers for it). BENCH_GROWTH_RESULTS=1440000 stores
// one whole day of 1,000 checks, the scale retention's drop of a day is meant for; with a smaller
// sample, the drop is also measured on such a day of TCP results (its target is set for one).
// BENCH_GROWTH_DB (sqlite or pg) runs one database only.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knexStorage } from '@vigil/storage-knex';
import knexFactory from 'knex';
import { slotResultId } from '@vigil/core';
import { seededRandom as random } from '@vigil/core/testing';

const PG_URL = process.env.VIGIL_PG_URL;
const N = Number(process.env.BENCH_GROWTH_RESULTS ?? 100_000);
const CHECKS = 1_000;
const SLOTS = Math.ceil(N / CHECKS);
const BATCH = 1_000;
/** A whole day of 1,000 checks at one run a minute: the scale retention's drop of a day is for. */
const DAY_RESULTS = CHECKS * 1_440;
const ACCOUNT = randomUUID();
const MIN = 60_000;
const HOUR = 60 * MIN;
const t0 = Date.UTC(2026, 4, 1);
const checkIds = Array.from({ length: CHECKS }, () => randomUUID());
const round2 = (x) => Math.round(x * 100) / 100;

/** A TCP result as the TCP runner and the pipeline record it: an echo check with one assertion. */
function tcpResult(check, slot) {
  const due = t0 + slot * MIN + (check % 60) * 1000;
  const started = due + 3 + (check % 7);
  const connection = round2(0.3 + (check % 13) * 0.07);
  const data = round2(0.2 + (slot % 7) * 0.05);
  const total = round2(connection + data);
  const failed = (check * 31 + slot) % 50 === 0;
  return {
    id: slotResultId(checkIds[check], 'us-east-1', new Date(due), 1), checkId: checkIds[check], checkType: 'TCP', name: `orders-db-${check}`, runLocation: 'us-east-1',
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

// BENCH_GROWTH_KINDS=TCP measures TCP results only.
const KINDS = [['TCP', tcpResult], ['API', apiResult]].filter(([kind]) => (process.env.BENCH_GROWTH_KINDS ?? 'TCP,API').split(',').includes(kind));

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
const gb = (bytes) => `${(bytes / 1e9).toFixed(2)} GB`;
// The goals are set for TCP checks; API results are shown beside them without one.
const goal = (label, bytes, limit) => (label.endsWith('TCP') ? `goal <= ${limit} GB: ${bytes <= limit * 1e9 ? 'met' : 'MISSED'}` : 'no goal set');

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
    const due = new Date(start + i * MIN);
    const started = new Date(due.getTime() + 5).toISOString();
    rows.push({ ...r, id: slotResultId('check-30d', 'us-east-1', due, 1), checkId: 'check-30d', startedAt: started, stoppedAt: started, created_at: started, responseTime, phases: { ...r.phases, total: responseTime } });
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

/**
 * What the sample takes: the narrow rows (a passing result's whole cost), the detail documents
 * (kept for failing runs and one passing run per check and hour) and any full rows, each table
 * with its indexes; bytes per passing result = narrow bytes / results, per failing result that
 * plus a document's bytes.
 */
function report(kind, db, sizes, rows) {
  const failing = rows.filter((r) => r.hasFailures).length;
  const passing = sizes.narrow / sizes.narrowRows;
  const doc = sizes.docRows > 0 ? sizes.details / sizes.docRows : 0;
  const all = (sizes.narrow + sizes.details + sizes.full) / rows.length;
  const target = kind === 'TCP' ? 120 : 200;
  line(`bytes per passing ${kind} result, ${db}`, Math.round(passing), 'bytes', Math.round(jsonBytes(rows)), 'JSON of it');
  console.log(`${''.padEnd(48)} (target <= ${target}: ${passing <= target ? 'met' : 'MISSED'}; failing result ${Math.round(passing + doc)} = row + document; ${sizes.docRows} documents for ${rows.length} results, ${failing} failing; ${Math.round(all)} bytes a result on average; full rows ${sizes.fullRows})`);
  return { passing, doc };
}

/** Bytes a day, 30 days and a year of 1,000 TCP checks every minute with 2 % failing, at the default retention (90 days). */
function extrapolate(label, { passing, doc }, perRollup) {
  const perDay = CHECKS * 24 * 60;
  const docsPerDay = CHECKS * 24 + 0.02 * perDay;
  const day = perDay * passing + docsPerDay * doc;
  const rollupsPerDay = CHECKS * 24 * perRollup;
  console.log(`  ${label}: 1,000 checks every minute store ${(perDay / 1e6).toFixed(2)} M results a day (${Math.round(docsPerDay)} with their detail): ${gb(day)} a day`);
  console.log(`  ${label}: after 30 days: ${gb(30 * day)} (${goal(label, 30 * day, 5)}), roll-ups included: ${gb(30 * day + 30 * rollupsPerDay)}`);
  const year = 90 * day + 365 * rollupsPerDay;
  console.log(`  ${label}: after a year with the default 90 days of raw results: ${gb(year)} (${goal(label, year, 20)}; roll-ups of 365 days ${gb(365 * rollupsPerDay)})`);
}

const sqliteBytes = async (knex, table) => Number((await knex.raw('select coalesce(sum(pgsize), 0) as b from dbstat where name in (select name from sqlite_master where tbl_name = ?)', [table]))[0].b);
const count = async (knex, table) => Number((await knex(table).count({ n: '*' }))[0].n);

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-growth-'));
  const sizes = {};
  try {
    for (const [kind, make] of KINDS) {
      const file = join(dir, `${kind}.sqlite`);
      const storage = knexStorage({ client: 'sqlite3', connection: file });
      const copy = knexStorage({ client: 'sqlite3', connection: join(dir, `${kind}-copy.sqlite`) });
      const rows = sample(make);
      await ingest(storage, rows);
      await ingest(copy, rows);
      const narrowTable = `vigil_check_runs_${kind.toLowerCase()}`;
      const measured = {
        narrow: await sqliteBytes(storage.knex, narrowTable), narrowRows: await count(storage.knex, narrowTable),
        details: await sqliteBytes(storage.knex, 'vigil_check_result_details'), docRows: await count(storage.knex, 'vigil_check_result_details'),
        full: await sqliteBytes(storage.knex, 'vigil_check_results'), fullRows: await count(storage.knex, 'vigil_check_results'),
      };
      await storage.knex.raw('pragma wal_checkpoint(truncate)');
      sizes[kind] = { ...report(kind, 'SQLite', measured, rows), file: statSync(file).size };
      const { pruneMs, deleteMs, rolledUp } = await retention(storage, copy);
      const rollupBytes = await sqliteBytes(storage.knex, 'vigil_check_result_rollups') / rolledUp;
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
  console.log(`SQLite file after ${N} results: ${Object.entries(sizes).map(([k, v]) => `${k} ${(v.file / 1e6).toFixed(1)} MB`).join(', ')}; extrapolated:`);
  for (const kind of Object.keys(sizes)) extrapolate(`SQLite, ${kind}`, sizes[kind], sizes[kind].rollupBytes);
}

/** A partitioned table's bytes: its partitions with their indexes (PostgreSQL). */
const pgBytes = async (knex, table) => Number((await knex.raw(
  `select coalesce(sum(pg_total_relation_size(inhrelid)), 0) + pg_total_relation_size(?::regclass) as b from pg_inherits where inhparent = ?::regclass`, [table, table],
)).rows[0].b);

/**
 * Retention on PostgreSQL: the hours rolled up as they close (the roll-up job, timed apart), then
 * the day dropped whole (dropBefore), beside a plain DELETE of the same rows in a copy and the
 * VACUUM that DELETE needs before its space is reused.
 */
async function pgRetention(knex, storage, copy, copyPrefix, kind, results) {
  const before = new Date(t0 + 25 * HOUR);
  // The roll-up job takes each hour as it closes.
  let start = performance.now();
  for (let hour = t0; hour < before.getTime(); hour += HOUR) {
    for (let after = new Date(hour); ;) {
      const step = await storage.checkResults.rollUp(ACCOUNT, after, new Date(hour + HOUR), 20_000);
      if (step.done) break;
      after = step.next;
    }
  }
  const rollUpMs = performance.now() - start;
  start = performance.now();
  await storage.checkResults.dropBefore(before);
  const dropMs = performance.now() - start;
  start = performance.now();
  // The same rows as the drop, which cuts at a whole day: those of the day before `before`.
  await copy.checkResults.deleteOlderThan(new Date(t0 + 24 * HOUR));
  const deleteMs = performance.now() - start;
  start = performance.now();
  for (const table of [`${copyPrefix}check_runs_${kind.toLowerCase()}`, `${copyPrefix}check_result_details`]) await knex.raw(`vacuum ${table}`);
  const vacuumMs = performance.now() - start;
  // One day is dropped and deleted: a larger sample's later rows are not counted.
  const dropped = Math.min(results, DAY_RESULTS);
  const aDay = dropped === DAY_RESULTS;
  line(`retention of ${kind}${aDay ? ', a whole day' : ' results'} (drop a day), PG`, Math.round(dropped / (dropMs / 1000)), 'res/s', Math.round(dropped / (deleteMs / 1000)), 'plain delete');
  // The target is set for a day of 1,000 TCP checks; a smaller sample's drop is mostly its fixed cost.
  let target = `no target at ${results} results`;
  if (aDay) target = kind === 'TCP' ? `target >= 10x: ${deleteMs / dropMs >= 10 ? 'met' : 'MISSED'}` : 'no target for this kind';
  else if (KINDS.some(([k]) => k === 'TCP')) target += ': a day of TCP results is measured below';
  console.log(`${''.padEnd(48)} (${target}; ${dropped} results; drop ${Math.round(dropMs)} ms, DELETE ${Math.round(deleteMs)} ms + VACUUM ${Math.round(vacuumMs)} ms = ${((deleteMs + vacuumMs) / dropMs).toFixed(1)}x; roll-ups made as the hours closed ${Math.round(rollUpMs)} ms)`);
}

/**
 * Retention's drop at the scale it is for: a whole day of 1,000 checks' TCP results, stored a slot
 * at a time into the store and a copy, the day sealed, then dropped beside a plain DELETE of the copy.
 */
async function pgRetentionOfADay(knex) {
  const storage = knexStorage({ knex, tablePrefix: 'day_' });
  const copy = knexStorage({ knex, tablePrefix: 'day_copy_' });
  for (let slot = 0; slot < DAY_RESULTS / CHECKS; slot++) {
    const rows = Array.from({ length: CHECKS }, (_, check) => tcpResult(check, slot));
    await ingest(storage, rows);
    await ingest(copy, rows);
  }
  await knex.raw('analyze');
  await storage.checkResults.maintain(new Date());
  await pgRetention(knex, storage, copy, 'day_copy_', 'TCP', DAY_RESULTS);
}

async function postgres() {
  const schema = `vigil_growth_${Date.now()}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL });
  await admin.raw(`create schema ${schema}`);
  const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 1, max: 4 } });
  const sizes = {};
  try {
    for (const [kind, make] of KINDS) {
      const prefix = `${kind.toLowerCase()}_`;
      const storage = knexStorage({ knex, tablePrefix: prefix });
      const copy = knexStorage({ knex, tablePrefix: `${prefix}copy_` });
      const rows = sample(make);
      await ingest(storage, rows);
      await ingest(copy, rows);
      await knex.raw('analyze');
      const narrowTable = `${prefix}check_runs_${kind.toLowerCase()}`;
      const measured = {
        narrow: await pgBytes(knex, narrowTable), narrowRows: await count(knex, narrowTable),
        details: await pgBytes(knex, `${prefix}check_result_details`), docRows: await count(knex, `${prefix}check_result_details`),
        full: await pgBytes(knex, `${prefix}check_results`), fullRows: await count(knex, `${prefix}check_results`),
      };
      report(kind, 'PostgreSQL', measured, rows);
      // The retention job's upkeep seals each closed day (its index rebuilt full) and makes the coming week's partitions.
      let start = performance.now();
      await storage.checkResults.maintain(new Date());
      const sealMs = performance.now() - start;
      const sealed = { ...measured, narrow: await pgBytes(knex, narrowTable), details: await pgBytes(knex, `${prefix}check_result_details`) };
      sizes[kind] = report(kind, 'PostgreSQL, day sealed', sealed, rows);
      console.log(`${''.padEnd(48)} (sealing the day took ${Math.round(sealMs)} ms)`);
      await pgRetention(knex, storage, copy, `${prefix}copy_`, kind, N);
      // The live rows' size: the drop marked them pruned, and autovacuum reuses the old versions' space.
      await knex.raw(`vacuum full ${prefix}check_result_rollups`);
      const rolledUp = await count(knex, `${prefix}check_result_rollups`);
      const rollupBytes = await pgBytes(knex, `${prefix}check_result_rollups`) / rolledUp;
      sizes[kind].rollupBytes = rollupBytes;
      console.log(`${`bytes per hourly roll-up row, PostgreSQL`.padEnd(48)} ${String(Math.round(rollupBytes)).padStart(10)} bytes    (${rolledUp} rows from ${N} results)`);
    }
    if (N < DAY_RESULTS && KINDS.some(([kind]) => kind === 'TCP')) await pgRetentionOfADay(knex);
    const storage = knexStorage({ knex, tablePrefix: 'p30_' });
    await percentiles30d('PostgreSQL', storage, () => knex.raw('analyze'));
  } finally {
    await knex.destroy();
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  }
  console.log('PostgreSQL, extrapolated:');
  for (const kind of Object.keys(sizes)) extrapolate(`PostgreSQL, ${kind}`, sizes[kind], sizes[kind].rollupBytes);
}

try {
  console.log(`${N} results of ${CHECKS} checks at one-minute frequency per case`);
  const only = process.env.BENCH_GROWTH_DB; // 'sqlite' or 'pg' for one of them
  if (only !== 'pg') await sqlite();
  if (PG_URL && only !== 'sqlite') await postgres();
  else console.log('PostgreSQL figures skipped: set VIGIL_PG_URL');
} catch (err) {
  console.error(`data-growth benchmark failed: ${String(err.message ?? err).slice(0, 400)}`);
  process.exit(1);
}
