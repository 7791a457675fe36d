import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createVigil, slotResultId, type CheckResult } from '@vigil/core';
import { webhookTransport } from '@vigil/alert-channels';
import { knexStorage } from '@vigil/storage-knex';
import { freshDatabase, PG_URL } from './support/postgres.js';
import { type Child, cleanupsAfterEach, sleep, startNode, until } from './support/processes.js';
import { webhookReceiver, type WebhookCall } from './support/servers.js';

const CHECKS = 150;
const PERIOD_MS = 10_000;
const LEASE_MS = 4_000;
/** How long after a run's end its slot may still be moved on (the rest of its pipeline, on a busy machine). */
const SLACK_MS = 5_000;
/** Slots are counted from this long after the start (the first round makes up the slots missed before it). */
const WARM_UP_MS = 15_000;
const ENGINE = fileURLToPath(new URL('./support/engine-process.mjs', import.meta.url));

const cleanups = cleanupsAfterEach();

interface OutboxRow {
  id: string;
  check_id: string;
  delivered_ms: string | null;
  data: string;
}

describe.runIf(PG_URL)('kill -9 of one of two engine processes under load', () => {
  it('every slot runs once, every alert is queued once and delivered, none twice', async () => {
    const db = await freshDatabase('crash');
    cleanups.push(() => db.drop());
    const receiver = await webhookReceiver();
    cleanups.push(() => receiver.close());
    const secretKey = randomBytes(32).toString('hex');
    // The test's own Vigil on the same database: it makes the checks, and at the end delivers what
    // the outbox still holds, as any process would.
    const storage = knexStorage({ client: 'pg', connection: db.url });
    const host = createVigil({ storage, secretKey, transports: [webhookTransport()], alerts: { leaseMs: LEASE_MS, enabled: false } });
    cleanups.push(() => host.close());
    const account = await host.accounts.ensure();
    await host.alertChannels.create(account.id, { type: 'WEBHOOK', config: { name: 'ops', url: receiver.url } });
    const ids: string[] = [];
    for (let i = 0; i < CHECKS; i++) {
      const check = await host.checks.create(account.id, 'TCP', { name: `c${i}`, request: { hostname: '127.0.0.1', port: 1 }, frequency: 0, frequencyOffset: 10 });
      expect(check.alertChannelSubscriptions).toHaveLength(1);
      ids.push(check.id);
    }
    const firstDue = new Map<string, number>();
    for (const id of ids) firstDue.set(id, Date.parse((await storage.schedule.list(account.id, id)).find((e) => e.location === 'us-east-1')!.dueAt));

    const engine = async (owner: string, env: Record<string, string> = {}): Promise<Child> => {
      const child = startNode(ENGINE, { VIGIL_DB: db.url, VIGIL_SECRET_KEY: secretKey, OWNER: owner, LEASE_MS: String(LEASE_MS), PERIOD_MS: String(PERIOD_MS), ...env });
      await child.waitFor(/ready/);
      return child;
    };
    const [a, b] = await Promise.all([engine('engine-a', { REPORT_RUNS: '1' }), engine('engine-b')]);
    const startedAt = Date.now();
    await sleep(20_000);
    // Killed just after one of its runs handed its outcome back: while that run is being stored and
    // its alert queued, and others are under way.
    const runsOfA = () => (a.output.match(/^ran /gm) ?? []).length;
    const ran = runsOfA();
    await until(async () => runsOfA() > ran, 10_000, 'a run of engine a', 1);
    await sleep(10);
    a.process.kill('SIGKILL');
    expect((await a.exited()).signal).toBe('SIGKILL');
    // What the dead process wrote to the receiver was in this process's socket buffers before its
    // exit was reported here, so the receiver (in this process) has logged it within two turns of
    // the event loop (one accepts a new connection, the next reads it).
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    const allInAt = Date.now();
    await sleep(25_000);
    const stoppedAt = Date.now();
    const exited = b.exited();
    b.process.kill('SIGTERM');
    expect((await exited).code).toBe(0);

    // What the outbox still holds goes out now (the dead process's claims once their lease ran out).
    const deadline = Date.now() + 20_000;
    while ((await storage.outbox.depth!()) > 0 && Date.now() < deadline) {
      if ((await host.alerts.drain()) === 0) await sleep(500);
    }

    // Slots: each check's are stored once each, and none is missing. A slot counts as missing when
    // it fell due after the warm-up, a period and a lease before the end, and after the check's
    // previous run had finished (a slot that falls due while an earlier run is still under way, on
    // a machine too busy to keep time, is made up by that run, not run on its own). Nothing is
    // stored for a time that is not one of the check's slots. The runs are read as the store lists
    // them (scheduled runs and full rows alike, newest first), each check's oldest first.
    const results: (CheckResult & { failed: boolean })[] = [];
    for (const id of ids) {
      const mine: CheckResult[] = [];
      for (;;) {
        const page = await storage.checkResults.listByCheck(account.id, id, { limit: 1000, offset: mine.length, resultType: 'FINAL' });
        mine.push(...page.items);
        if (page.items.length === 0 || mine.length >= page.total) break;
      }
      results.push(...mine.reverse().map((r) => ({ ...r, failed: r.hasFailures || r.hasErrors })));
    }
    const cutoff = stoppedAt - PERIOD_MS - LEASE_MS;
    const missing: string[] = [];
    const offGrid: string[] = [];
    const twice: string[] = [];
    for (const id of ids) {
      const mine = results.filter((r) => r.checkId === id);
      const slotAt = new Map<string, number>();
      for (let due = firstDue.get(id)!; due <= stoppedAt + PERIOD_MS; due += PERIOD_MS) slotAt.set(slotResultId(id, 'us-east-1', new Date(due), 1), due);
      offGrid.push(...mine.filter((r) => !slotAt.has(r.id)).map((r) => r.id));
      const stored = new Set(mine.map((r) => r.id));
      if (stored.size !== mine.length) twice.push(...mine.filter((r, i) => mine.findIndex((o) => o.id === r.id) !== i).map((r) => r.id));
      const finished = mine.map((r) => Date.parse(r.stoppedAt));
      for (const [slot, due] of slotAt) {
        const before = finished.filter((f) => f < due);
        if (stored.has(slot) || due < startedAt + WARM_UP_MS || due > cutoff || before.length === 0) continue;
        const previous = Math.max(...before);
        if (due > previous + SLACK_MS) missing.push(`${id}@${new Date(due).toISOString()} (its previous run ended at ${new Date(previous).toISOString()})`);
      }
    }
    expect(missing).toEqual([]);
    expect(offGrid).toEqual([]);
    expect(twice).toEqual([]);
    expect(results.length).toBeGreaterThan(CHECKS * 3);

    // Alerts: each run turns its check's state over, so each stored result raises exactly one
    // alert (failing from passing, recovery from failing) and has exactly one outbox row.
    const expected = new Map<string, string>();
    const byCheck = new Map<string, string[]>();
    for (const id of ids) {
      let failing = false;
      for (const r of results.filter((x) => x.checkId === id)) {
        if (r.failed !== failing) {
          expected.set(r.id, r.failed ? 'ALERT_FAILURE' : 'ALERT_RECOVERY');
          byCheck.set(id, [...(byCheck.get(id) ?? []), r.id]);
        }
        failing = r.failed;
      }
    }
    const rows = (await db.raw('vigil_outbox').orderBy('seq')) as OutboxRow[];
    const queued = new Map<string, string[]>();
    for (const row of rows) {
      const p = JSON.parse(row.data) as { alertType: string; payload: { checkResultId: string } };
      queued.set(p.payload.checkResultId, [...(queued.get(p.payload.checkResultId) ?? []), p.alertType]);
    }
    const lost = [...expected].filter(([resultId]) => !queued.has(resultId)).map(([resultId, type]) => `${type} of ${resultId}`);
    const queuedTwice = [...queued].filter(([, types]) => types.length > 1);
    const unexpected = [...queued].filter(([resultId, types]) => types[0] !== expected.get(resultId));
    expect({ lost: lost.length, queuedTwice, unexpected }).toEqual({ lost: 0, queuedTwice: [], unexpected: [] });
    expect(rows.filter((r) => r.delivered_ms === null)).toEqual([]);

    // Delivery: every outbox row reached the receiver. One that reached it twice can only be one the
    // killed process had sent without recording it yet (delivery is at least once; the
    // x-vigil-alert-id header lets a receiver drop the repeat): its first call was logged by then.
    const received = new Map<string, WebhookCall[]>();
    for (const call of receiver.delivered) received.set(call.alertId, [...(received.get(call.alertId) ?? []), call]);
    expect(rows.filter((r) => !received.has(r.id)).map((r) => r.id)).toEqual([]);
    expect([...received.keys()].filter((id) => !rows.some((r) => r.id === id))).toEqual([]);
    const repeats = [...received.values()].filter((calls) => calls.length > 1);
    expect(repeats.filter((calls) => calls.length > 2 || calls[0]!.at > allInAt)).toEqual([]);
    console.log(`crash test: ${results.length} runs stored, ${rows.length} alerts delivered, ${repeats.length} sent again after the kill`);

    // And each check's alerts arrived in the order of its runs.
    for (const id of ids) {
      const arrived = receiver.delivered.filter((c) => c.checkId === id && received.get(c.alertId)![0] === c).map((c) => c.checkResultId);
      expect(arrived).toEqual(byCheck.get(id) ?? []);
    }
  }, 180_000);
});
