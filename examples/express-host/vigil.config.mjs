// The example host's own monitoring, kept as code beside it: `npx vigil plan`, then `npx vigil apply`
// (the command of @vigil/cli, which loads this file). PORT is the port the host listens on (3000
// unless set, as for `npm start`).
import { AlertChannel, ApiCheck, CheckGroup, Dashboard, TcpCheck } from '@vigil/core/constructs';
import { assembleVigil, hostAccountId, hostSettings } from './src/assemble.mjs';

const port = Number(process.env.PORT ?? 3000);

// Alerts go to a webhook when ALERT_WEBHOOK_URL is set; without one, the checks notify nobody.
const webhook = process.env.ALERT_WEBHOOK_URL
  ? new AlertChannel('team-webhook', { type: 'WEBHOOK', config: { name: 'Team webhook', url: process.env.ALERT_WEBHOOK_URL } })
  : null;

const host = new CheckGroup('example-host', {
  name: 'Example host',
  tags: ['example-host'],
  concurrency: 2,
  ...(webhook ? { alertChannels: [webhook] } : {}),
});

const settings = hostSettings();
// The host's own account (the one the server printed on its first start, or VIGIL_ACCOUNT_ID).
const account = hostAccountId(settings.stateDir);

export default {
  // The same Vigil as the server (store, secret key, runners), with the options the command gives:
  // its engine runs only the check sessions `vigil trigger` starts, and alerts wait for the server.
  // The account is made here when the store lacks it, as the server makes it on its first start.
  vigil: async (options) => {
    const vigil = assembleVigil(settings, options);
    await vigil.accounts.ensure(account);
    return vigil;
  },
  account,
  project: 'example-host',
  constructs: [
    host,
    new TcpCheck('http-port', {
      name: 'Example host: HTTP port',
      request: { hostname: '127.0.0.1', port },
      frequency: 1,
      tags: ['smoke'],
      group: host,
    }),
    new ApiCheck('orders-api', {
      name: 'Example host: GET /orders',
      request: {
        url: `http://127.0.0.1:${port}/orders`,
        assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }],
      },
      frequency: 5,
      tags: ['smoke', 'api'],
      group: host,
    }),
    new Dashboard('example-host-board', { header: 'Example host (from code)', tags: ['example-host'] }),
  ],
};
