// A host as a user writes it: SQLite file, a TCP check against TARGET_PORT, then either closes
// itself (MODE=close) or waits for a signal (MODE=signals, closeOnSignals). It prints `ready`
// once a result of the check (run at once through a check session) is stored.
import { closeOnSignals, createVigil } from '@vigil/core';
import { tcpRunner } from '@vigil/runner-tcp';
import { knexStorage } from '@vigil/storage-knex';

const storage = knexStorage({ client: 'sqlite3', connection: process.env.DB_FILE });
const vigil = createVigil({ storage, secretKey: 'ab'.repeat(32), runners: [tcpRunner()], engine: { pollMs: 20 } });
const account = await vigil.accounts.ensure('lifecycle');
const check = await vigil.checks.create(account.id, 'TCP', { name: 'echo', request: { hostname: '127.0.0.1', port: Number(process.env.TARGET_PORT) }, frequency: 1 });
if (process.env.MODE === 'signals') closeOnSignals(vigil, { deadlineMs: 2_000 });
await vigil.start();
// A run now rather than at the check's first slot (up to a minute away).
await vigil.checkSessions.trigger(account.id, { target: { checkId: [check.id] } });
for (let i = 0; i < 500; i++) {
  const page = await vigil.checkResults.list(account.id, check.id, {});
  if (page.items.length > 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
console.log('ready');
if (process.env.MODE === 'close') {
  await vigil.close();
  console.log('closed');
}
