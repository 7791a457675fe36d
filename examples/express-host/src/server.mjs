// An ordinary Express app with routes of its own that embeds Vigil in its process, storing in
// SQLite (a file) by default or PostgreSQL when VIGIL_DB is a postgres:// URL.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import express from 'express';
import { consoleLogger, createVigil, isVigilError } from '@vigil/core';
import { registerKnexStorage } from '@vigil/storage-knex';

const port = Number(process.env.PORT ?? 3000);
const db = process.env.VIGIL_DB ?? '.vigil/vigil.sqlite';

// The key that seals secrets at rest must outlive restarts: from the environment, or a file kept
// beside the database (never inside it).
function secretKey() {
  if (process.env.VIGIL_SECRET_KEY) return process.env.VIGIL_SECRET_KEY;
  const file = '.vigil/secret.key';
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

const postgres = /^postgres(ql)?:\/\//.test(db);
if (!postgres) mkdirSync(dirname(db), { recursive: true });
const vigil = createVigil({ secretKey: secretKey(), logger: consoleLogger('info') }, (container) => {
  registerKnexStorage(container, postgres ? { client: 'pg', connection: db } : { client: 'sqlite3', connection: db });
});

// The account: VIGIL_ACCOUNT_ID, else the one this database already has, else a new one.
const known = await vigil.storage.accounts.listIds();
const account = await vigil.accounts.ensure(process.env.VIGIL_ACCOUNT_ID ?? known[0]);
let apiKey = process.env.VIGIL_API_KEY;
if (apiKey) {
  await vigil.apiKeys.ensure(account.id, apiKey, 'example host (VIGIL_API_KEY)');
} else {
  apiKey = (await vigil.apiKeys.create(account.id, { name: 'example host' })).key;
  console.log(`Vigil account: ${account.id}\nVigil API key: ${apiKey}  (shown once; set VIGIL_API_KEY to keep using it)`);
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
