import { ConflictError } from '../errors.js';
import type { CheckResult } from '../model/check-result.js';
import type { CheckResultRepository } from '../ports/storage.js';
import { aggregateResults } from '../rules/result-aggregates.js';
import { copy, type MemoryTable } from './memory-table.js';

const time = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;
const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;

/**
 * Where a pruning batch of about `limit` results ends, given the start times (sorted) of those
 * due: at the start of the hour of the first one past the limit, or after the first hour when
 * that hour alone holds more. Null when all of them fit.
 */
function batchEnd(sortedStarts: readonly number[], limit: number): number | null {
  if (sortedStarts.length <= limit) return null;
  const cut = floorHour(sortedStarts[Math.max(0, limit)]!);
  const first = floorHour(sortedStarts[0]!);
  return cut > first ? cut : first + HOUR;
}

export function checkResultRepository(table: MemoryTable<CheckResult>): CheckResultRepository {
  return {
    async insertMany(accountId, results) {
      // Check the whole batch first, so that a conflict stores none of it (one transaction).
      const ids = new Set<string>();
      for (const r of results) {
        if (table.has(r.id) || ids.has(r.id)) throw new ConflictError(`check_results: id ${r.id} already exists`);
        ids.add(r.id);
      }
      for (const r of results) table.insert(accountId, r);
    },
    async get(accountId, id) {
      return table.get(accountId, id);
    },
    async listByCheck(accountId, checkId, query) {
      const from = query.from?.getTime() ?? -Infinity;
      const to = query.to?.getTime() ?? Infinity;
      const rows = table
        .all()
        .map((r, index) => ({ r, index }))
        .filter(({ r }) => {
          if (r.accountId !== accountId || r.checkId !== checkId) return false;
          const at = time(r.startedAt);
          if (at < from || at >= to) return false;
          if (query.resultType && r.resultType !== query.resultType) return false;
          return query.checkSessionId === undefined || r.checkSessionId === query.checkSessionId;
        })
        .sort((a, b) => time(b.r.startedAt) - time(a.r.startedAt) || b.index - a.index)
        .map(({ r }) => r);
      return {
        items: rows.slice(query.offset, query.offset + query.limit).map(copy),
        total: rows.length,
        offset: query.offset,
      };
    },
    async aggregate(accountId, query) {
      return aggregateResults(
        table.all().filter((r) => r.accountId === accountId),
        query,
      );
    },
    async deleteOlderThan(before) {
      const limit = before.getTime();
      return table.removeWhere((r) => time(r.startedAt) < limit);
    },
    async prune(accountId, before, limit) {
      // The memory store keeps no roll-ups: retention only deletes.
      let upTo = floorHour(before.getTime());
      const old = table.all().filter((r) => r.accountId === accountId && time(r.startedAt) < upTo).map((r) => time(r.startedAt)).sort((a, b) => a - b);
      const cut = batchEnd(old, limit);
      const done = cut === null || cut >= upTo;
      if (!done) upTo = cut;
      const deleted = table.removeWhere((r) => r.accountId === accountId && time(r.startedAt) < upTo);
      return { deleted, rolledUp: 0, done };
    },
  };
}
