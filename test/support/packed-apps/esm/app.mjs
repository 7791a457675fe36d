// An ES-module host as the README's "Embedding Vigil" shows it: Vigil on a SQLite file beside this
// file, the TCP runner, the API under /api and the console under /console of an Express app, and closeOnSignals for SIGTERM.
// VIGIL_SECRET_KEY, VIGIL_ACCOUNT_ID and VIGIL_API_KEY are the host's secrets (the test sets them).
import { fileURLToPath } from 'node:url';
import express from 'express';
import { closeOnSignals, createVigil } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
import { vigilConsole } from '@vigil/console';
import { tcpRunner } from '@vigil/runner-tcp';
import { knexStorage } from '@vigil/storage-knex';

const vigil = createVigil({
  storage: knexStorage({ client: 'sqlite3', connection: fileURLToPath(new URL('./vigil.sqlite', import.meta.url)) }),
  secretKey: process.env.VIGIL_SECRET_KEY,
  runners: [tcpRunner()],
});
await vigil.start();

const account = await vigil.accounts.ensure(process.env.VIGIL_ACCOUNT_ID);
await vigil.apiKeys.ensure(account.id, process.env.VIGIL_API_KEY, 'packed esm host');

const app = express();
app.use('/api', vigilRouter(vigil));
app.use('/console', vigilConsole(vigil));
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: server.address().port }));
});
closeOnSignals(vigil, { beforeClose: () => new Promise((done) => server.close(done)) });
