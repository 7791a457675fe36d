import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createVigil, slotIdDueAt, slotResultId } from '@vigil/core';
import { knexStorage } from '../src/index.js';

const PG_URL = process.env.VIGIL_PG_URL;
if (!PG_URL && process.env.VIGIL_REQUIRE_PG) throw new Error('VIGIL_REQUIRE_PG is set but VIGIL_PG_URL is not');
const CHECKS = 1_000;
const LEASE_MS = 4_000;
const PERIOD_MS = 10_000;
const script = fileURLToPath(new URL('./support/engine-process.mjs', import.meta.url));

describe.runIf(PG_URL)('two engine processes on one PostgreSQL database', () => {
  const prefix = `mp_${randomBytes(3).toString('hex')}_`;
  const secretKey = randomBytes(32).toString('hex');
  const storage = knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: prefix });
  const children: ChildProcess[] = [];

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    const rows = (await storage.knex.raw('select tablename from pg_tables where tablename like ?', [`${prefix}%`])).rows as { tablename: string }[];
    for (const { tablename } of rows) await storage.knex.schema.dropTableIfExists(tablename);
    await storage.close();
  });

  function engine(owner: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, [script], {
      env: { PATH: process.env.PATH, VIGIL_PG_URL: PG_URL, TABLE_PREFIX: prefix, VIGIL_SECRET_KEY: secretKey, OWNER: owner, LEASE_MS: String(LEASE_MS) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
      child.once('exit', (code) => reject(new Error(`engine ${owner} exited with ${code}`)));
    });
  }

  it(`run ${CHECKS} checks every 10 s for a minute, each slot once, and lose no slot when one is killed with SIGKILL`, async () => {
    const host = createVigil({ storage, secretKey });
    const account = await host.accounts.ensure();
    // The engines are up before the checks exist, so that no slot is overdue when they start: a
    // late slot still runs, but the slots that fall while it is late are not made up, and this
    // test is about slots lost to a crash, not about a backlog.
    const [a, b] = await Promise.all([engine('engine-a'), engine('engine-b')]);
    const readyAt = Date.now();
    const ids: string[] = [];
    const firstDue = new Map<string, number>();
    for (let i = 0; i < CHECKS; i++) {
      const check = await host.checks.create(account.id, 'TCP', {
        name: `c${i}`, request: { hostname: '127.0.0.1', port: 1 }, frequency: 0, frequencyOffset: 10,
      }, { autoAssignAlerts: false });
      ids.push(check.id);
      const run = (await storage.schedule.list(account.id, check.id)).find((e) => e.kind === 'run')!;
      firstDue.set(check.id, Date.parse(run.dueAt));
    }
    let killedAt = Infinity;

    // Read back through the store: a scheduled run is a narrow row whose id is recomputed.
    async function readBack(cutoff: number) {
      const stored = new Map<string, string>();
      let storedCount = 0;
      for (const id of ids) {
        const page = await storage.checkResults.listByCheck(account.id, id, { limit: 1000, offset: 0 });
        storedCount += page.total;
        for (const r of page.items) if (r.resultType === 'FINAL') stored.set(r.id, r.startedAt);
      }
      let expected = 0;
      const missing: string[] = [];
      // How late each slot started after the kill (start minus due), to tell a late survivor from a lost slot.
      const lateAfterKill: number[] = [];
      for (const id of ids) {
        for (let due = firstDue.get(id)!; due <= cutoff; due += PERIOD_MS) {
          expected++;
          const startedAt = stored.get(slotResultId(id, 'us-east-1', new Date(due), 1));
          if (startedAt === undefined) missing.push(`${id}@${new Date(due).toISOString()}`);
          else if (due >= killedAt) lateAfterKill.push(Date.parse(startedAt) - due);
        }
      }
      return { storedCount, expected, missing, lateAfterKill };
    }

    /** What a failure says of the first missing slots: their check's schedule rows and the runs it has stored. */
    async function whyMissing(missing: string[], lateAfterKill: number[]): Promise<string> {
      const iso = (ms: unknown) => (ms === null ? null : new Date(Number(ms)).toISOString());
      const sorted = [...lateAfterKill].sort((x, y) => x - y);
      const lines = [`engines up at ${iso(readyAt)}, killed engine-a at ${iso(killedAt)}; ${missing.length} slots missing; lateness after the kill p99 ${sorted[Math.floor(sorted.length * 0.99)] ?? '-'} ms, max ${sorted.at(-1) ?? '-'} ms`];
      for (const slot of missing.slice(0, 5)) {
        const checkId = slot.slice(0, slot.indexOf('@'));
        const rows = await storage.knex(`${prefix}schedule`).where({ check_id: checkId }).select('kind', 'due_ms', 'lease_owner', 'lease_until_ms');
        const page = await storage.checkResults.listByCheck(account.id, checkId, { limit: 1000, offset: 0 });
        const runs = page.items.filter((r) => r.resultType === 'FINAL').sort((x, y) => x.startedAt.localeCompare(y.startedAt));
        const slots = runs.map((r) => `${slotIdDueAt(r.id)?.toISOString() ?? r.id} started ${r.startedAt}`);
        lines.push(`${slot} (first slot ${iso(firstDue.get(checkId))}): schedule ${JSON.stringify(rows.map((r) => ({ kind: r.kind, due: iso(r.due_ms), owner: r.lease_owner, leaseUntil: iso(r.lease_until_ms) })))}; runs (slot started at) ${slots.join(', ')}`);
      }
      return lines.join('\n');
    }

    await new Promise((r) => setTimeout(r, 30_000));
    a!.kill('SIGKILL');
    killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 30_000));
    // Every slot from a check's first up to a period and a lease before now must run: its result is
    // stored once. The survivor is given up to a minute to catch up before it is stopped, since on a
    // 2-core machine running other test files at once it may be seconds behind (a lost slot never
    // arrives, however long it is given). Later slots may still be queued when SIGTERM stops it.
    const cutoff = Date.now() - PERIOD_MS - LEASE_MS;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      if ((await readBack(cutoff)).missing.length === 0) break;
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const exited = new Promise((r) => b!.once('exit', r));
    b!.kill('SIGTERM');
    expect(await exited).toBe(0);

    const { storedCount, expected, missing, lateAfterKill } = await readBack(cutoff);
    expect(missing.slice(0, 5), missing.length > 0 ? await whyMissing(missing, lateAfterKill) : undefined).toEqual([]);
    expect(expected).toBeGreaterThan(CHECKS * 4);
    expect(storedCount).toBeGreaterThanOrEqual(expected);
  }, 240_000);
});
