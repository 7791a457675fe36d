// The example host in the class style (`npm run start:class` once `npm run build` has compiled it
// to dist/): Vigil assembled as src/assemble.mjs does, then the host's own classes registered in
// the same container and built by it. A smaller app than src/server.mjs: its own routes, the
// Vigil API under /api, GET /monitoring, and its error handler.
import 'reflect-metadata'; // first: tsyringe needs the Reflect metadata API before any decorated class loads
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Router } from 'express';
import { injectable } from 'tsyringe';
import { consoleLogger } from '@vigil/core';
import { vigilRouter } from '@vigil/http-express-adapter';
// This path names src/assemble.mjs both from src/host-class/ and, compiled, from dist/host-class/.
import { assembleVigil, hostAccountId, hostSettings, persisted } from '../../src/assemble.mjs';
import { HostMonitoring, registerHostMonitoring } from './host-monitoring.js';

/**
 * The host's routes. Its parameter is a class, so no @inject is needed: the decorator metadata
 * (emitDecoratorMetadata) records the class itself, and the container builds it.
 */
@injectable()
class HostRoutes {
  constructor(private readonly monitoring: HostMonitoring) {}

  router(): Router {
    const router = express.Router();
    router.get('/', (_req, res) => {
      res.type('text').send('Example host (class style): its own routes, with the Vigil API under /api\n');
    });
    router.get('/orders', (_req, res) => {
      res.json([{ id: 1, item: 'coffee' }]);
    });
    router.use(this.monitoring.router());
    return router;
  }
}

const port = Number(process.env.PORT ?? 3000);
const settings = hostSettings();
const vigil = assembleVigil(settings, { logger: consoleLogger('info') });

const account = await vigil.accounts.ensure(hostAccountId(settings.stateDir));
const apiKey = persisted(settings.stateDir, 'VIGIL_API_KEY', 'api-key', () => `vgl_${randomBytes(32).toString('base64url')}`);
await vigil.apiKeys.ensure(account.id, apiKey.value, 'example host');
if (apiKey.made) {
  console.log(`Vigil account: ${account.id}`);
  console.log(`Vigil API key: ${apiKey.value}  (shown once; kept in the state directory)`);
}

// vigil.container holds Vigil's tokens (VIGIL, LOGGER, STORAGE, ...); the host's classes join them.
registerHostMonitoring(vigil.container, { accountId: account.id });
const monitoring = vigil.container.resolve(HostMonitoring);

const app = express();
app.use('/api', vigilRouter(vigil));
app.use(vigil.container.resolve(HostRoutes).router());
const hostErrors: ErrorRequestHandler = (err, _req, res, _next) => {
  console.error(err);
  res.status(500).json({ error: 'The host app could not handle this request' });
};
app.use(hostErrors);

await vigil.start();
const server = app.listen(port, () => {
  const { port: actual } = server.address() as AddressInfo;
  monitoring
    .ensure(`http://127.0.0.1:${actual}`)
    .catch((err: Error) => console.error('The host checks could not be applied:', err.message))
    .finally(() => console.log(`Example host (class style) listening on http://localhost:${actual}`));
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await vigil.stop(10_000); // running checks finish, leases go back
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await vigil.close();
    process.exit(0);
  });
}
