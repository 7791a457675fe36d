// One engine process for the multi-process test: PostgreSQL storage, a TCP runner that passes at
// once. It prints "ready" when it has started and stops cleanly on SIGTERM.
import { createVigil } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';

const storage = knexStorage({ client: 'pg', connection: process.env.VIGIL_PG_URL, tablePrefix: process.env.TABLE_PREFIX, pool: { min: 0, max: 8 } });
const runner = {
  checkType: 'TCP',
  async run() {
    return { hasFailures: false, hasErrors: false, isDegraded: false, overMaxResponseTime: false, responseTime: 1, phases: { total: 1 }, errorMessage: null, failureKind: null };
  },
};
const vigil = createVigil({
  storage,
  secretKey: process.env.VIGIL_SECRET_KEY,
  runners: [runner],
  engine: { leaseMs: Number(process.env.LEASE_MS), lookaheadMs: 1_000, pollMs: 250, concurrency: 30, owner: process.env.OWNER },
});
await vigil.start();
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await vigil.stop(5_000);
  await vigil.close();
  process.exit(0);
});
