// The engine's scheduler with 100,000 active checks of mixed frequencies (1, 2 and 5 minutes:
// about 940 runs a second) and a no-op runner, in memory storage: time to start (load the checks
// and bring the schedule in step), heap after start, and the lateness of dispatch (actual start
// minus planned start). Beside it, in its own process, the same load with one setTimeout per check.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHECKS = Number(process.env.BENCH_CHECKS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
// Slots that fell due while the engine was starting run at once after it: measured apart, after this warm-up.
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const FREQUENCIES = [1, 2, 5];

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

async function vigilMode() {
  const { createVigil, randomIdGenerator } = await import('@vigil/core');
  const { memoryStorage, tcpCheckFixture } = await import('@vigil/core/testing');
  const storage = memoryStorage();
  const lateness = recorder();
  const runner = {
    checkType: 'TCP',
    async run(job) {
      lateness.add(Date.now() - Date.parse(job.dueAt));
      return { hasFailures: false, hasErrors: false, isDegraded: false, overMaxResponseTime: false, responseTime: 1, phases: {}, errorMessage: null, failureKind: null };
    },
  };
  // Results are not what is measured here: keep them out of memory.
  storage.checkResults.insertMany = async () => {};
  const vigil = createVigil({ storage, secretKey: 'd'.repeat(64), runners: [runner], engine: { concurrency: 200, claimBatch: 2000 } });
  const now = new Date().toISOString();
  for (let i = 0; i < CHECKS; i++) {
    await storage.checks.insert('bench', { ...tcpCheckFixture(), id: randomIdGenerator.uuid(), name: `c${i}`, frequency: FREQUENCIES[i % 3], frequencyOffset: null, created_at: now });
  }
  const t0 = performance.now();
  await vigil.start();
  const result = await lateness.measure(performance.now() - t0);
  await vigil.stop(1000);
  return result;
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
  const c = fork(fileURLToPath(import.meta.url), [mode], { execArgv: ['--expose-gc'], stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    c.once('message', resolve);
    c.once('exit', (code) => code && reject(new Error(`${mode} exited with ${code}`)));
  });
}

if (process.argv[2] === 'vigil') process.send(await vigilMode(), () => process.exit(0));
else if (process.argv[2] === 'timers') process.send(await timersMode(), () => process.exit(0));
else {
  console.log(`${CHECKS} checks at 1, 2 and 5 minutes; lateness measured over ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up (warm-up runs and their p99 shown apart)`);
  const vigil = await child('vigil');
  const timers = await child('timers');
  const rows = [
    { scheduler: 'vigil engine (one queue, one timer, claims)', ...vigil },
    { scheduler: 'one setTimeout per check (baseline)', ...timers },
  ];
  console.table(rows);
  console.log(`lateness p99 ratio vigil/baseline: ${(vigil.p99 / Math.max(timers.p99, 0.01)).toFixed(2)}; heap ratio: ${(vigil.heapMB / timers.heapMB).toFixed(2)}`);
  console.log('targets: start under 5 s, heap under 300 MB, p99 lateness under 10 ms');
}
