// One engine process of the crash test: PostgreSQL storage, Vigil's WEBHOOK transport, and a TCP
// runner whose outcome is a function of the slot (failing in odd periods, passing in even ones),
// so every run changes the check's state and raises one alert. It prints "ready" once started
// (and with REPORT_RUNS set, "ran" as each run's outcome is handed back for storing), and stops
// cleanly on SIGTERM.
import { consoleLogger, createVigil } from '@vigil/core';
import { webhookTransport } from '@vigil/alert-channels';
import { knexStorage } from '@vigil/storage-knex';

const period = Number(process.env.PERIOD_MS);
const leaseMs = Number(process.env.LEASE_MS);
const storage = knexStorage({ client: 'pg', connection: process.env.VIGIL_DB, pool: { min: 0, max: 8 } });
const runner = {
  checkType: 'TCP',
  async run(job) {
    // A little work, so that runs overlap and some are under way when the process dies.
    await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
    const failing = Math.round(Date.parse(job.dueAt) / period) % 2 === 1;
    if (process.env.REPORT_RUNS) process.stdout.write(`ran ${job.check.id}\n`);
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
  engine: { leaseMs, lookaheadMs: 1_000, pollMs: 250, concurrency: 30, owner: process.env.OWNER },
  alerts: { leaseMs, pollMs: 250, backoffBaseMs: 1_000, owner: `${process.env.OWNER}:alerts` },
});
await vigil.start();
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await vigil.stop(5_000);
  await vigil.close();
  process.exit(0);
});
