import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';
import type { KnexStorage } from '../src/index.js';

const opened: KnexStorage[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const DUE = Date.parse('2026-05-01T12:00:00.000Z');

describe.each(STORES)('migration 009 on %s: schedule entries of an earlier version take their kinds', (kind) => {
  it('moves runs, alert ticks, certificate looks and retention, leases kept, and the engine claims them by kind', async () => {
    const storage = await freshStore(kind, 'vigil_mig');
    opened.push(storage);
    // The database as version 008 left it, with its entries under made-up locations.
    await migrate(storage.knex, 'vigil_', '008_delivery_attempts_at');
    expect(await storage.knex.schema.hasColumn('vigil_schedule', 'kind')).toBe(false);
    await storage.knex('vigil_schedule').insert([
      { account_id: 'acct', check_id: 'c1', location: 'us-east-1', private: false, due_ms: DUE, lease_owner: null, lease_until_ms: null },
      { account_id: 'acct', check_id: 'c1', location: 'lab-berlin', private: true, due_ms: DUE, lease_owner: 'old', lease_until_ms: DUE + 60_000 },
      { account_id: 'acct', check_id: 'c1', location: '@alert-tick', private: true, due_ms: DUE, lease_owner: null, lease_until_ms: null },
      { account_id: 'acct', check_id: 'c1', location: '@ssl', private: true, due_ms: DUE, lease_owner: null, lease_until_ms: null },
      { account_id: '@vigil', check_id: '@retention', location: '@retention', private: true, due_ms: DUE, lease_owner: null, lease_until_ms: null },
    ]);
    await storage.migrate();
    const at = new Date(DUE).toISOString();
    expect(await storage.schedule.list('acct', 'c1')).toEqual([
      { kind: 'alert-tick', accountId: 'acct', checkId: 'c1', location: '', dueAt: at },
      { kind: 'certificate', accountId: 'acct', checkId: 'c1', location: '', dueAt: at },
      { kind: 'run', accountId: 'acct', checkId: 'c1', location: 'lab-berlin', dueAt: at },
      { kind: 'run', accountId: 'acct', checkId: 'c1', location: 'us-east-1', dueAt: at },
    ]);
    expect(await storage.schedule.list('', '')).toEqual([{ kind: 'retention', accountId: '', checkId: '', location: '', dueAt: at }]);
    // A process serving no location takes the engine's jobs (earlier they counted as private
    // locations); the run leased to its holder stays leased until its lease runs out.
    const claimed = await storage.schedule.claimDue(new Date(DUE), { locations: [], privateLocations: [] }, 10, 1_000, 'new');
    expect(claimed.map((j) => j.kind).sort()).toEqual(['alert-tick', 'certificate', 'retention']);
    expect(await storage.schedule.claimDue(new Date(DUE), {}, 10, 1_000, 'new')).toMatchObject([{ kind: 'run', location: 'us-east-1' }]);
    const later = await storage.schedule.claimDue(new Date(DUE + 60_000), {}, 10, 1_000, 'new');
    expect(later.find((j) => j.location === 'lab-berlin')).toMatchObject({ kind: 'run', reclaimed: true });
    expect(await storage.knex.schema.hasTable('vigil_schedule_008')).toBe(false);
  });
});
