// An ordinary Express app with routes of its own that embeds Vigil in its process.
// Storage is in memory until a storage plugin is configured; the full public API router mounts here
// once the HTTP adapter package is installed.
import { randomBytes } from 'node:crypto';
import express from 'express';
import { consoleLogger, createVigil, isVigilError } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';

const port = Number(process.env.PORT ?? 3000);
const secretKey = process.env.VIGIL_SECRET_KEY ?? randomBytes(32).toString('hex');

const vigil = createVigil({ storage: memoryStorage(), secretKey, logger: consoleLogger('info') });

const account = await vigil.accounts.ensure(process.env.VIGIL_ACCOUNT_ID);
let apiKey = process.env.VIGIL_API_KEY;
if (!apiKey) {
  apiKey = (await vigil.apiKeys.create(account.id, { name: 'example host' })).key;
  console.log(`Vigil account: ${account.id}\nVigil API key: ${apiKey}  (shown once)`);
}

const app = express();
app.use(express.json({ limit: '1mb' }));

// The host's own route.
app.get('/', (_req, res) => {
  res.type('text').send('Example host: its own routes, with Vigil embedded under /vigil\n');
});

// A few of Vigil's services exposed by the host itself, authenticated as the public API is.
const vigilRoutes = express.Router();
vigilRoutes.use(async (req, _res, next) => {
  try {
    req.vigilAuth = await vigil.authenticator.authenticate({
      authorization: req.get('authorization'),
      account: req.get('x-service-account'),
    });
    next();
  } catch (err) {
    next(err);
  }
});
vigilRoutes.get('/checks', async (req, res, next) => {
  try {
    res.json((await vigil.checks.list(req.vigilAuth.accountId, req.query)).items);
  } catch (err) {
    next(err);
  }
});
vigilRoutes.post('/checks/tcp', async (req, res, next) => {
  try {
    res.status(201).json(await vigil.checks.create(req.vigilAuth.accountId, 'TCP', req.body));
  } catch (err) {
    next(err);
  }
});
vigilRoutes.get('/check-statuses', async (req, res, next) => {
  try {
    res.json(await vigil.checkStatuses.list(req.vigilAuth.accountId));
  } catch (err) {
    next(err);
  }
});
app.use('/vigil', vigilRoutes);

// The host's own error handler; Vigil's domain errors carry the spec's error body.
app.use((err, _req, res, _next) => {
  if (isVigilError(err)) return res.status(err.statusCode).json(err.toJSON());
  if (err?.type === 'entity.parse.failed') {
    return res.status(400).json({ statusCode: 400, error: 'Bad Request', message: 'Malformed JSON body' });
  }
  console.error(err);
  res.status(500).json({ statusCode: 500, error: 'Internal Server Error', message: 'Internal error' });
});

const server = app.listen(port, () => {
  console.log(`Example host listening on http://localhost:${port}`);
  console.log(`Try: curl -H "Authorization: Bearer ${apiKey}" -H "x-service-account: ${account.id}" http://localhost:${port}/vigil/checks`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => vigil.close().then(() => process.exit(0))));
}
