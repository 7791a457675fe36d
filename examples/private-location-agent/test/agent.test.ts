import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import knexFactory from 'knex';
import { createVigil } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import { startDnsServer } from '../../../packages/runner-dns/test/support/dns-server.js';

const agent = fileURLToPath(new URL('../src/agent.mjs', import.meta.url));
const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');
const dir = mkdtempSync(join(tmpdir(), 'vigil-agent-'));
const prefix = `agent_${randomBytes(3).toString('hex')}_`;
const secretKey = randomBytes(32).toString('hex');

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (PG_URL) {
    const knex = knexFactory({ client: 'pg', connection: PG_URL });
    const rows = (await knex.raw('select tablename from pg_tables where tablename like ?', [`${prefix}%`])).rows as { tablename: string }[];
    for (const { tablename } of rows) await knex.schema.dropTableIfExists(tablename);
    await knex.destroy();
  }
});

async function until<T>(fn: () => Promise<T | undefined | null | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('private-location agent', () => {
  it('runs only the checks of its private location against the shared database, with probes, and stops on SIGTERM', async () => {
    // The host: the same database, the API side only.
    const db = PG_URL ?? join(dir, 'shared.sqlite');
    const storage = PG_URL
      ? knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: prefix })
      : knexStorage({ client: 'sqlite3', connection: db, tablePrefix: prefix });
    const host = createVigil({ storage, secretKey });
    const account = await host.accounts.ensure();
    const echo = createServer((socket) => socket.on('data', (d) => socket.end(d)));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const port = (echo.address() as AddressInfo).port;
    const inside = await host.checks.create(account.id, 'TCP', {
      name: 'basement printer', request: { hostname: '127.0.0.1', port, data: 'ping' },
      frequency: 0, frequencyOffset: 10, privateLocations: ['office-basement'],
    });
    const intranet = { hits: 0, port: 0, server: createHttpServer((_req, res) => { intranet.hits++; res.end('ok'); }) };
    await new Promise<void>((r) => intranet.server.listen(0, '127.0.0.1', r));
    intranet.port = (intranet.server.address() as AddressInfo).port;
    const dns = await startDnsServer({ zone: { 'printer.office.test': [{ type: 'A', data: '10.0.0.7' }] } });
    const lookup = await host.checks.create(account.id, 'DNS', {
      name: 'printer name', request: { query: 'printer.office.test', nameServer: '127.0.0.1', port: dns.port },
      frequency: 0, frequencyOffset: 10, privateLocations: ['office-basement'],
    });
    const ping = await host.checks.create(account.id, 'ICMP', {
      name: 'basement switch', request: { hostname: '127.0.0.1', pingCount: 2 }, frequency: 0, frequencyOffset: 10, privateLocations: ['office-basement'],
    });
    const flow = await host.checks.create(account.id, 'MULTI_STEP', {
      name: 'intranet flow', frequency: 1, privateLocations: ['office-basement'],
      environmentVariables: [{ key: 'INTRANET', value: `http://127.0.0.1:${intranet.port}` }],
      script: "await step('Home', async () => { expect((await request.get(process.env.INTRANET + '/')).status()).toBe(200); });",
    });
    const suite = await host.checks.create(account.id, 'PLAYWRIGHT', {
      name: 'intranet suite', frequency: 1, privateLocations: ['office-basement'],
      environmentVariables: [{ key: 'INTRANET', value: `http://127.0.0.1:${intranet.port}` }],
      files: { 'tests/home.spec.ts': "import { expect, test } from '@playwright/test';\ntest('home', async ({ page }) => {\n  await page.goto(process.env.INTRANET + '/');\n  await expect(page.locator('body')).toHaveText('ok');\n});\n" },
    });
    const outside = await host.checks.create(account.id, 'TCP', {
      name: 'public site', request: { hostname: '127.0.0.1', port }, frequency: 0, frequencyOffset: 10, locations: ['us-east-1'],
    });

    const probePort = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, [agent], {
      env: {
        PATH: process.env.PATH, PRIVATE_LOCATION: 'office-basement', VIGIL_DB: db, VIGIL_SECRET_KEY: secretKey,
        AGENT_HEALTH_PORT: String(probePort), LOG_LEVEL: 'warn', VIGIL_TABLE_PREFIX: prefix,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    try {
      await until(async () => output.includes('running'), 20_000).catch(() => {
        throw new Error(`agent did not start: ${output}`);
      });
      expect((await fetch(`http://127.0.0.1:${probePort}/-/readiness`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${probePort}/-/liveness`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${probePort}/health`)).status).toBe(200);
      const results = await until(async () => {
        const page = await host.checkResults.list(account.id, inside.id, {});
        return page.total > 0 ? page.items : null;
      }, 25_000);
      expect(results[0]).toMatchObject({ runLocation: 'office-basement', hasFailures: false, runSource: 'SCHEDULER' });
      const looked = await until(async () => {
        const page = await host.checkResults.list(account.id, lookup.id, {});
        return page.total > 0 ? page.items : null;
      }, 25_000);
      expect(looked[0]).toMatchObject({ checkType: 'DNS', runLocation: 'office-basement', hasFailures: false });
      expect(dns.received).toContain('UDP A printer.office.test');
      const pinged = await until(async () => {
        const page = await host.checkResults.list(account.id, ping.id, {});
        return page.total > 0 ? page.items : null;
      }, 25_000);
      // A multi-step check runs every minute at the soonest: a session runs it now, at its private location.
      await host.checkSessions.trigger(account.id, { target: { checkId: [flow.id, suite.id] } });
      const flowed = await until(async () => {
        const page = await host.checkResults.list(account.id, flow.id, {});
        return page.total > 0 ? page.items : null;
      }, 25_000);
      expect(flowed[0]).toMatchObject({ checkType: 'MULTI_STEP', runLocation: 'office-basement', hasFailures: false });
      expect(intranet.hits).toBeGreaterThan(0);
      const suiteRuns = await until(async () => {
        const page = await host.checkResults.list(account.id, suite.id, {});
        return page.total > 0 ? page.items : null;
      }, 40_000);
      expect(suiteRuns[0]).toMatchObject({ checkType: 'PLAYWRIGHT', runLocation: 'office-basement', hasFailures: false });
      expect(pinged[0]).toMatchObject({ checkType: 'ICMP', runLocation: 'office-basement', hasFailures: false, phases: { packetLoss: 0 } });
      expect((await host.checkResults.list(account.id, outside.id, {})).total).toBe(0);
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      echo.close();
      intranet.server.close();
      await dns.close();
      await host.close();
    }
  }, 120_000);
});
