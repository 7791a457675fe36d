import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createVigil } from '@vigil/core';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knexStorage, type KnexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { PG_URL } from './support/fresh-store.js';

describe.runIf(PG_URL)('PostgreSQL shared by several processes', () => {
  const schema = `vigil_claims_${randomBytes(4).toString('hex')}`;
  let admin: Knex;
  const stores: KnexStorage[] = [];
  const open = (prefix: string) => {
    const knex = knexFactory({ client: 'pg', connection: PG_URL, searchPath: [schema], pool: { min: 0, max: 5 } });
    const s = knexStorage({ knex, tablePrefix: prefix });
    stores.push(s);
    return s;
  };
  beforeAll(async () => {
    admin = knexFactory({ client: 'pg', connection: PG_URL });
    await admin.raw(`create schema ${schema}`);
  });
  afterAll(async () => {
    for (const s of stores) await s.knex.destroy();
    await admin.raw(`drop schema ${schema} cascade`);
    await admin.destroy();
  });

  it('two pools claiming 1,000 due jobs at the same time get each exactly once; an expired lease is claimed again', async () => {
    const a = open('claims_');
    const b = open('claims_');
    // Both migrate at once: the advisory lock makes the second wait, then find nothing to do.
    await Promise.all([a.migrate(), b.migrate()]);
    const due = new Date('2026-05-01T12:00:00Z');
    for (let i = 0; i < 1000; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => a.schedule.upsert({
        kind: 'run', accountId: 'acc', checkId: `check-${String(i + j).padStart(4, '0')}`, location: 'eu-west-1', dueAt: due.toISOString(),
      })));
    }
    const now = new Date('2026-05-01T12:00:01Z');
    const claimLoop = async (store: KnexStorage, owner: string) => {
      const got: string[] = [];
      for (;;) {
        const jobs = await store.schedule.claimDue(now, {}, 25, 30_000, owner);
        if (jobs.length === 0) return got;
        got.push(...jobs.map((j) => j.checkId));
      }
    };
    const [fromA, fromB, fromA2, fromB2] = await Promise.all([claimLoop(a, 'a1'), claimLoop(b, 'b1'), claimLoop(a, 'a2'), claimLoop(b, 'b2')]);
    const all = [...fromA, ...fromB, ...fromA2, ...fromB2];
    expect(all).toHaveLength(1000);
    expect(new Set(all).size).toBe(1000);
    expect(fromB.length + fromB2.length).toBeGreaterThan(0);
    expect(fromA.length + fromA2.length).toBeGreaterThan(0);

    expect(await b.schedule.claimDue(new Date('2026-05-01T12:00:30Z'), {}, 2000, 30_000, 'late')).toHaveLength(0);
    const reclaimed = await b.schedule.claimDue(new Date('2026-05-01T12:00:31Z'), {}, 2000, 30_000, 'late');
    expect(reclaimed).toHaveLength(1000);
    expect(reclaimed.every((j) => j.reclaimed)).toBe(true);
    expect(new Set(reclaimed.map((j) => j.checkId)).size).toBe(1000);
  });

  it('a lost connection is a clear 503 naming the database, never its password', async () => {
    const down = knexStorage({ client: 'pg', connection: 'postgres://vigil:s3cret-pass@127.0.0.1:1/vigil', pool: { min: 0, max: 1, acquireTimeoutMillis: 2000 } as never });
    stores.push(down);
    const err = (await down.checks.get('acc', 'x').catch((e: unknown) => e)) as { code: string; statusCode: number; message: string };
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.statusCode).toBe(503);
    expect(err.message).toContain('127.0.0.1:1/vigil');
    expect(err.message).not.toContain('s3cret-pass');
  });

  it('secrets written through Vigil are not in the raw rows', async () => {
    const storage = open('secrets_');
    const vigil = createVigil({ storage, secretKey: randomBytes(32) });
    const account = await vigil.accounts.ensure();
    await vigil.checks.create(account.id, 'BROWSER', {
      name: 'login', script: 'x()', environmentVariables: [{ key: 'PASSWORD', value: 'plain-text-password-1', secret: true }],
    });
    await vigil.alertChannels.create(account.id, {
      type: 'PAGING_B', config: { name: 'ops', apiKey: 'plain-text-api-key-2', region: 'EU' },
    });
    for (const table of ['checks', 'alert_channels']) {
      const rows = JSON.stringify(await storage.raw.dump(table));
      expect(rows).not.toContain('plain-text-password-1');
      expect(rows).not.toContain('plain-text-api-key-2');
    }
    expect((await vigil.checks.getForRun(account.id, (await vigil.checks.list(account.id, {})).items[0]!.id)).environment.PASSWORD).toBe('plain-text-password-1');
  });
});
