// The class style of the example host (src/host-class): the host's own class, built by the same
// container that holds Vigil's tokens, and the compiled host running under plain Node.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger, Vigil } from '@vigil/core';
import { assembleVigil, hostAccountId } from '../src/assemble.mjs';
import { HOST_MONITORING_OPTIONS, HostMonitoring, registerHostMonitoring } from '../src/host-class/host-monitoring.js';

const built = fileURLToPath(new URL('../dist/host-class/server.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vigil-host-class-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A logger that keeps its lines, to see that the class received the one Vigil was given. */
function keptLogger(lines: string[]): Logger {
  const write = (msg: string) => void lines.push(msg);
  const logger: Logger = { error: write, warn: write, info: write, debug: () => undefined, child: () => logger };
  return logger;
}

function listen(app: express.Express): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** Runs one check now and waits for its session to end. */
async function runNow(vigil: Vigil, accountId: string, checkId: string): Promise<string> {
  const { sessions } = await vigil.checkSessions.trigger(accountId, { target: { checkId: [checkId] } });
  const { done, session } = await vigil.checkSessions.completion(accountId, sessions[0]!.checkSessionId, { maxWaitSeconds: '30' });
  expect(done).toBe(true);
  return session.status;
}

describe('example express host, class style', () => {
  it('builds the host class from the container Vigil uses, with Vigil, its logger and the host options injected', async () => {
    const lines: string[] = [];
    // Assembled as the host does (src/assemble.mjs), on a SQLite file of its own.
    const stateDir = join(dir, 'in-process');
    const vigil = assembleVigil({ db: join(dir, 'in-process.sqlite'), postgres: false, stateDir }, { logger: keptLogger(lines) });
    const server = { current: undefined as Server | undefined };
    try {
      // The host's own account, whose checks may reach the host itself (VIGIL_TARGET_POLICY=open).
      const account = await vigil.accounts.ensure(hostAccountId(stateDir));
      registerHostMonitoring(vigil.container, { accountId: account.id });
      const monitoring = vigil.container.resolve(HostMonitoring);
      expect(monitoring).toBeInstanceOf(HostMonitoring);
      expect(vigil.container.resolve(HostMonitoring)).toBe(monitoring); // one per container
      expect(vigil.container.resolve(HOST_MONITORING_OPTIONS)).toEqual({ accountId: account.id });

      // The host's app: its own /orders (which can be made to fail) and the class's route.
      let ordersUp = true;
      const app = express();
      app.get('/orders', (_req, res) => void res.status(ordersUp ? 200 : 500).json([{ id: 1, item: 'coffee' }]));
      app.use(monitoring.router());
      server.current = await listen(app);
      const origin = `http://127.0.0.1:${(server.current.address() as AddressInfo).port}`;
      const report = async () => {
        const res = await fetch(`${origin}/monitoring`);
        return { status: res.status, body: (await res.json()) as { status: string; checks: { logicalId: string; checkId: string; state: string }[] } };
      };

      expect(await report()).toEqual({ status: 503, body: { status: 'starting', checks: [] } });

      // At start-up the class makes the host's checks in Vigil; a second start changes nothing.
      const first = await monitoring.ensure(origin);
      expect(first.summary).toMatchObject({ create: 2, update: 0, unchanged: 0 });
      const { items } = await vigil.checks.list(account.id, {});
      expect(items.map((c) => [c.checkType, c.name]).sort()).toEqual([
        ['API', 'Example host (class style): GET /orders'],
        ['TCP', 'Example host (class style): HTTP port'],
      ]);
      expect((await monitoring.ensure(origin)).summary).toMatchObject({ create: 0, update: 0, unchanged: 2 });
      expect(lines).toContain('host monitoring: checks in step');

      const { body } = await report();
      expect(body.checks.map((c) => [c.logicalId, c.state])).toEqual([['http-port', 'no runs yet'], ['orders-api', 'no runs yet']]);

      // Vigil runs them; the route reports what they found.
      await vigil.start();
      const id = (logicalId: string) => body.checks.find((c) => c.logicalId === logicalId)!.checkId;
      expect(await runNow(vigil, account.id, id('http-port'))).toBe('PASSED');
      expect(await runNow(vigil, account.id, id('orders-api'))).toBe('PASSED');
      const passing = await report();
      expect(passing.status).toBe(200);
      expect(passing.body.status).toBe('ok');
      expect(passing.body.checks.map((c) => c.state)).toEqual(['passing', 'passing']);

      ordersUp = false;
      expect(await runNow(vigil, account.id, id('orders-api'))).toBe('FAILED');
      const failing = await report();
      expect(failing.status).toBe(503);
      expect(failing.body.status).toBe('failing');
      expect(failing.body.checks.map((c) => [c.logicalId, c.state])).toEqual([['http-port', 'passing'], ['orders-api', 'failing']]);
    } finally {
      await new Promise((resolve) => (server.current ? server.current.close(resolve) : resolve(undefined)));
      await vigil.close();
    }
  });

  it('runs compiled by tsc (npm run build) under plain Node: decorators, metadata and reflect-metadata in order', async () => {
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build -w examples/express-host\` first`);
    const child = spawn(process.execPath, [built], {
      cwd: dir,
      env: { PATH: process.env.PATH, PORT: '0', VIGIL_STATE_DIR: join(dir, 'built'), VIGIL_DB: join(dir, 'built.sqlite') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const m = /listening on (http:\/\/localhost:\d+)/.exec(output);
          if (m) resolve(m[1]!.replace('localhost', '127.0.0.1'));
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        void exited.then((code) => reject(new Error(`the host exited with ${code}: ${output}`)));
      });
      expect(await (await fetch(`${base}/orders`)).json()).toEqual([{ id: 1, item: 'coffee' }]);

      // HostRoutes got HostMonitoring by its class type alone (emitDecoratorMetadata), which made the checks.
      const monitoring = await fetch(`${base}/monitoring`);
      expect(monitoring.status).toBe(200);
      const body = (await monitoring.json()) as { checks: { logicalId: string; state: string }[] };
      expect(body.checks.map((c) => c.logicalId)).toEqual(['http-port', 'orders-api']);

      // The Vigil API answers under /api with the account and key it printed.
      const account = /Vigil account: (\S+)/.exec(output)![1]!;
      const key = /Vigil API key: (\S+)/.exec(output)![1]!;
      const checks = await fetch(`${base}/api/v1/checks`, { headers: { authorization: `Bearer ${key}`, 'x-service-account': account } });
      expect(checks.status).toBe(200);
      expect(((await checks.json()) as { name: string }[]).map((c) => c.name).sort()).toEqual([
        'Example host (class style): GET /orders',
        'Example host (class style): HTTP port',
      ]);

    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
