import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { slotResultId, type CheckResult, type VigilStorage } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import { startExampleHost, type RunningHost } from './support/example-host.js';
import { freshDatabase, PG_URL, type FreshDatabase } from './support/postgres.js';

/** How long the clients keep at it: 60 s in CI; VIGIL_LOAD_SECONDS shortens it for a quick local try. */
const SECONDS = Number(process.env.VIGIL_LOAD_SECONDS ?? 60);
const CLIENTS = 200;
const CHECKS = 1_000;
/** Checks the clients rename (a write that must not disturb the schedule of the others). */
const WRITTEN = 50;
/** A slot due this long before the host stopped has had time to run, however busy the machine. */
const SLACK_MS = 20_000;

/** A check's final results as the store lists them (scheduled runs and full rows alike), page by page. */
async function finalResults(storage: VigilStorage, accountId: string, checkId: string): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (;;) {
    const page = await storage.checkResults.listByCheck(accountId, checkId, { limit: 1000, offset: out.length, resultType: 'FINAL' });
    out.push(...page.items);
    if (page.items.length === 0 || out.length >= page.total) return out;
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

describe.runIf(PG_URL)(`${CLIENTS} API clients for ${SECONDS} s against the example host on PostgreSQL while ${CHECKS} checks run`, () => {
  let db: FreshDatabase;
  let host: RunningHost;
  let target: Server;

  afterAll(async () => {
    host?.child.process.kill('SIGKILL');
    host?.cleanup();
    target?.close();
    await db?.drop();
  });

  it('answers every request without a 5xx, and every slot due before the stop has its result', async () => {
    db = await freshDatabase('load');
    // What the checks connect to: a port that accepts and closes.
    target = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as AddressInfo).port;
    host = await startExampleHost({ VIGIL_DB: db.url, VIGIL_API_RATE_LIMIT: 'off' });

    const ids: string[] = [];
    for (let start = 0; start < CHECKS + WRITTEN; start += 50) {
      const made = await Promise.all(Array.from({ length: Math.min(50, CHECKS + WRITTEN - start) }, (_, i) =>
        host.api('POST', '/v1/checks/tcp', { name: `load ${start + i}`, request: { hostname: '127.0.0.1', port }, frequency: 1, tags: ['load'] })));
      for (const m of made) {
        expect(m.status).toBe(201);
        ids.push(m.body.id);
      }
    }
    const written = ids.splice(CHECKS);
    // Each check's first slot, as the schedule holds it once made.
    const first = ((await db.raw('vigil_schedule').select('check_id', 'location', 'due_ms')) as { check_id: string; location: string; due_ms: string | number }[])
      .filter((slot) => ids.includes(slot.check_id));
    expect(first.length).toBe(CHECKS);

    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    const until = Date.now() + SECONDS * 1000;
    const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
    const pickWritten = () => written[Math.floor(Math.random() * written.length)]!;
    const operations: (() => [string, string, unknown?])[] = [
      () => ['GET', `/v1/checks/${pick()}`],
      () => ['GET', `/v1/checks?limit=100&page=${1 + Math.floor(Math.random() * 10)}`],
      () => ['GET', `/v1/check-statuses/${pick()}`],
      () => ['GET', '/v1/check-statuses'],
      () => ['GET', `/v1/check-results/${pick()}?limit=10`],
      () => ['GET', `/v1/analytics/tcp-checks/${pick()}?quickRange=last24Hours&metrics=total_p95,availability`],
      () => ['PUT', `/v1/checks/tcp/${pickWritten()}`, { name: `load renamed ${Math.random().toString(36).slice(2, 8)}`, request: { hostname: '127.0.0.1', port }, frequency: 1 }],
      () => ['GET', `/v1/checks/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`],
    ];
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const [method, path, body] = operations[Math.floor(Math.random() * operations.length)]!();
        try {
          const answer = await host.api(method, path, body, 30_000);
          latencies.push(answer.ms);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status >= 500) failures.push(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
        } catch (err) {
          failures.push(`${method} ${path}: ${(err as Error).message}`);
        }
      }
    }));

    const stoppedAt = Date.now();
    host.child.process.kill('SIGTERM');
    const { code } = await host.child.exited();
    expect(code).toBe(0);

    latencies.sort((a, b) => a - b);
    const total = latencies.length;
    const notOk = [...statuses].filter(([s]) => s >= 400 && s !== 404).reduce((n, [, c]) => n + c, 0);
    console.log(`api-load: ${total} requests in ${SECONDS} s (${(total / SECONDS).toFixed(0)}/s) from ${CLIENTS} clients; `
      + `statuses ${JSON.stringify(Object.fromEntries(statuses))}; errors (non-2xx other than the planned 404s) ${((notOk / Math.max(1, total)) * 100).toFixed(2)}%; `
      + `latency p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies[total - 1]} ms`);
    expect(failures.slice(0, 5)).toEqual([]);
    expect(notOk).toBe(0);
    expect(total).toBeGreaterThan(CLIENTS);

    // No lost result: every slot from each check's first up to the slack before the stop ran once.
    const accountId = /Vigil account: (\S+)/.exec(host.child.output)![1]!;
    const storage = knexStorage({ client: 'pg', connection: db.url, migrate: false });
    const stored = new Set<string>();
    let listed = 0;
    try {
      const every = [...ids, ...written];
      for (let i = 0; i < every.length; i += 20) {
        for (const results of await Promise.all(every.slice(i, i + 20).map((id) => finalResults(storage, accountId, id)))) {
          listed += results.length;
          for (const r of results) stored.add(r.id);
        }
      }
    } finally {
      await storage.close();
    }
    const cutoff = stoppedAt - SLACK_MS;
    const missing: string[] = [];
    let expected = 0;
    for (const slot of first) {
      for (let due = Number(slot.due_ms); due <= cutoff; due += 60_000) {
        expected++;
        if (!stored.has(slotResultId(slot.check_id, slot.location, new Date(due), 1))) missing.push(`${slot.check_id}@${new Date(due).toISOString()}`);
      }
    }
    console.log(`api-load: ${expected} slots due before ${new Date(cutoff).toISOString()}, ${missing.length} without a result; ${stored.size} results stored`);
    expect(missing.slice(0, 5)).toEqual([]);
    expect(listed).toBe(stored.size);
    expect(expected).toBeGreaterThan(CHECKS / 2);
  }, (SECONDS + 240) * 1000);
});
