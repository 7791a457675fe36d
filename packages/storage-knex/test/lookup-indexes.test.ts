// Lookups made before an account is known (an API key by its prefix, a dashboard by its custom
// domain) and a public form's limits (an address's and an account's pending subscriptions) go
// through an index of their own: each runs on requests anyone can send. Before migration
// 016_lookup_indexes all but the address's read the whole table (or the whole account).
import { afterEach, describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { freshStore, STORES } from './support/fresh-store.js';
import { captured, planOf, readsWholeTable } from './support/plans.js';

const ACCOUNT = '0a6c1f2e-3333-4a1b-8c1d-000000000001';
const ROWS = 2_000;
const HOUR_MS = 3_600_000;
const NOW = Date.parse('2026-05-01T12:00:00.000Z');

let storage: KnexStorage | null = null;
afterEach(async () => {
  await storage?.close();
  storage = null;
});

async function insertRows(s: KnexStorage, table: string, rows: Record<string, unknown>[]): Promise<void> {
  // 100 rows a statement stays under SQLite's limit of bound variables.
  for (let i = 0; i < rows.length; i += 100) await s.knex(`vigil_${table}`).insert(rows.slice(i, i + 100));
}

describe.each(STORES)('lookups before an account is known, on %s', (kind) => {
  it('find an API key by prefix, a dashboard by custom domain and the pending subscriptions through an index', async () => {
    // One SQLite connection, so the reads go through the knex whose statements are captured.
    const s = (storage = await freshStore(kind, 'vigil_lookups', { pool: { min: 1, max: 1 } }));
    await s.migrate();
    const n = Array.from({ length: ROWS }, (_, i) => i);
    const accountOf = (i: number) => (i % 2 ? ACCOUNT : `0a6c1f2e-3333-4a1b-8c1d-${String(i).padStart(12, '0')}`);
    await insertRows(s, 'api_keys', n.map((i) => ({ id: `key-${i}`, account_id: accountOf(i), data: '{}', prefix: `vk_${i}` })));
    await insertRows(s, 'dashboards', n.map((i) => ({ account_id: accountOf(i), data: '{}', custom_domain: `status-${i}.example.com` })));
    // The account's subscribers asked over a year, a few in the last hour.
    await insertRows(s, 'status_page_subscribers', n.map((i) => ({
      id: `sub-${i}`, account_id: ACCOUNT, data: '{}', status_page_id: 'page-1', page_email: `pe-${i}`, token_hash: `th-${i}`,
      email_hash: `eh-${i % 500}`, confirmed: false, sent_ms: NOW - (i < 5 ? i * 60_000 : i * 4 * HOUR_MS),
    })));
    if (kind === 'postgres') for (const t of ['api_keys', 'dashboards', 'status_page_subscribers']) await s.knex.raw(`ANALYZE vigil_${t}`);

    const since = new Date(NOW - HOUR_MS).toISOString();
    const keys = await captured(s, () => s.apiKeys.findByPrefix('vk_1234'));
    const dashboard = await captured(s, () => s.dashboards.findByCustomDomain('status-42.example.com'));
    const byAddress = await captured(s, () => s.statusPageSubscribers.countPendingByEmail('someone@example.com', since));
    const byAccount = await captured(s, () => s.statusPageSubscribers.countPendingByAccount(ACCOUNT, since));
    expect(keys.result.map((k) => k.id)).toEqual(['key-1234']);
    expect(dashboard.result?.id).toBe(43);
    expect(byAddress.result).toBe(0);
    expect(byAccount.result).toBe(5);
    const plans = await Promise.all([keys, dashboard, byAddress, byAccount].map(({ statements }) => planOf(kind, s, statements.at(-1)!)));
    for (const plan of plans) expect(readsWholeTable(kind, plan)).toBe(false);
    // The account's count looks up by its time too, not through every subscriber of the account.
    const byTime = kind === 'sqlite' ? /USING (COVERING )?INDEX \S+ \([^)]*sent_ms>/ : /"Index Cond":"[^"]*sent_ms/;
    expect(plans[3]).toMatch(byTime);
  });

  it('find an account\'s heartbeat pings before retention\'s cut-off by time, not through every ping of the account', async () => {
    const s = (storage = await freshStore(kind, 'vigil_lookups'));
    await s.migrate();
    // 20 checks pinged every ten minutes for a fortnight; the cut-off 13 days back, so that a
    // fourteenth of the pings are before it (an hourly run finds the hour that went by).
    const rows = Array.from({ length: 20 * 2_016 }, (_, i) => {
      const at = NOW - Math.floor(i / 20) * 600_000;
      return { account_id: ACCOUNT, check_id: `beat-${i % 20}`, at: new Date(at).toISOString(), at_ms: at, source: null };
    });
    await insertRows(s, 'heartbeat_pings', rows);
    if (kind === 'postgres') await s.knex.raw('ANALYZE vigil_heartbeat_pings');
    const { result, statements } = await captured(s, () => s.heartbeats.prunePings!(ACCOUNT, new Date(NOW - 13 * 24 * HOUR_MS), 100));
    expect(result).toBe(100);
    const plan = await planOf(kind, s, statements.at(-1)!);
    expect(readsWholeTable(kind, plan)).toBe(false);
    expect(plan).toMatch(kind === 'sqlite' ? /USING (COVERING )?INDEX \S+ \(account_id=\? AND at_ms<\?\)/ : /"Index Cond":"[^"]*at_ms </);
  });
});
