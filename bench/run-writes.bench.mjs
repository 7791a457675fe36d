// What storing a passing scheduled run costs once its check is known, as the engine stores it: the
// result (checkResults.insertMany of the one run) and the alert state stepped with no alert
// (alertStates.transition), 10 runs at once, 300 checks, BENCH_ROUNDS (default 10) runs of each.
// Each check's first run (its key made, its detail kept) comes before the clock starts. Beside it,
// the least a store could send for the same run: one knex insert of a row of the narrow table's
// columns into a plain table and one compare-and-set update of the state's JSON text, on the same
// database and pool. Printed: runs a second, the process's CPU and (PostgreSQL on this machine)
// the server's CPU a run, and the ratio. SQLite always, PostgreSQL with VIGIL_PG_URL.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { slotResultId } from '@vigil/core';
import { alertStateFixture, checkResultFixture } from '@vigil/core/testing';
import { knexStorage } from '@vigil/storage-knex';
import { pgCpu } from './pg-cpu.mjs';

const PG_URL = process.env.VIGIL_PG_URL;
const CHECKS = 300;
const AT_ONCE = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const ACCOUNT = 'bench-account';
const t0 = Date.UTC(2026, 4, 1, 10);

/** Check c's run i: passing, due i seconds into the hour (one hour: only run 0 keeps its detail). */
function run(c, i) {
  const due = t0 + i * 1000;
  const at = new Date(due + 3).toISOString();
  return checkResultFixture(`check-${c}`, {
    id: slotResultId(`check-${c}`, 'us-east-1', new Date(due), 1), name: `check ${c}`, startedAt: at, stoppedAt: at, created_at: at,
    responseTime: 1.5, phases: { dns: 0, connection: 1.5, data: 0, total: 1.5 }, details: { response: 'PONG', errorCode: null },
  });
}

/** Runs `one(c, i)` for rounds `from`..`to` of every check, AT_ONCE at a time; its runs/s and CPU a run. */
async function timed(pg, from, to, one) {
  const cpu0 = process.cpuUsage();
  const pg0 = pg ? pgCpu() : 0;
  const start = performance.now();
  for (let i = from; i <= to; i++) {
    for (let c = 0; c < CHECKS; c += AT_ONCE) await Promise.all(Array.from({ length: AT_ONCE }, (_, k) => one(c + k, i)));
  }
  const n = CHECKS * (to - from + 1);
  const cpu = process.cpuUsage(cpu0);
  return { rate: Math.round(n / ((performance.now() - start) / 1000)), cpuUs: (cpu.user + cpu.system) / n, pgUs: pg ? ((pgCpu() - pg0) * 1e6) / n : NaN };
}

async function measure(storage, pg, prefix) {
  await storage.migrate();
  const knex = storage.knex;
  const states = new Map();
  const vigil = async (c, i) => {
    await storage.checkResults.insertMany(ACCOUNT, [run(c, i)]);
    const next = alertStateFixture({ lastRunId: `run-${c}-${i}` });
    if (!(await storage.alertStates.transition(ACCOUNT, `check-${c}`, states.get(c) ?? null, next, []))) throw new Error('the alert state was not where it was left');
    states.set(c, next);
  };
  const runs = `${prefix}bench_plain_runs`;
  const alertStates = `${prefix}bench_plain_states`;
  await knex.schema.createTable(runs, (t) => {
    for (const col of ['slot', 'check_key', 'rt', 'dns', 'connection', 'data']) t.bigInteger(col).notNullable();
    for (const col of ['start_off', 'stop_off', 'flags']) t.integer(col).notNullable();
    t.primary(['check_key', 'slot']);
  });
  await knex.schema.createTable(alertStates, (t) => {
    t.string('id').primary();
    t.text('data').notNullable();
  });
  const plainState = new Map();
  const plain = async (c, i) => {
    await knex(runs).insert({ slot: i, check_key: c, rt: 150, dns: 0, connection: 150, data: 0, start_off: 3, stop_off: 3, flags: 0 });
    const next = JSON.stringify(alertStateFixture({ lastRunId: `run-${c}-${i}` }));
    const was = plainState.get(c);
    if (was === undefined) await knex(alertStates).insert({ id: `check-${c}`, data: next });
    else if (Number(await knex(alertStates).where({ id: `check-${c}`, data: was }).update({ data: next })) !== 1) throw new Error('the plain state was not where it was left');
    plainState.set(c, next);
  };
  try {
    await timed(pg, 0, 0, vigil);
    await timed(pg, 0, 0, plain);
    // Taken in turns, half the rounds each time.
    const half = Math.max(1, Math.floor(ROUNDS / 2));
    const v = [await timed(pg, 1, half, vigil)];
    const b = [await timed(pg, 1, half, plain)];
    v.push(await timed(pg, half + 1, ROUNDS, vigil));
    b.push(await timed(pg, half + 1, ROUNDS, plain));
    const best = (xs) => xs.reduce((a, x) => (x.rate > a.rate ? x : a));
    return { vigil: best(v), plain: best(b) };
  } finally {
    await knex.schema.dropTableIfExists(runs);
    await knex.schema.dropTableIfExists(alertStates);
  }
}

function print(db, { vigil, plain }) {
  const cpu = (x) => `${Math.round(x.cpuUs)} us${Number.isNaN(x.pgUs) ? '' : ` + PostgreSQL ${Math.round(x.pgUs)} us`}`;
  console.log(`${`a passing run stored, its check known, ${db}`.padEnd(48)} ${String(vigil.rate).padStart(6)} runs/s   baseline ${String(plain.rate).padStart(6)}   ratio ${(vigil.rate / plain.rate).toFixed(2)}`);
  console.log(`${''.padEnd(48)} CPU a run: ${cpu(vigil)}; baseline ${cpu(plain)} (no goal)`);
}

console.log(`${CHECKS} checks, ${ROUNDS} passing runs each, ${AT_ONCE} at once: the result and the alert state (no alert); baseline: one plain insert and one compare-and-set update`);
const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
try {
  const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'vigil.sqlite') });
  try {
    print('SQLite', await measure(storage, false, 'vigil_'));
  } finally {
    await storage.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (PG_URL) {
  const prefix = `brw_${randomBytes(3).toString('hex')}_`;
  const storage = knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: prefix });
  try {
    print('PostgreSQL', await measure(storage, true, prefix));
  } finally {
    const { rows } = await storage.knex.raw('select tablename from pg_tables where starts_with(tablename, ?)', [prefix]);
    for (const { tablename } of rows) await storage.knex.raw('drop table if exists ?? cascade', [tablename]);
    await storage.close();
  }
} else console.log('PostgreSQL figures skipped: set VIGIL_PG_URL');
