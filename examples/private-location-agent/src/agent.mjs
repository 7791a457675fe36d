// A private-location agent: a Vigil process inside a private network that runs only the checks of
// one private location, sharing the host's PostgreSQL database (VIGIL_DB). It serves no API, only
// the health probes on AGENT_HEALTH_PORT (default 8081).
import { consoleLogger, createVigil } from '@vigil/core';
import { agentHealthServer } from '@vigil/http-express-adapter';
import { registerDnsRunner } from '@vigil/runner-dns';
import { registerHttpRunner } from '@vigil/runner-http';
import { registerIcmpRunner } from '@vigil/runner-icmp';
import { registerPlaywrightRunner } from '@vigil/runner-playwright';
import { registerTcpRunner } from '@vigil/runner-tcp';
import { registerKnexStorage } from '@vigil/storage-knex';

const location = process.env.PRIVATE_LOCATION;
const db = process.env.VIGIL_DB;
const secretKey = process.env.VIGIL_SECRET_KEY;
if (!location || !db || !secretKey) {
  console.error('Set PRIVATE_LOCATION (the private location this agent runs), VIGIL_DB (the host\'s postgres:// URL) and VIGIL_SECRET_KEY (the host\'s key)');
  process.exit(2);
}

const postgres = /^postgres(ql)?:\/\//.test(db);
const vigil = createVigil(
  {
    secretKey,
    logger: consoleLogger(process.env.LOG_LEVEL ?? 'info'),
    // Only this private location: no data-center location, no other private one.
    serves: { locations: [], privateLocations: [location] },
    defaultLocation: location,
  },
  (container) => {
    const tablePrefix = process.env.VIGIL_TABLE_PREFIX ?? 'vigil_';
    registerKnexStorage(container, postgres ? { client: 'pg', connection: db, tablePrefix } : { client: 'sqlite3', connection: db, tablePrefix });
    registerTcpRunner(container);
    registerHttpRunner(container);
    registerDnsRunner(container);
    registerIcmpRunner(container);
    registerPlaywrightRunner(container);
  },
);

let dbUp = true;
const probes = await agentHealthServer({
  ready: async () => {
    try {
      await vigil.storage.accounts.listIds();
      dbUp = true;
    } catch {
      dbUp = false;
    }
    return dbUp;
  },
});
await vigil.start();
console.log(`Private-location agent for "${location}" running; probes on port ${probes.port}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    // Readiness answers 503 first, then running checks finish and the leases go back.
    probes.shutdown();
    await vigil.stop(Number(process.env.STOP_DEADLINE_MS ?? 30_000));
    await vigil.close();
    await probes.close();
    process.exit(0);
  });
}
