import type { ResultAggregateRow, Vigil } from '@vigil/core';

const HOUR_MS = 3_600_000;
/** How long the closed hours of an account's day are kept before they are read again (late results show within it). */
const KEEP_MS = 60_000;
/** Hourly rows kept over every account at once (about 100 bytes each); the oldest read goes first. */
const MAX_ROWS = 200_000;

interface Kept {
  from: number;
  until: number;
  readAt: number;
  rows: ResultAggregateRow[];
}

/**
 * The last 24 hours' hourly figures of an account's checks, for a page that lists every check and
 * refreshes every few seconds: the hours that have ended are read once a minute and kept, the
 * hour under way on every call. Over a day of 1,000 checks' runs the whole read takes the
 * database 100 ms and more; the hour under way, a twenty-fourth of it.
 */
export class PastHours {
  private readonly kept = new Map<string, Kept>();
  private rowsKept = 0;

  private forget(accountId: string): void {
    const k = this.kept.get(accountId);
    if (!k) return;
    this.rowsKept -= k.rows.length;
    this.kept.delete(accountId);
  }

  constructor(private readonly vigil: Vigil) {}

  async rows(accountId: string, checkIds: string[], from: Date, to: Date): Promise<ResultAggregateRow[]> {
    if (checkIds.length === 0) return [];
    const now = this.vigil.deps.clock.now().getTime();
    const current = Math.floor(now / HOUR_MS) * HOUR_MS;
    const read = (a: number, b: number) => this.vigil.storage.checkResults.aggregate(accountId, {
      checkIds,
      from: new Date(a),
      to: new Date(b),
      bucketMs: HOUR_MS,
      // The mean, not a percentile: over a day of every check's runs, means cost the database half what medians do.
      measures: [{ name: 'avg', field: 'responseTime', fn: 'avg' }],
    });
    // What is a minute old is of no use to anyone: it goes, whoever it was kept for.
    for (const [id, k] of this.kept) if (now - k.readAt >= KEEP_MS) this.forget(id);
    let past = this.kept.get(accountId);
    if (!past || past.from !== from.getTime() || past.until !== current) {
      this.forget(accountId);
      past = { from: from.getTime(), until: current, readAt: now, rows: await read(from.getTime(), current) };
      this.kept.set(accountId, past);
      this.rowsKept += past.rows.length;
      while (this.rowsKept > MAX_ROWS && this.kept.size > 1) this.forget(this.kept.keys().next().value!);
    }
    const wanted = new Set(checkIds);
    const hour = await read(current, to.getTime());
    return [...past.rows.filter((r) => wanted.has(r.checkId)), ...hour];
  }
}
