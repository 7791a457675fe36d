// An ordinary Express app with routes of its own that embeds Vigil in its process, storing in
// SQLite (a file) by default or PostgreSQL when VIGIL_DB is a postgres:// URL.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import express from 'express';
import { consoleLogger, createVigil } from '@vigil/core';
import { vigilPages, vigilRouter } from '@vigil/http-express-adapter';
import { registerAlertChannels } from '@vigil/alert-channels';
import { directoryArtifacts, registerBrowserRunner } from '@vigil/runner-browser';
import { registerHttpRunner } from '@vigil/runner-http';
import { registerTcpRunner } from '@vigil/runner-tcp';
import { registerKnexStorage } from '@vigil/storage-knex';

const port = Number(process.env.PORT ?? 3000);
const db = process.env.VIGIL_DB ?? '.vigil/vigil.sqlite';
const stateDir = resolve(process.env.VIGIL_STATE_DIR ?? '.vigil');

/** A value from the environment, else one kept in a file of the state directory (made once). */
function persisted(envName, file, make) {
  if (process.env[envName]) return { value: process.env[envName], made: false };
  const path = join(stateDir, file);
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), made: false };
  mkdirSync(stateDir, { recursive: true });
  const value = make();
  writeFileSync(path, value, { mode: 0o600 });
  return { value, made: true };
}

// The key that seals secrets at rest must outlive restarts and stays outside the database.
const secretKey = persisted('VIGIL_SECRET_KEY', 'secret.key', () => randomBytes(32).toString('hex')).value;

const postgres = /^postgres(ql)?:\/\//.test(db);
if (!postgres) mkdirSync(dirname(db), { recursive: true });
const vigil = createVigil({ secretKey, logger: consoleLogger('info') }, (container) => {
  registerKnexStorage(container, postgres ? { client: 'pg', connection: db } : { client: 'sqlite3', connection: db });
  registerTcpRunner(container);
  registerHttpRunner(container);
  // Browser checks run in Debian's Chromium (PUPPETEER_EXECUTABLE_PATH names another); their
  // screenshots are kept under the state directory.
  registerBrowserRunner(container, { artifacts: directoryArtifacts(join(stateDir, 'artifacts')) });
  // WEBHOOK, CHAT, CHAT_APP and paging channels need nothing more; EMAIL needs an SMTP server and
  // SMS/CALL a provider account, each only when its variables are set.
  registerAlertChannels(container, {
    email: process.env.SMTP_HOST
      ? {
          smtp: {
            host: process.env.SMTP_HOST,
            port: Number(process.env.SMTP_PORT ?? 587),
            secure: process.env.SMTP_SECURE === 'true',
            auth: process.env.SMTP_USER ? { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS ?? '' } : undefined,
          },
          from: process.env.SMTP_FROM ?? 'Vigil <alerts@localhost>',
        }
      : undefined,
    phone: process.env.PHONE_ACCOUNT_SID
      ? { accountSid: process.env.PHONE_ACCOUNT_SID, authToken: process.env.PHONE_AUTH_TOKEN ?? '', from: process.env.PHONE_FROM ?? '', baseUrl: process.env.PHONE_BASE_URL }
      : undefined,
  });
});

// The account and its API key: from VIGIL_ACCOUNT_ID / VIGIL_API_KEY when set, otherwise made
// on the first start, printed once, and kept in the state directory for the next start.
const account = await vigil.accounts.ensure(
  persisted('VIGIL_ACCOUNT_ID', 'account-id', () => (globalThis.crypto.randomUUID())).value,
);
const apiKey = persisted('VIGIL_API_KEY', 'api-key', () => `vgl_${randomBytes(32).toString('base64url')}`);
await vigil.apiKeys.ensure(account.id, apiKey.value, 'example host');
if (apiKey.made) {
  console.log(`Vigil account: ${account.id}`);
  console.log(`Vigil API key: ${apiKey.value}  (shown once; kept in ${join(stateDir, 'api-key')})`);
}

const app = express();

// Vigil's API: its own body parser, rate limit and error handler apply only under /api.
app.use('/api', vigilRouter(vigil));
// Dashboards (/d/{customUrl}), status pages (/s/{id or url}) and badges (/badges/...) as web pages.
app.use(vigilPages(vigil));

// The host's own routes, parser and error handler.
app.use(express.json({ limit: '100kb' }));
app.get('/', (_req, res) => {
  res.type('text').send('Example host: its own routes, with the Vigil API under /api\n');
});
app.get('/orders', (_req, res) => {
  res.json([{ id: 1, item: 'coffee' }]);
});
app.post('/orders', (req, res) => {
  res.status(201).json({ id: 2, ...req.body });
});
app.use((err, _req, res, _next) => {
  console.error(err);
  res.status(err.status ?? 500).json({ error: 'The host app could not handle this request' });
});

// The engine runs the checks in this process: on schedule, and when a session is triggered.
await vigil.start();

/**
 * The host's own monitoring, made on the first start (VIGIL_EXAMPLE_PAGES=false skips it): a TCP
 * check of its own HTTP port, a dashboard of every check of the account, and a status page whose
 * service the check opens an incident on when it fails (triggerIncident). Later starts only point
 * the check at the port the host listens on now.
 */
async function ownMonitoring(actualPort) {
  const idFile = join(stateDir, 'example-check-id');
  if (existsSync(idFile)) {
    const id = readFileSync(idFile, 'utf8').trim();
    await vigil.checks.update(account.id, id, { request: { hostname: '127.0.0.1', port: actualPort } }).catch(() => {});
    return;
  }
  const service = await vigil.services.create(account.id, { name: 'Example host' });
  const check = await vigil.checks.create(account.id, 'TCP', {
    name: 'example host: HTTP port',
    request: { hostname: '127.0.0.1', port: actualPort },
    frequency: 1,
    tags: ['example'],
    triggerIncident: { serviceId: service.id, name: 'Example host unreachable', description: '', notifySubscribers: false },
  });
  if (!(await vigil.dashboards.findPublic('example'))) {
    await vigil.dashboards.create(account.id, {
      header: 'Example host', description: 'Every check of this host, live', customUrl: 'example',
      expandChecks: true, showCheckRunLinks: true, enableIncidents: true,
    });
  }
  if (!(await vigil.publicPages.findStatusPage('example'))) {
    await vigil.statusPages.create(account.id, {
      name: 'Example host', url: 'example', description: 'Is the example host up?', cards: [{ name: 'Services', serviceIds: [service.id] }],
    });
  }
  writeFileSync(idFile, check.id);
}

const server = app.listen(port, async () => {
  const { port: actual } = server.address();
  if (process.env.VIGIL_EXAMPLE_PAGES !== 'false') {
    await ownMonitoring(actual).catch((err) => console.error('The example dashboard and status page could not be made:', err.message));
  }
  const key = process.env.VIGIL_API_KEY ? '$VIGIL_API_KEY' : `$(cat ${join(stateDir, 'api-key')})`;
  if (process.env.VIGIL_EXAMPLE_PAGES !== 'false') {
    console.log(`Dashboard: http://localhost:${actual}/d/example   Status page: http://localhost:${actual}/s/example`);
  }
  console.log(`Try: curl -H "Authorization: Bearer ${key}" -H "x-service-account: ${account.id}" http://localhost:${actual}/api/v1/checks`);
  console.log(`Example host listening on http://localhost:${actual}`);
});

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    // New requests are refused, running checks finish (up to 10 s), then the store closes.
    server.close();
    server.closeIdleConnections();
    vigil.stop(10_000).then(() => vigil.close()).then(() => process.exit(0));
  });
}
