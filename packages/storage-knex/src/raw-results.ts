import type { Knex } from 'knex';
import { FLAG, LAYOUTS, NO_PHASE, unpackSlot } from './compact/layout.js';
import { fullRows, narrowRows, type Scope } from './compact/union.js';
import type { TableContext } from './table.js';

/** A FINAL result as roll-ups and the aggregate over roll-ups read it. */
export interface RawResult {
  accountId: string;
  checkId: string;
  startedMs: number;
  runLocation: string;
  failed: boolean;
  /** responseTime, attempts and every numeric phase. */
  values: Record<string, number>;
}

export interface RawRange {
  /** Inclusive; null for no lower bound. */
  from: number | null;
  /** Exclusive. */
  to: number;
}

/**
 * The FINAL results of an account (or of every account: null) in any of `ranges`, optionally of
 * some checks only: full rows by when they started, narrow rows (scheduled runs) by when they were
 * due, which is the time they count at in roll-ups and retention. The one place roll-ups read results.
 */
export async function readRawResults(
  db: Knex | Knex.Transaction,
  ctx: TableContext,
  accountId: string | null,
  ranges: readonly RawRange[],
  checkIds?: readonly string[],
): Promise<RawResult[]> {
  const out: RawResult[] = [];
  for (const range of ranges) {
    const scope: Scope = { accountId, checkIds, from: range.from, to: range.to, finalOnly: true, time: 'due' };
    const full = fullRows(db as Knex, ctx, scope).select('account_id', 'check_id', 'started_ms', 'run_location', 'response_time', 'attempts', 'failed', 'phases');
    for (const r of (await full) as Record<string, unknown>[]) {
      const values: Record<string, number> = {};
      const phases = JSON.parse(String(r.phases ?? '{}')) as Record<string, unknown>;
      for (const [k, v] of Object.entries(phases)) if (typeof v === 'number' && Number.isFinite(v)) values[k] = v;
      values.responseTime = Number(r.response_time);
      values.attempts = Number(r.attempts);
      out.push({
        accountId: String(r.account_id),
        checkId: String(r.check_id),
        startedMs: Number(r.started_ms),
        runLocation: String(r.run_location),
        failed: r.failed === true || r.failed === 1,
        values,
      });
    }
    for (const layout of LAYOUTS) {
      const rows = (await narrowRows(db as Knex, ctx, layout, scope).select('k.account_id', 'k.check_id', 'l.name', 'n.*')) as Record<string, unknown>[];
      for (const r of rows) {
        const slot = unpackSlot(Number(r.slot));
        const n = (c: string) => Number(r[c]);
        const values: Record<string, number> = { responseTime: n('rt') / 100, attempts: slot.attempt, total: n('rt') / 100 };
        for (const p of layout.phases) if (!(p.optional && n(p.column) === NO_PHASE)) values[p.phase] = n(p.column) / 100;
        out.push({
          accountId: String(r.account_id),
          checkId: String(r.check_id),
          startedMs: slot.dueMs,
          runLocation: String(r.name),
          failed: (n('flags') & (FLAG.failures | FLAG.errors)) !== 0,
          values,
        });
      }
    }
  }
  return out;
}
