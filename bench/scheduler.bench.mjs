// The engine's scheduler with 100,000 active checks of mixed frequencies (1, 2 and 5 minutes:
// about 940 runs a second) and a no-op runner, in memory storage: time to start (load the checks
// and bring the schedule in step), heap after start, and the lateness of dispatch (actual start
// minus planned start). Beside it, each in its own process, the same load with one setTimeout per
// check: once doing a run's whole work as the engine does (claim, run, status write, alert round),
// once doing nothing.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHECKS = Number(process.env.BENCH_CHECKS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
// Slots that fell due while the engine was starting run at once after it: measured apart, after this warm-up.
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const FREQUENCIES = [1, 2, 5];
const LOCATION = 'eu-west-1';

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN;
}

/** Lateness samples, kept only while measuring: a warm-up window, then the measured one. */
function recorder() {
  const lateness = [];
  let measuring = false;
  return {
    add(ms) {
      if (measuring) lateness.push(ms);
    },
    async measure(startMs) {
      measuring = true;
      await new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000));
      const warmup = Float64Array.from(lateness.splice(0)).sort();
      await new Promise((r) => setTimeout(r, SECONDS * 1000));
      measuring = false;
      return { ...summary(lateness, startMs), warmupRuns: warmup.length, warmupP99: +percentile(warmup, 0.99).toFixed(0) };
    },
  };
}

function summary(lateness, startMs) {
  const sorted = Float64Array.from(lateness).sort();
  global.gc?.();
  return {
    startSeconds: +(startMs / 1000).toFixed(2),
    heapMB: Math.round(process.memoryUsage().heapUsed / 1048576),
    runs: lateness.length,
    runsPerSecond: Math.round(lateness.length / SECONDS),
    p50: +percentile(sorted, 0.5).toFixed(2),
    p99: +percentile(sorted, 0.99).toFixed(2),
  };
}

/** A memory store with CHECKS active TCP checks and a Vigil on it whose runner records lateness. */
async function setup(lateness) {
  const { createVigil, randomIdGenerator } = await import('@vigil/core');
  const { memoryStorage, tcpCheckFixture } = await import('@vigil/core/testing');
  const storage = memoryStorage();
  const runner = {
    checkType: 'TCP',
    async run(job) {
      lateness.add(Date.now() - Date.parse(job.dueAt));
      return { hasFailures: false, hasErrors: false, isDegraded: false, overMaxResponseTime: false, responseTime: 1, phases: {}, errorMessage: null, failureKind: null };
    },
  };
  // Results are not what is measured here: keep them out of memory.
  storage.checkResults.insertMany = async () => {};
  const vigil = createVigil({ storage, secretKey: 'd'.repeat(64), runners: [runner], defaultLocation: LOCATION, engine: { concurrency: 200, claimBatch: 2000 } });
  const now = new Date().toISOString();
  for (let i = 0; i < CHECKS; i++) {
    await storage.checks.insert('bench', { ...tcpCheckFixture(), id: randomIdGenerator.uuid(), name: `c${i}`, frequency: FREQUENCIES[i % 3], frequencyOffset: null, created_at: now });
  }
  return { storage, vigil };
}

async function vigilMode() {
  const lateness = recorder();
  const { vigil } = await setup(lateness);
  const t0 = performance.now();
  await vigil.start();
  const result = await lateness.measure(performance.now() - t0);
  await vigil.stop(1000);
  return result;
}

/**
 * One setTimeout per check, each doing a run's whole work as the engine does it: claim the entry
 * from the shared schedule, run it through the engine's own job handler (the check read, the run,
 * the status write and the alert round) and move the entry to its next time.
 */
async function timersWorkMode() {
  const { plannedEntries } = await import('@vigil/core/internals');
  const lateness = recorder();
  const { storage, vigil } = await setup(lateness);
  const handlers = vigil.engine.handlers;
  const serves = { locations: 'all', privateLocations: 'all' };
  const signal = new AbortController().signal;
  // One timer per schedule entry (a check in each of its locations), armed for the entry's due time.
  const arm = (dueAt) => {
    const due = Date.parse(dueAt);
    setTimeout(async () => {
      // Late timers may fire out of order and take each other's entry: claim what is due by now.
      // Every kind, as the engine claims: entries a run adds (an alert tick) are due too.
      const [claim] = await storage.schedule.claimDue(new Date(Math.max(due, Date.now())), serves, 1, 120_000, 'bench');
      if (!claim) return;
      const next = await handlers.handle({ due: Date.parse(claim.dueAt), claim, seq: 0 }, { signal, mustEndBy: new Date(due + 60_000), onRunnerWait: () => {} });
      if (next === 'leave' || next === null) return;
      await storage.schedule.complete(claim, next);
      arm(next.toISOString());
    }, Math.max(0, due - Date.now()));
  };
  const t0 = performance.now();
  const now = new Date();
  for (const check of await storage.checks.scan(null, CHECKS)) {
    const entries = plannedEntries(check.accountId, check, null, LOCATION, now);
    await storage.schedule.ensure(entries);
    for (const e of entries) arm(e.dueAt);
  }
  return lateness.measure(performance.now() - t0);
}

async function timersMode() {
  const { randomIdGenerator } = await import('@vigil/core');
  const { checkPeriodMs, checkPhaseMs } = await import('@vigil/core/internals');
  const lateness = recorder();
  const t0 = performance.now();
  for (let i = 0; i < CHECKS; i++) {
    const check = { id: randomIdGenerator.uuid(), frequency: FREQUENCIES[i % 3], frequencyOffset: null };
    const period = checkPeriodMs(check);
    const phase = checkPhaseMs(check);
    const arm = () => {
      const now = Date.now();
      const due = phase + (Math.floor((now - phase) / period) + 1) * period;
      setTimeout(() => {
        lateness.add(Date.now() - due);
        arm();
      }, due - now);
    };
    arm();
  }
  return lateness.measure(performance.now() - t0);
}

async function child(mode) {
  const c = fork(fileURLToPath(import.meta.url), [mode], { execArgv: ['--expose-gc', ...(process.env.BENCH_CHILD_ARGS ? process.env.BENCH_CHILD_ARGS.split(' ') : [])], stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    c.once('message', resolve);
    c.once('exit', (code) => code && reject(new Error(`${mode} exited with ${code}`)));
  });
}

if (process.argv[2] === 'vigil') process.send(await vigilMode(), () => process.exit(0));
else if (process.argv[2] === 'timers-work') process.send(await timersWorkMode(), () => process.exit(0));
else if (process.argv[2] === 'timers') process.send(await timersMode(), () => process.exit(0));
else {
  console.log(`${CHECKS} checks at 1, 2 and 5 minutes; lateness measured over ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up (warm-up runs and their p99 shown apart)`);
  const vigil = await child('vigil');
  const working = await child('timers-work');
  const timers = await child('timers');
  const rows = [
    { scheduler: 'vigil engine (one queue, one timer, claims)', ...vigil },
    { scheduler: 'one setTimeout per check, same work per run', ...working },
    { scheduler: 'one setTimeout per check, no work', ...timers },
  ];
  console.table(rows);
  console.log(`lateness p99 vigil/same-work baseline: ${(vigil.p99 / Math.max(working.p99, 0.01)).toFixed(2)}; vigil/bare timers: ${(vigil.p99 / Math.max(timers.p99, 0.01)).toFixed(2)}; heap vigil/bare timers: ${(vigil.heapMB / timers.heapMB).toFixed(2)}`);
  const met = (ok) => (ok ? 'met' : 'NOT met');
  console.log(`targets: start < 2 s: ${met(vigil.startSeconds < 2)}; heap < 150 MB: ${met(vigil.heapMB < 150)}; lateness p99 <= 5 ms: ${met(vigil.p99 <= 5)}; p99 at or below the same-work baseline: ${met(vigil.p99 <= working.p99)}`);
}
