// The CommonJS host's checks as code, for `npx vigil plan` / `npx vigil apply`: the same store and
// secret key as app.cjs, with the options the command gives.
const { join } = require('node:path');
const { defineConfig } = require('@vigil/cli');
const { createVigil } = require('@vigil/core');
const { TcpCheck } = require('@vigil/core/constructs');
const { registerTcpRunner } = require('@vigil/runner-tcp');
const { registerKnexStorage } = require('@vigil/storage-knex');

module.exports = defineConfig({
  vigil: (options) =>
    createVigil({ secretKey: process.env.VIGIL_SECRET_KEY, ...options }, (container) => {
      registerKnexStorage(container, { client: 'sqlite3', connection: join(__dirname, 'vigil.sqlite') });
      registerTcpRunner(container);
    }),
  account: process.env.VIGIL_ACCOUNT_ID,
  project: 'packed-cjs',
  constructs: [
    new TcpCheck('service-port', {
      name: 'cjs host: service port (as code)',
      request: { hostname: '127.0.0.1', port: Number(process.env.SERVICE_PORT) },
      frequency: 1440,
    }),
  ],
});
