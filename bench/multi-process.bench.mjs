// Several engine processes on one PostgreSQL database: a fixed backlog of BENCH_CHECKS (default
// 3,000) TCP checks, every entry due at one instant T0, drained by 1 and then by 2 engine processes
// (child processes, each a full createVigil with @vigil/storage-knex, a TCP runner that passes,
// results, statuses and the rest of a run stored as usual), in two loads: runs that answer at once
// and runs that wait BENCH_WAIT_MS (default 1,000) first. A run counts when it starts (the drain
// ends when the last one starts, not when it is stored). Printed: runs a second for each,
// their ratio, each process's share, the lateness p99 (start minus due: in a backlog it grows with
// the drain, so compare the two rows), and from the database: slots stored twice, slots run twice
// and slots missed. Each round has its own tables (a prefix), dropped at the end.
// BENCH_WARM=1 measures a second drain: the processes first drain the backlog once unmeasured (each
// check's first run in a process learns its keys and keeps the hour's document, in a transaction),
// then the same backlog again, due at a later instant, measured. With 2 processes a check may go to
// the one that did not run it first: the share of runs of checks their process had run is printed.
// BENCH_PROF=1 writes the children's CPU profiles to /tmp/prof-multiproc.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pgCpu } from './pg-cpu.mjs';

const PG_URL = process.env.VIGIL_PG_URL;
const CHECKS = Number(process.env.BENCH_CHECKS ?? 3_000);
const WAIT_MS = Number(process.env.RUN_WAIT_MS ?? 0);
const WARM = process.env.BENCH_WARM === '1';
const EPOCH_MS = Date.UTC(2020, 0, 1);
const SLOTS_PER_MS = 4096;
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);

async function engineChild() {
  const { createVigil } = await import('@vigil/core');
  const { knexStorage } = await import('@vigil/storage-knex');
  const storage = knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: process.env.TABLE_PREFIX, pool: { min: 0, max: 10 } });
  let lateness = [];
  // The backlog's due time (the one measured); a warm drain moves it.
  let counted = Number(process.env.T0);
  // The checks this process has run, and how many of the counted runs were of one of them.
  const ran = new Set();
  let runBefore = 0;
  const runner = {
    checkType: 'TCP',
    async run(job) {
      // Only the backlog's slot counts; a check's next slot falling due during the drain is apart.
      if (Date.parse(job.dueAt) === counted) {
        lateness.push(Date.now() - Date.parse(job.dueAt));
        if (ran.has(job.check.id)) runBefore++;
      }
      ran.add(job.check.id);
      if (WAIT_MS > 0) await new Promise((r) => setTimeout(r, WAIT_MS));
      return { hasFailures: false, hasErrors: false, isDegraded: false, overMaxResponseTime: false, responseTime: 1, phases: { dns: 0, connection: 1, data: 0, total: 1 }, errorMessage: null, failureKind: null };
    },
  };
  const vigil = createVigil({ storage, secretKey: process.env.VIGIL_SECRET_KEY, runners: [runner], engine: { owner: process.env.OWNER } });
  process.on('message', async (m) => {
    if (m === 'start') {
      let cpu = process.cpuUsage();
      await vigil.start();
      const timer = setInterval(() => process.send({ runs: lateness.length }), 200);
      const next = async (m2) => {
        if (m2?.measure) {
          // After a warm drain: count the backlog due at `measure` from now on, and say so.
          counted = m2.measure;
          lateness = [];
          runBefore = 0;
          cpu = process.cpuUsage();
          process.send({ measuring: true });
          process.once('message', next);
          return;
        }
        clearInterval(timer);
        const used = process.cpuUsage(cpu);
        await vigil.stop(5_000);
        await vigil.close();
        process.send({ final: true, runs: lateness.length, runBefore, lateness, cpuSeconds: (used.user + used.system) / 1e6 }, () => process.exit(0));
      };
      process.once('message', next);
    }
  });
  process.send({ ready: true });
}

/** One round: `n` engine processes drain the backlog; answers their figures. */
async function round(n, waitMs) {
  const { createVigil } = await import('@vigil/core');
  const { tcpCheckFixture } = await import('@vigil/core/testing');
  const { knexStorage } = await import('@vigil/storage-knex');
  const prefix = `bmp_${randomBytes(3).toString('hex')}_`;
  const secretKey = randomBytes(32).toString('hex');
  const storage = knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: prefix });
  const knex = storage.knex;
  try {
    const host = createVigil({ storage, secretKey });
    const account = await host.accounts.ensure();
    const now = new Date().toISOString();
    const ids = [];
    for (let i = 0; i < CHECKS; i += 200) {
      await Promise.all(Array.from({ length: Math.min(200, CHECKS - i) }, (_, j) => {
        const id = randomBytes(16).toString('hex').replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, '$1-$2-$3-$4-$5');
        ids.push(id);
        return storage.checks.insert(account.id, { ...tcpCheckFixture(), id, name: `c${i + j}`, frequency: 60, frequencyOffset: null, locations: ['us-east-1'], created_at: now });
      }));
    }
    // Every entry due at T0 (a whole second, a little in the past): the backlog.
    let t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const table = `${prefix}schedule`;
    await knex(table).delete();
    for (let i = 0; i < ids.length; i += 500) {
      await knex(table).insert(ids.slice(i, i + 500).map((id) => ({ kind: 'run', account_id: account.id, check_id: id, location: 'us-east-1', ref: '', private: false, due_ms: t0 })));
    }
    const execArgv = process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-multiproc'] : [];
    const children = Array.from({ length: n }, (_, k) => fork(fileURLToPath(import.meta.url), ['engine'], {
      execArgv, env: { ...process.env, T0: String(t0), TABLE_PREFIX: prefix, VIGIL_SECRET_KEY: secretKey, OWNER: `engine-${k}`, RUN_WAIT_MS: String(waitMs) },
    }));
    const runs = children.map(() => 0);
    const finals = [];
    const measuring = children.map(() => null);
    await Promise.all(children.map((c, k) => new Promise((resolve) => c.on('message', (m) => {
      if (m.ready) resolve();
      else if (m.final) finals[k] = m;
      else if (m.measuring) measuring[k]();
      else runs[k] = m.runs;
    }))));
    const drained = () => new Promise((resolve) => {
      const poll = () => (runs.reduce((a, b) => a + b, 0) >= CHECKS ? resolve() : setTimeout(poll, 20));
      poll();
    });
    if (WARM) {
      for (const c of children) c.send('start');
      // The unmeasured drain, until every entry is stored and moved on; then the same backlog due
      // at a later instant, counted once each process has started counting it.
      await drained();
      const moved = knex(table).where({ kind: 'run' }).where('due_ms', '>', t0).whereNull('lease_owner').count({ n: '*' });
      while (Number((await moved.clone())[0].n) < CHECKS) await new Promise((r) => setTimeout(r, 50));
      // A whole second in the past, after the first drain's.
      const next = Math.floor(Date.now() / 1000) * 1000 - 1000;
      t0 = next > t0 ? next : t0 + 1000;
      await Promise.all(children.map((c, k) => new Promise((resolve) => {
        measuring[k] = resolve;
        c.send({ measure: t0 });
      })));
      runs.fill(0);
    }
    const cpu0 = pgCpu();
    const start = performance.now();
    if (WARM) await knex(table).where({ kind: 'run' }).update({ due_ms: t0 });
    else for (const c of children) c.send('start');
    while (runs.reduce((a, b) => a + b, 0) < CHECKS) await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - start) / 1000;
    const pgCpuSeconds = pgCpu() - cpu0;
    const exits = children.map((c) => new Promise((r) => c.once('exit', r)));
    for (const c of children) c.send('stop');
    await Promise.all(exits);
    const lateness = Float64Array.from(finals.flatMap((f) => f.lateness)).sort();
    const executed = finals.reduce((a, f) => a + f.runs, 0);
    // From the database: the T0 slot of every check (slot = (due - 2020) * 4096 + location * 16 + attempt).
    const from = (t0 - EPOCH_MS) * SLOTS_PER_MS;
    const { rows: [stored] } = await knex.raw(
      `select count(*)::int as rows, count(distinct (check_key, slot))::int as slots, count(distinct check_key)::int as checks from ?? where slot >= ? and slot < ?`,
      [`${prefix}check_runs_tcp`, from, from + SLOTS_PER_MS],
    );
    return {
      processes: n, seconds: +seconds.toFixed(2), runsPerSecond: Math.round(CHECKS / seconds),
      shares: finals.map((f) => f.runs / executed), runBefore: finals.reduce((a, f) => a + f.runBefore, 0) / executed,
      p99: +pct(lateness, 0.99).toFixed(0),
      storedTwice: stored.rows - stored.slots, ranTwice: executed - stored.slots, missed: CHECKS - stored.checks,
      pgCpu: pgCpuSeconds, engineCpu: finals.reduce((a, f) => a + f.cpuSeconds, 0),
    };
  } finally {
    const { rows } = await knex.raw('select tablename from pg_tables where tablename like ?', [`${prefix}%`]);
    for (const { tablename } of rows) await knex.raw('drop table if exists ?? cascade', [tablename]);
    await storage.close();
  }
}

const mark = (ok) => (ok ? 'met' : 'NOT met');

if (process.argv[2] === 'engine') await engineChild();
else if (!PG_URL) console.log('skipped: set VIGIL_PG_URL (a PostgreSQL database) to run the multi-process bench');
else {
  const fmt = (r) => ({
    processes: r.processes, seconds: r.seconds, 'runs/s': r.runsPerSecond, shares: r.shares.map((s) => `${(s * 100).toFixed(1)}%`).join(' / '),
    'lateness p99 ms': r.p99, 'stored twice': r.storedTwice, 'ran twice': r.ranTwice, missed: r.missed,
    ...(WARM ? { 'of checks run before': `${(r.runBefore * 100).toFixed(0)}%` } : {}),
    'PG CPU s': +r.pgCpu.toFixed(1), 'engines CPU s': +r.engineCpu.toFixed(1),
    'CPU ms a run (PG / engines)': `${((r.pgCpu / CHECKS) * 1000).toFixed(2)} / ${((r.engineCpu / CHECKS) * 1000).toFixed(2)}`,
  });
  const loads = [
    { waitMs: 0, title: 'runs that cost only CPU (the runner answers at once): one process is held by its CPU and PostgreSQL\'s' },
    { waitMs: Number(process.env.BENCH_WAIT_MS ?? 1_000), title: 'runs that wait on the network: one process is held by its concurrency (100 runs at once)' },
  ];
  for (const { waitMs, title } of loads) {
    const which = WARM ? ' (BENCH_WARM: the second drain by the same processes)' : '';
    console.log(`\n${CHECKS} TCP checks all due at one instant, each run ${waitMs} ms, drained by 1 then 2 engine processes on one PostgreSQL database${which}: ${title}`);
    const one = await round(1, waitMs);
    const two = await round(2, waitMs);
    console.table([fmt(one), fmt(two)]);
    const ratio = two.runsPerSecond / one.runsPerSecond;
    const spread = Math.max(...two.shares) - Math.min(...two.shares);
    console.log(`runs/s 2 processes / 1 process: ${ratio.toFixed(2)}x (goal >= 1.6x: ${mark(ratio >= 1.6)})`);
    console.log(`shares of the 2 processes differ by ${(spread * 100).toFixed(1)} points (goal within 10: ${mark(spread <= 0.1)})`);
    const dup = one.storedTwice + two.storedTwice + one.ranTwice + two.ranTwice;
    const missed = one.missed + two.missed;
    console.log(`duplicates (stored or run twice): ${dup} (goal 0: ${mark(dup === 0)}); missed slots: ${missed} (goal 0: ${mark(missed === 0)})`);
    console.log(`lateness p99: 1 process ${one.p99} ms, 2 processes ${two.p99} ms (a backlog: it is the drain time; goal lower with 2: ${mark(two.p99 < one.p99)})`);
  }
  console.log('CPU seconds are those used during the drain; 2 cores shared with PostgreSQL and other load (see `uptime`)');
}
