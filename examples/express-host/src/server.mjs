// An ordinary Express app with routes of its own that embeds Vigil in its process, storing in
// SQLite (a file) by default or PostgreSQL when VIGIL_DB is a postgres:// URL.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import express from 'express';
import { consoleLogger, directoryArtifacts } from '@vigil/core';
import { metricsHandler, prometheusMetrics, vigilAdminRouter, vigilPages, vigilRouter } from '@vigil/http-express-adapter';
import { vigilConsole } from '@vigil/console';
import { assembleVigil, hostAccountId, hostSettings, persisted } from './assemble.mjs';
import { hasBearerToken, requireBearerToken } from './metrics-token.mjs';

const port = Number(process.env.PORT ?? 3000);
const settings = hostSettings();
const { stateDir } = settings;
// The store, runners and alert channels, as src/assemble.mjs wires them (the `vigil` command uses
// the same, through vigil.config.mjs).
const vigil = assembleVigil(settings, { logger: consoleLogger('info'), metrics: prometheusMetrics() });

// The account and its API key: from VIGIL_ACCOUNT_ID / VIGIL_API_KEY when set, otherwise made
// on the first start, printed once, and kept in the state directory for the next start.
const account = await vigil.accounts.ensure(hostAccountId(stateDir));
const apiKey = persisted(stateDir, 'VIGIL_API_KEY', 'api-key', () => `vgl_${randomBytes(32).toString('base64url')}`);
await vigil.apiKeys.ensure(account.id, apiKey.value, 'example host');
if (apiKey.made) {
  console.log(`Vigil account: ${account.id}`);
  console.log(`Vigil API key: ${apiKey.value}  (shown once; kept in ${join(stateDir, 'api-key')})`);
}

const app = express();

// Probes for a balancer or an orchestrator, as the private-location agent serves them: liveness
// says the process answers; readiness says it should get traffic (the database answers within
// 2 s and no shutdown has begun).
let stopping = false;
app.get(['/-/liveness', '/health'], (_req, res) => {
  res.set('cache-control', 'no-store').json({ status: 'ok' });
});
app.get('/-/readiness', async (_req, res) => {
  res.set('cache-control', 'no-store');
  if (stopping) return res.status(503).json({ status: 'shutting down' });
  let timer;
  const tooSlow = new Promise((resolve) => (timer = setTimeout(resolve, 2_000, false)));
  const ok = await Promise.race([vigil.storage.accounts.get(account.id).then(() => true, () => false), tooSlow]);
  clearTimeout(timer);
  res.status(ok && !stopping ? 200 : 503).json({ status: stopping ? 'shutting down' : ok ? 'ready' : 'database unreachable' });
});

// Vigil's API: its own body parser, rate limit and error handler apply only under /api.
// VIGIL_API_RATE_LIMIT sets the requests per minute each API key may make (default 600; `off`
// turns every limit of the router off), VIGIL_API_MAX_IN_FLIGHT the requests each key may have
// under way at once (default 4, the rest wait in line; `off`).
const rateLimit = process.env.VIGIL_API_RATE_LIMIT;
const maxInFlight = process.env.VIGIL_API_MAX_IN_FLIGHT;
app.use('/api', vigilRouter(vigil, {
  ...(rateLimit ? { rateLimit: rateLimit === 'off' ? false : { limit: Number(rateLimit) } } : {}),
  ...(maxInFlight ? { maxInFlight: maxInFlight === 'off' ? false : Number(maxInFlight) } : {}),
}));
// Prometheus metrics of Vigil (runs, scheduler, outbox, API) and of the process; keep it for the
// scraper. With VIGIL_METRICS_TOKEN set it answers only `Authorization: Bearer <that token>`.
app.get('/metrics', requireBearerToken(process.env.VIGIL_METRICS_TOKEN), metricsHandler(vigil));
// Accounts and API keys for tenants, only when VIGIL_ADMIN_TOKEN is set, and only for requests
// with `Authorization: Bearer <that token>`. A tenant's account may reach public addresses only.
if (process.env.VIGIL_ADMIN_TOKEN) {
  app.use('/admin/vigil', vigilAdminRouter(vigil, { authorize: (req) => hasBearerToken(req, process.env.VIGIL_ADMIN_TOKEN) }));
}
// Dashboards (/d/{customUrl}), status pages (/s/{id or url}) and badges (/badges/...) as web pages.
app.use(vigilPages(vigil));
// The console: sign in with the account id and API key printed on the first start. A host with
// its own sign-in passes `auth: (req) => accountIdOf(req.session)` instead. It shows browser
// checks' screenshots from where the runners keep them.
app.use('/console', vigilConsole(vigil, { artifacts: directoryArtifacts(join(stateDir, 'artifacts')) }));

// The host's own routes, parser and error handler.
app.use(express.json({ limit: '100kb' }));
app.get('/', (_req, res) => {
  res.type('text').send('Example host: its own routes, with the Vigil API under /api and its console under /console\n');
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

const server = app.listen(port, async (err) => {
  if (err) {
    // Express 5 hands the listen error to this callback: a port in use is the usual one.
    console.error(err.code === 'EADDRINUSE' ? `Port ${port} is in use: stop what listens there, or set PORT` : `The host cannot listen on port ${port}: ${err.message}`);
    await vigil.close().catch(() => {});
    process.exit(1);
  }
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

/** Stops accepting connections and waits for the requests under way (idle keep-alive ones close at once). */
function closeServer(graceMs) {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

const stopDeadlineMs = Number(process.env.STOP_DEADLINE_MS ?? 10_000);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    // Readiness answers 503 from now on while the API still answers, so a balancer moves traffic
    // away without errors. No slot is claimed any more; running checks finish (up to the
    // deadline, then they are aborted) and the leases go back, so another process takes over at
    // once. Then the HTTP server closes, then the store.
    console.log(`${signal}: stopping; running checks get up to ${stopDeadlineMs} ms`);
    try {
      await vigil.stop(stopDeadlineMs);
      await closeServer(2_000);
      await vigil.close();
    } catch (err) {
      console.error('Vigil did not stop cleanly:', err.message);
      process.exit(1);
    }
    console.log('Stopped');
    process.exit(0);
  });
}
