import { describe, expect, it } from 'vitest';
import { knexStorage } from '@vigil/storage-knex';
import { startExampleHost, type Answer } from './support/example-host.js';
import { freshDatabase, PG_URL } from './support/postgres.js';
import { cleanupsAfterEach, sleep, until } from './support/processes.js';
import { echoTcpServer, slowTcpServer } from './support/servers.js';
import { tcpProxy } from './support/tcp-proxy.js';

const OUTAGE_MS = 30_000;
/** The longest an API call may take while the database is away: an answer, not a hang. */
const ANSWER_WITHIN_MS = 5_000;
const CHECKS = 5;

const cleanups = cleanupsAfterEach();

describe.runIf(PG_URL)('PostgreSQL unreachable for 30 s under a running host', () => {
  it('the API answers 503 in the error shape, the engine keeps going and resumes, nothing stored is lost', async () => {
    const db = await freshDatabase('outage');
    cleanups.push(() => db.drop());
    const pg = new URL(PG_URL!);
    const proxy = await tcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    cleanups.push(() => proxy.close());
    const echo = await echoTcpServer();
    cleanups.push(() => echo.close());
    // One check is slow, so that a run is under way when the database goes.
    const slow = await slowTcpServer(3_000);
    cleanups.push(() => slow.close());
    const host = await startExampleHost({ VIGIL_DB: db.via('127.0.0.1', proxy.port) });
    cleanups.push(() => host.cleanup());

    const ids: string[] = [];
    for (let i = 0; i < CHECKS; i++) {
      const port = i === 0 ? slow.port : echo.port;
      const created = await host.api('POST', '/v1/checks/tcp', {
        name: `service ${i}`, request: { hostname: '127.0.0.1', port, data: 'ping' }, frequency: 0, frequencyOffset: 10,
        degradedResponseTime: 5_000, maxResponseTime: 5_000,
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    // Results as the store lists them (scheduled runs are narrow rows, others full rows), read past
    // the proxy, so that the outage cuts the host off only.
    const accountId = /Vigil account: (\S+)/.exec(host.child.output)![1]!;
    const storage = knexStorage({ client: 'pg', connection: db.url, migrate: false });
    cleanups.push(() => storage.close());
    const results = async () => {
      const all: { id: string; checkId: string; startedAt: string }[] = [];
      for (const checkId of ids) {
        for (let offset = 0; ;) {
          const page = await storage.checkResults.listByCheck(accountId, checkId, { limit: 1000, offset });
          all.push(...page.items);
          offset += page.items.length;
          if (page.items.length === 0 || offset >= page.total) break;
        }
      }
      return all;
    };
    await until(async () => new Set((await results()).map((r) => r.checkId)).size === CHECKS, 30_000, 'a result of every check');

    // The database goes away while the slow check runs.
    await slow.nextConnection();
    const before = await results();
    await proxy.cut();
    const cutAt = Date.now();
    const during: { checks: Answer; write: Answer; readiness: Answer; liveness: Answer }[] = [];
    while (Date.now() - cutAt < OUTAGE_MS) {
      const [checks, write, readiness, liveness] = await Promise.all([
        host.api('GET', '/v1/checks', undefined, ANSWER_WITHIN_MS),
        host.api('POST', '/v1/checks/tcp', { name: 'during the outage', request: { hostname: '127.0.0.1', port: echo.port } }, ANSWER_WITHIN_MS),
        host.get('/-/readiness', ANSWER_WITHIN_MS),
        host.get('/-/liveness', ANSWER_WITHIN_MS),
      ]);
      during.push({ checks, write, readiness, liveness });
      expect(host.child.exitCode).toBeUndefined();
      await sleep(2_000);
    }
    await proxy.restore();
    const restoredAt = Date.now();

    expect(during.length).toBeGreaterThanOrEqual(10);
    for (const { checks, write, readiness, liveness } of during) {
      for (const answer of [checks, write]) {
        expect(answer.status).toBe(503);
        expect(answer.body).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.any(String) });
        expect(answer.body.message).not.toMatch(/select|insert|password|postgres:\/\//i);
        expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS);
      }
      expect(readiness.status).toBe(503);
      expect(liveness.status).toBe(200);
    }

    // Back: the API answers, readiness is 200, and every check runs and is stored again, the one
    // whose run the outage interrupted included.
    await until(async () => (await host.api('GET', '/v1/checks')).status === 200, 10_000, 'the API to answer again');
    expect((await host.get('/-/readiness')).status).toBe(200);
    let waiting = ids;
    await until(async () => {
      const after = new Set((await results()).filter((r) => Date.parse(r.startedAt) > restoredAt).map((r) => r.checkId));
      waiting = ids.filter((id) => !after.has(id));
      return waiting.length === 0;
    }, 30_000, () => `a result stored after the restore of every check; none yet of check(s) ${waiting.map((id) => ids.indexOf(id)).join(', ')}`);
    const list = await host.api('GET', '/v1/checks?limit=100');
    expect(list.body.map((c: { id: string }) => c.id).sort()).toEqual([...ids].sort());

    // Nothing stored before the outage was lost, and the process never went down.
    const kept = new Set((await results()).map((r) => r.id));
    expect(before.filter((r) => !kept.has(r.id))).toEqual([]);
    expect(host.child.exitCode).toBeUndefined();
    expect(host.child.output).not.toMatch(/unhandled|uncaught/i);
    const exited = host.child.exited();
    host.child.process.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  }, 150_000);
});
