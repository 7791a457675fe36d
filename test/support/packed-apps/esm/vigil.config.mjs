// The ES-module host's checks as code, for `npx vigil plan` / `npx vigil apply`: the same store and
// secret key as app.mjs, with the options the command gives.
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@vigil/cli';
import { createVigil } from '@vigil/core';
import { TcpCheck } from '@vigil/core/constructs';
import { registerTcpRunner } from '@vigil/runner-tcp';
import { registerKnexStorage } from '@vigil/storage-knex';

export default defineConfig({
  vigil: (options) =>
    createVigil({ secretKey: process.env.VIGIL_SECRET_KEY, ...options }, (container) => {
      registerKnexStorage(container, { client: 'sqlite3', connection: fileURLToPath(new URL('./vigil.sqlite', import.meta.url)) });
      registerTcpRunner(container);
    }),
  account: process.env.VIGIL_ACCOUNT_ID,
  project: 'packed-esm',
  constructs: [
    new TcpCheck('service-port', {
      name: 'esm host: service port (as code)',
      request: { hostname: '127.0.0.1', port: Number(process.env.SERVICE_PORT) },
      frequency: 1440,
    }),
  ],
});
