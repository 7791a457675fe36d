import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { knexStorage } from '@vigil/storage-knex';
import { startExampleHost } from './support/example-host.js';
import { freshDatabase, PG_URL, type FreshDatabase } from './support/postgres.js';
import { cleanupsAfterEach, startNode, until } from './support/processes.js';
import { slowTcpServer } from './support/servers.js';

/** How long the checked service holds each connection before it answers: the run in progress at SIGTERM. */
const HOLD_MS = 4_000;
const DEADLINE_MS = 10_000;
const AGENT = fileURLToPath(new URL('../../examples/private-location-agent/src/agent.mjs', import.meta.url));

const cleanups = cleanupsAfterEach();

/**
 * What the process left in the database: the check's final results (as the store lists them,
 * oldest first), with whether each failed, and the slots still leased.
 */
async function leftBehind(db: FreshDatabase, accountId: string, checkId: string) {
  const storage = knexStorage({ client: 'pg', connection: db.url, migrate: false });
  try {
    const { items, total } = await storage.checkResults.listByCheck(accountId, checkId, { limit: 1000, offset: 0, resultType: 'FINAL' });
    expect(items).toHaveLength(total);
    const results = items.reverse().map((r) => ({ ...r, failed: r.hasFailures || r.hasErrors }));
    const leased = await db.raw('vigil_schedule').whereNotNull('lease_owner').orWhereNotNull('lease_until_ms');
    const schedule = await db.raw('vigil_schedule').where({ check_id: checkId });
    return { results, leased, schedule };
  } finally {
    await storage.close();
  }
}

/** The account the example host made, as it printed it. */
const hostAccount = (output: string) => /Vigil account: (\S+)/.exec(output)![1]!;

describe.runIf(PG_URL)('graceful shutdown on SIGTERM', () => {
  it('the example host: readiness turns 503, the running check finishes and is stored, its lease goes back, exit 0', async () => {
    const db = await freshDatabase('shutdown_host');
    cleanups.push(() => db.drop());
    const target = await slowTcpServer(HOLD_MS);
    cleanups.push(() => target.close());
    const host = await startExampleHost({ VIGIL_DB: db.url, STOP_DEADLINE_MS: String(DEADLINE_MS) });
    cleanups.push(() => host.cleanup());

    expect((await host.get('/-/readiness')).body).toEqual({ status: 'ready' });
    expect((await host.get('/-/liveness')).status).toBe(200);
    const connected = target.nextConnection();
    const check = await host.api('POST', '/v1/checks/tcp', {
      name: 'slow service', request: { hostname: '127.0.0.1', port: target.port, data: 'ping' },
      frequency: 0, frequencyOffset: 10, degradedResponseTime: 5_000, maxResponseTime: 5_000,
    });
    expect(check.status).toBe(201);
    // The first scheduled run starts within one period (10 s); the service then holds it HOLD_MS.
    await connected;

    const exited = host.child.exited();
    host.child.process.kill('SIGTERM');
    const draining = await until(async () => {
      const r = await host.get('/-/readiness');
      return r.status === 503 ? r : null;
    }, 2_000, 'readiness 503', 50);
    expect(draining.body).toEqual({ status: 'shutting down' });
    // While it drains: the run still holds its connection, liveness stays 200, the API still answers.
    expect(target.open).toBe(1);
    expect((await host.get('/-/liveness')).status).toBe(200);
    expect((await host.api('GET', `/v1/checks/${check.body.id}`)).status).toBe(200);

    const { code, afterMs } = await exited;
    expect(host.child.output).toContain('Stopped');
    expect(code).toBe(0);
    // It waited for the run (about HOLD_MS), not for the deadline.
    expect(afterMs).toBeLessThan(DEADLINE_MS);

    const { results, leased, schedule } = await leftBehind(db, hostAccount(host.child.output), check.body.id);
    expect(results).toHaveLength(1);
    expect(results[0]!.failed).toBe(false);
    expect(results[0]!.responseTime).toBeGreaterThanOrEqual(HOLD_MS - 500);
    expect(leased).toEqual([]);
    // The slot was completed: the check's entry moved on to its next run.
    expect(Number(schedule[0].due_ms)).toBeGreaterThan(Date.parse(results[0]!.startedAt));
  }, 60_000);

  it('the example host: a run that outlasts the deadline is stopped at the deadline, its lease goes back, exit 0', async () => {
    const db = await freshDatabase('shutdown_deadline');
    cleanups.push(() => db.drop());
    const target = await slowTcpServer(60_000);
    cleanups.push(() => target.close());
    const host = await startExampleHost({ VIGIL_DB: db.url, STOP_DEADLINE_MS: '2000' });
    cleanups.push(() => host.cleanup());
    const connected = target.nextConnection();
    const check = await host.api('POST', '/v1/checks/tcp', {
      name: 'hanging service', request: { hostname: '127.0.0.1', port: target.port, data: 'ping' }, frequency: 0, frequencyOffset: 10,
    });
    expect(check.status).toBe(201);
    await connected;

    const exited = host.child.exited();
    const signalledAt = Date.now();
    host.child.process.kill('SIGTERM');
    const { code, afterMs } = await exited;
    expect(code).toBe(0);
    expect(afterMs).toBeGreaterThanOrEqual(1_900);
    expect(afterMs).toBeLessThan(6_000);
    // The stop, not the check, ended the run: nothing is stored for it, no alert is raised, and
    // its slot stays due with no lease, so the next process to start (or another one) runs it.
    const { leased, results, schedule } = await leftBehind(db, hostAccount(host.child.output), check.body.id);
    expect(leased).toEqual([]);
    expect(results).toEqual([]);
    expect(schedule.map((e: { location: string }) => e.location)).toEqual(['us-east-1']);
    expect(Number(schedule[0].due_ms)).toBeLessThan(signalledAt);
  }, 60_000);

  it('the private-location agent: readiness turns 503, the running check finishes and is stored, its lease goes back, exit 0', async () => {
    const db = await freshDatabase('shutdown_agent');
    cleanups.push(() => db.drop());
    const target = await slowTcpServer(HOLD_MS);
    cleanups.push(() => target.close());
    const secretKey = randomBytes(32).toString('hex');
    // The host's side of the shared database: it makes the check; the agent runs it.
    const vigil = createVigil({ storage: knexStorage({ client: 'pg', connection: db.url }), secretKey });
    cleanups.push(() => vigil.close());
    const account = await vigil.accounts.ensure();
    const connected = target.nextConnection();
    const check = await vigil.checks.create(account.id, 'TCP', {
      name: 'basement service', request: { hostname: '127.0.0.1', port: target.port, data: 'ping' },
      frequency: 0, frequencyOffset: 10, degradedResponseTime: 5_000, maxResponseTime: 5_000, privateLocations: ['office-basement'],
    });
    const agent = startNode(AGENT, {
      PRIVATE_LOCATION: 'office-basement', VIGIL_DB: db.url, VIGIL_SECRET_KEY: secretKey, AGENT_HEALTH_PORT: '0',
      STOP_DEADLINE_MS: String(DEADLINE_MS), LOG_LEVEL: 'warn',
    });
    const [, probePort] = await agent.waitFor(/probes on port (\d+)/);
    const probe = async (path: string) => (await fetch(`http://127.0.0.1:${probePort}${path}`)).status;
    expect(await probe('/-/readiness')).toBe(200);
    await connected;

    const exited = agent.exited();
    agent.process.kill('SIGTERM');
    await until(async () => (await probe('/-/readiness')) === 503, 2_000, 'readiness 503', 50);
    expect(target.open).toBe(1);
    expect(await probe('/-/liveness')).toBe(200);

    const { code, afterMs } = await exited;
    expect(code).toBe(0);
    expect(afterMs).toBeLessThan(DEADLINE_MS);
    const { results, leased } = await leftBehind(db, account.id, check.id);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ failed: false });
    expect(results[0]).toMatchObject({ runLocation: 'office-basement' });
    expect(leased).toEqual([]);
  }, 60_000);
});
