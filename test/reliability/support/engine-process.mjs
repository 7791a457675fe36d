// One engine process of the crash tests: PostgreSQL storage, Vigil's WEBHOOK transport, and a TCP
// runner. With PERIOD_MS a run's outcome is a function of its slot (failing in odd periods, passing
// in even ones), so every run changes the check's state and raises one alert; without it every run
// passes. It prints "ready" once started (and with REPORT_RUNS set, "start <check> <sequence or -> <ms>"
// as each run starts and "ran ..." as its outcome is handed back for storing), and stops cleanly on
// SIGTERM. Optional: RUN_MS "min-max", how long a run works (default 20-100); HANG_PREFIX, a check
// whose name starts with it never answers, whatever its signal says; RUNNER_TIMEOUT_MS, the runner's
// own time limit; POLL_MS, how often the engine claims (default 250).
import { consoleLogger, createVigil } from '@vigil/core';
import { webhookTransport } from '@vigil/alert-channels';
import { knexStorage } from '@vigil/storage-knex';

const period = Number(process.env.PERIOD_MS);
const leaseMs = Number(process.env.LEASE_MS);
const [runMin, runMax] = (process.env.RUN_MS ?? '20-100').split('-').map(Number);
const hangPrefix = process.env.HANG_PREFIX;
const report = (what, job) => {
  if (process.env.REPORT_RUNS) process.stdout.write(`${what} ${job.check.id} ${job.sequenceId ?? '-'} ${Date.now()}\n`);
};
const storage = knexStorage({ client: 'pg', connection: process.env.VIGIL_DB, pool: { min: 0, max: 8 } });
const runner = {
  checkType: 'TCP',
  ...(process.env.RUNNER_TIMEOUT_MS ? { timeoutMs: Number(process.env.RUNNER_TIMEOUT_MS) } : {}),
  async run(job) {
    report('start', job);
    if (hangPrefix && job.check.name.startsWith(hangPrefix)) return new Promise(() => {});
    // A little work, so that runs overlap and some are under way when the process dies.
    await new Promise((r) => setTimeout(r, runMin + Math.floor(Math.random() * (runMax - runMin))));
    const failing = Math.round(Date.parse(job.dueAt) / period) % 2 === 1;
    report('ran', job);
    return {
      hasFailures: failing, hasErrors: false, isDegraded: false, overMaxResponseTime: false, responseTime: 1, phases: { total: 1 },
      errorMessage: failing ? 'Connection refused' : null, failureKind: failing ? 'NETWORK_ERROR' : null,
    };
  },
};
const vigil = createVigil({
  storage,
  secretKey: process.env.VIGIL_SECRET_KEY,
  logger: consoleLogger('warn'),
  runners: [runner],
  transports: [webhookTransport({ timeoutMs: 5_000 })],
  engine: { leaseMs, lookaheadMs: 1_000, pollMs: Number(process.env.POLL_MS ?? 250), concurrency: 30, owner: process.env.OWNER },
  alerts: { leaseMs, pollMs: 250, backoffBaseMs: 1_000, owner: `${process.env.OWNER}:alerts` },
});
await vigil.start();
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await vigil.stop(5_000);
  await vigil.close();
  process.exit(0);
});
