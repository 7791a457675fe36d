// A CommonJS host (require) as the README's "Embedding Vigil" shows it: Vigil on a SQLite file beside
// this file, the TCP runner, the API under /api and the console under /console of an Express app, and closeOnSignals for SIGTERM.
// VIGIL_SECRET_KEY, VIGIL_ACCOUNT_ID and VIGIL_API_KEY are the host's secrets (the test sets them).
const { join } = require('node:path');
const express = require('express');
const { closeOnSignals, createVigil } = require('@vigil/core');
const { vigilRouter } = require('@vigil/http-express-adapter');
const { vigilConsole } = require('@vigil/console');
const { tcpRunner } = require('@vigil/runner-tcp');
const { knexStorage } = require('@vigil/storage-knex');

async function main() {
  const vigil = createVigil({
    storage: knexStorage({ client: 'sqlite3', connection: join(__dirname, 'vigil.sqlite') }),
    secretKey: process.env.VIGIL_SECRET_KEY,
    runners: [tcpRunner()],
  });
  await vigil.start();

  const account = await vigil.accounts.ensure(process.env.VIGIL_ACCOUNT_ID);
  await vigil.apiKeys.ensure(account.id, process.env.VIGIL_API_KEY, 'packed cjs host');

  const app = express();
  app.use('/api', vigilRouter(vigil));
  app.use('/console', vigilConsole(vigil));
  const server = app.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ listening: server.address().port }));
  });
  closeOnSignals(vigil, { beforeClose: () => new Promise((done) => server.close(done)) });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
