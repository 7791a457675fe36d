import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { PG_URL } from './support/fresh-store.js';

describe.runIf(PG_URL)('outbox claim on PostgreSQL', () => {
  const schema = `vigil_outbox_claim_${randomBytes(4).toString('hex')}`;
  let admin: Knex;
  beforeAll(async () => {
    admin = knexFactory({ client: 'pg', connection: PG_URL });
    await admin.raw(`create schema ${schema}`);
  });
  afterAll(async () => {
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  });

  it('leases no more than its limit whatever plan the server picks (a nested loop over the picked heads included)', async () => {
    // The planner is kept to nested loops without materializing: the plan where a subquery of the
    // claim would run again for each row of the outbox.
    const knex = knexFactory({
      client: 'pg', connection: PG_URL, searchPath: [schema],
      pool: {
        min: 1, max: 1,
        afterCreate: (conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) => {
          conn.query('set enable_hashjoin = off; set enable_hashagg = off; set enable_mergejoin = off; set enable_material = off; set enable_sort = off', (err) => done(err, conn));
        },
      },
    });
    const storage = knexStorage({ knex });
    try {
      await storage.migrate();
      const at = new Date('2026-01-01T00:00:00Z');
      await storage.outbox.enqueue(Array.from({ length: 10 }, (_, i) => ({
        id: `m${i}`, accountId: 'a', checkId: `c${i}`, alertChannelId: 1, alertType: 'ALERT_FAILURE',
        payload: {}, created_at: new Date(at.getTime() + i).toISOString(), nextAttemptAt: at.toISOString(),
      })));
      const now = new Date(at.getTime() + 60_000);
      expect((await storage.outbox.claim(now, 1, 60_000, 'me')).map((m) => m.id)).toEqual(['m0']);
      expect((await storage.outbox.claim(now, 3, 60_000, 'me')).map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
      const leased = await knex('vigil_outbox').whereNotNull('lease_owner').orderBy('id').pluck('id');
      expect(leased).toEqual(['m0', 'm1', 'm2', 'm3']);
    } finally {
      await knex.destroy();
    }
  });
});
