import type { Knex } from 'knex';

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
 * The FINAL results of an account (or of every account: null) with from <= startedAt < to in
 * any of `ranges`, optionally of some checks only. The one place roll-ups read the results table.
 */
export async function readRawResults(
  db: Knex | Knex.Transaction,
  table: string,
  accountId: string | null,
  ranges: readonly RawRange[],
  checkIds?: readonly string[],
): Promise<RawResult[]> {
  const out: RawResult[] = [];
  for (const range of ranges) {
    const q = db(table)
      .select('account_id', 'check_id', 'started_ms', 'run_location', 'response_time', 'attempts', 'failed', 'phases')
      .where('result_type', 'FINAL')
      .where('started_ms', '<', range.to);
    if (range.from !== null) q.where('started_ms', '>=', range.from);
    if (accountId !== null) q.where('account_id', accountId);
    if (checkIds) q.whereIn('check_id', [...checkIds]);
    for (const r of (await q) as Record<string, unknown>[]) {
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
  }
  return out;
}
