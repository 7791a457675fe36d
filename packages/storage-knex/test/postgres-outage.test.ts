import { once } from 'node:events';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import knexFactory from 'knex';
import { knexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { PG_URL } from './support/fresh-store.js';

/** A TCP proxy to PostgreSQL that the test can cut and restore, as a network outage would. */
async function proxyTo(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const start = async () => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => { client.destroy(); upstream.destroy(); };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as net.AddressInfo).port;
  };
  const cut = async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    server = null;
  };
  await start();
  return { get port() { return port; }, cut, restore: start };
}

describe.runIf(PG_URL)('PostgreSQL outage', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('calls fail with a 503 while the database is away and work again once it is back', async () => {
    const target = new URL(PG_URL!);
    const proxy = await proxyTo(target);
    const url = new URL(PG_URL!);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const prefix = `outage_${Date.now()}_`;
    const storage = knexStorage({ client: 'pg', connection: url.toString(), tablePrefix: prefix, pool: { min: 0, max: 2, acquireTimeoutMillis: 3000 } as never });
    cleanups.push(async () => {
      await storage.close();
      await proxy.cut();
      const admin = knexFactory({ client: 'pg', connection: PG_URL });
      const rows = (await admin.raw('select tablename from pg_tables where tablename like ?', [`${prefix}%`])).rows as { tablename: string }[];
      for (const { tablename } of rows) await admin.schema.dropTableIfExists(tablename);
      await admin.destroy();
    });
    await storage.accounts.insert({ id: '6f1d2c3b-0000-4000-8000-000000000001', name: 'a', alertSettings: {} as never, created_at: new Date().toISOString(), updated_at: null });

    await proxy.cut();
    const err = (await storage.accounts.get('6f1d2c3b-0000-4000-8000-000000000001').catch((e: unknown) => e)) as { code?: string; statusCode?: number };
    expect(err.statusCode).toBe(503);
    expect(err.code).toBe('UNAVAILABLE');

    await proxy.restore();
    expect((await storage.accounts.get('6f1d2c3b-0000-4000-8000-000000000001'))?.name).toBe('a');
  }, 30_000);
});
