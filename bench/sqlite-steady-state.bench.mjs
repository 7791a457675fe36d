// Whether a SQLite database file stops growing once retention deletes as many results as arrive,
// and gives space back when retention keeps less.
//
// Method: BENCH_STEADY_CHECKS checks (default 12, not 100: 12 took 75-95 s on a shared 2-core
// machine, so 100 would take over 10 minutes; the figures are per check, so fewer checks give the
// same percentages) run once a minute
// for BENCH_STEADY_DAYS simulated days (default 16), stored through the store's public API only:
// insertMany in batches of 1,000, each result a TCP result as the runner records it, with the
// scheduler's slot id (slotResultId), startedAt a few hundred ms after its due time, 2% failing.
// At the end of each simulated day retention keeps 7 days: checkResults.prune(account, before,
// 100,000) until done (it rolls the results up by hour and deletes them), then reclaimSqliteSpace.
// That file is new, so Vigil made it with incremental auto-vacuum. The baseline is the same run,
// the same results, on a second file made beforehand with auto-vacuum off (as before Vigil set
// it), pruned the same way with no reclaim. File sizes are read after
// PRAGMA wal_checkpoint(TRUNCATE), at the end of each day from day 8 (the first day retention
// deletes a day) on. The figure: growth of the file between day 8 and the last day (target under
// 2%); the hourly roll-ups retention keeps are growth neither file can avoid. Then retention is
// cut to 3 days once, to show which file gives the space back, and the baseline is converted
// (PRAGMA auto_vacuum = INCREMENTAL, then VACUUM, which copies what the file keeps), timed.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { slotResultId } from '@vigil/core';
import { knexStorage, reclaimSqliteSpace } from '@vigil/storage-knex';
import knexFactory from 'knex';

const CHECKS = Number(process.env.BENCH_STEADY_CHECKS ?? 12);
const DAYS = Number(process.env.BENCH_STEADY_DAYS ?? 16);
const RETENTION_DAYS = 7;
// Days roll-ups are kept (engine.retention.rollupDays; 400 by default). As short as the raw
// retention here, so that 16 simulated days reach the steady state a year and a month of the
// default reaches; 0 keeps them for ever.
const ROLLUP_DAYS = Number(process.env.BENCH_STEADY_ROLLUP_DAYS ?? 7);
const SHRUNK_DAYS = 3;
const FIRST_REPORTED = RETENTION_DAYS + 1;
const TARGET_PCT = 2;
const BATCH = 1_000;
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const LOCATION = 'us-east-1';
const ACCOUNT = randomUUID();
const t0 = Date.UTC(2026, 4, 1);
const checkIds = Array.from({ length: CHECKS }, () => randomUUID());
const round2 = (x) => Math.round(x * 100) / 100;
const mb = (bytes) => (bytes / 1e6).toFixed(1);

/** A TCP echo check's result as the runner and the scheduler record it, for the slot due at `dueAt`. */
function tcpResult(check, slot, dueAt) {
  const started = dueAt + 150 + ((check * 37 + slot) % 400);
  const connection = round2(0.3 + (check % 13) * 0.07);
  const data = round2(0.2 + (slot % 7) * 0.05);
  const total = round2(connection + data);
  const failed = (check * 31 + slot) % 50 === 0;
  return {
    id: slotResultId(checkIds[check], LOCATION, new Date(dueAt), 1), checkId: checkIds[check], checkType: 'TCP', name: `orders-db-${check}`, runLocation: LOCATION,
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

/** One simulated day of every check once a minute, stored in batches of 1,000 in each store. */
async function day(stores, d) {
  let batch = [];
  const flush = async () => {
    for (const s of stores) await s.storage.checkResults.insertMany(ACCOUNT, batch);
    batch = [];
  };
  for (let minute = 0; minute < 24 * 60; minute++) {
    const slot = d * 24 * 60 + minute;
    for (let check = 0; check < CHECKS; check++) {
      batch.push(tcpResult(check, slot, t0 + slot * MIN));
      if (batch.length === BATCH) await flush();
    }
  }
  if (batch.length) await flush();
}

/** Retention as the engine applies it to an account, then the space given back where the store reclaims. */
async function retention(s, before, rollupsBefore) {
  let start = performance.now();
  for (;;) if ((await s.storage.checkResults.prune(ACCOUNT, before, 100_000)).done) break;
  if (rollupsBefore) await s.storage.checkResults.pruneRollups(ACCOUNT, rollupsBefore);
  s.pruneMs += performance.now() - start;
  if (!s.reclaim) return;
  start = performance.now();
  s.freed += await reclaimSqliteSpace(s.storage.knex);
  s.reclaimMs += performance.now() - start;
}

async function size(s) {
  await s.storage.knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  return statSync(s.file).size;
}

const pragma = async (s, name) => Object.values((await s.storage.knex.raw(`PRAGMA ${name}`))[0])[0];

/** Bytes the hourly roll-ups take with their indexes (dbstat pages): what retention keeps for ever. */
const rollupBytes = async (s) => Number((await s.storage.knex.raw(
  "select coalesce(sum(pgsize), 0) as b from dbstat where name in (select name from sqlite_master where tbl_name like '%rollup%')",
))[0].b);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-steady-'));
  try {
    const baselineFile = join(dir, 'baseline.sqlite');
    // The baseline file exists before Vigil opens it, with auto-vacuum off and a table in it.
    const earlier = knexFactory({ client: 'sqlite3', connection: { filename: baselineFile }, useNullAsDefault: true });
    await earlier.raw('PRAGMA auto_vacuum = NONE');
    await earlier.schema.createTable('host_notes', (t) => t.increments('id'));
    await earlier.destroy();
    const stores = [
      { name: 'incremental', file: join(dir, 'vigil.sqlite'), reclaim: true },
      { name: 'baseline', file: baselineFile, reclaim: false },
    ].map((s) => ({ ...s, storage: knexStorage({ client: 'sqlite3', connection: s.file }), sizes: [], pruneMs: 0, reclaimMs: 0, freed: 0 }));
    for (const s of stores) await s.storage.migrate();
    const [inc, base] = stores;
    console.log(`${CHECKS} checks once a minute, ${DAYS} days, retention ${RETENTION_DAYS} days (roll-ups ${ROLLUP_DAYS || 'for ever'}) applied once a day; auto_vacuum: vigil.sqlite ${await pragma(inc, 'auto_vacuum')}, baseline ${await pragma(base, 'auto_vacuum')}`);
    console.log(`${'day'.padStart(4)} ${'incremental MB'.padStart(15)} ${'baseline MB'.padStart(12)}   ratio  baseline free pages`);
    const started = performance.now();
    for (let d = 0; d < DAYS; d++) {
      await day(stores, d);
      const before = new Date(t0 + (d + 1 - RETENTION_DAYS) * DAY);
      const rollupsBefore = ROLLUP_DAYS > 0 ? new Date(t0 + (d + 1 - ROLLUP_DAYS) * DAY) : null;
      for (const s of stores) await retention(s, before, rollupsBefore);
      if (d + 1 < FIRST_REPORTED) continue;
      for (const s of stores) s.sizes.push(await size(s));
      if (d + 1 === FIRST_REPORTED || d + 1 === DAYS) for (const s of stores) (s.rollups ??= []).push(await rollupBytes(s));
      const [a, b] = [inc.sizes.at(-1), base.sizes.at(-1)];
      console.log(`${String(d + 1).padStart(4)} ${mb(a).padStart(15)} ${mb(b).padStart(12)}   ${(a / b).toFixed(3)}  ${await pragma(base, 'freelist_count')}`);
    }
    const totalS = (performance.now() - started) / 1000;
    const growth = (s) => (100 * (s.sizes.at(-1) - s.sizes[0])) / s.sizes[0];
    if (inc.sizes.length >= 2) {
      const [g, gb] = [growth(inc), growth(base)];
      console.log(`${`growth of the file, day ${FIRST_REPORTED} to day ${DAYS}, incremental auto-vacuum`.padEnd(64)} ${g.toFixed(2).padStart(7)} %   baseline (auto-vacuum off, no reclaim) ${gb.toFixed(2)} %   ratio ${(gb ? g / gb : NaN).toFixed(2)}   target < ${TARGET_PCT} %: ${g < TARGET_PCT ? 'met' : 'NOT met'}`);
      const rest = (s) => (100 * (s.sizes.at(-1) - s.rollups[1] - (s.sizes[0] - s.rollups[0]))) / (s.sizes[0] - s.rollups[0]);
      console.log(`${'  the same without the hourly roll-ups'.padEnd(64)} ${rest(inc).toFixed(2).padStart(7)} %   baseline ${rest(base).toFixed(2)} %   (the rest ${mb(inc.sizes[0] - inc.rollups[0])} MB on day ${FIRST_REPORTED}, ${((inc.sizes[0] - inc.rollups[0]) / CHECKS / RETENTION_DAYS / 1e3).toFixed(1)} KB per check and day kept; roll-ups grew ${mb(inc.rollups[1] - inc.rollups[0])} MB, ${((inc.rollups[1] - inc.rollups[0]) / CHECKS / (DAYS - FIRST_REPORTED) / 1e3).toFixed(1)} KB per check a day)`);
      console.log(`${'  file size, incremental / baseline, on the last day'.padEnd(64)} ${(inc.sizes.at(-1) / base.sizes.at(-1)).toFixed(3).padStart(7)}`);
    }
    const resultsPerFile = CHECKS * DAYS * 24 * 60;
    console.log(`(${resultsPerFile} results a file; ${totalS.toFixed(0)} s in all; prune ${(inc.pruneMs / 1000).toFixed(1)} s incremental, ${(base.pruneMs / 1000).toFixed(1)} s baseline; reclaim ${(inc.reclaimMs / 1000).toFixed(1)} s for ${inc.freed} pages)`);

    // Retention cut to fewer days: the new file gives the space back, the baseline keeps it.
    const shrunk = new Date(t0 + (DAYS - SHRUNK_DAYS) * DAY);
    const was = await Promise.all(stores.map(size));
    for (const s of stores) await retention(s, shrunk);
    const now = await Promise.all(stores.map(size));
    console.log(`retention cut to ${SHRUNK_DAYS} days: incremental ${mb(was[0])} -> ${mb(now[0])} MB (${(now[0] / was[0]).toFixed(2)}), baseline ${mb(was[1])} -> ${mb(now[1])} MB (${(now[1] / was[1]).toFixed(2)})`);

    // Converting the baseline the way an operator would offline: one VACUUM with the pragma set.
    const t = performance.now();
    await base.storage.knex.raw('PRAGMA auto_vacuum = INCREMENTAL');
    await base.storage.knex.raw('VACUUM');
    const vacuumS = (performance.now() - t) / 1000;
    const after = await size(base);
    console.log(`baseline converted (PRAGMA auto_vacuum = INCREMENTAL; VACUUM): ${vacuumS.toFixed(1)} s, file ${mb(now[1])} -> ${mb(after)} MB, ${(vacuumS / (after / 1e9)).toFixed(1)} s per GB kept; auto_vacuum now ${await pragma(base, 'auto_vacuum')}`);
    for (const s of stores) await s.storage.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  console.error(`sqlite-steady-state benchmark failed: ${String(err.message ?? err).slice(0, 400)}`);
  process.exit(1);
}
