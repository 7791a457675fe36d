import type { CheckResult, CheckResultRepository } from '@vigil/core';
import { isPostgres } from './compact/layout.js';
import { makeAhead, sealClosedDays, withPartitions } from './compact/partitions.js';
import { deleteNarrowBefore } from './compact/prune.js';
import { getNarrow, listMerged } from './compact/read.js';
import { planCompact, singleInsert, writeCompact } from './compact/write.js';
import { dbCall } from './errors.js';
import { reclaimSqliteSpace } from './sqlite-space.js';
import { aggregateInPostgres, aggregateInSqlite } from './exact-aggregate.js';
import { dropDaysBefore, pruneAccount, rollUpAccount } from './retention.js';
import { aggregateWithRollups } from './rollup-aggregate.js';
import type { TableContext } from './table.js';

type Row = Record<string, unknown>;

const COLUMNS = new Set(['id', 'accountId', 'checkId', 'startedAt', 'runLocation', 'statusCode', 'responseTime', 'attempts', 'resultType', 'checkSessionId', 'phases']);

/**
 * Scheduled TCP and API runs are stored as narrow rows (see compact/layout.ts); every other
 * result as a full row, with real columns for what queries filter and aggregate by and the rest
 * as a JSON document. A batch goes in one transaction, unless it is one statement (full rows only,
 * or narrow rows of known checks with no detail kept).
 */
export function checkResultRepository(ctx: TableContext): CheckResultRepository {
  const table = `${ctx.prefix}check_results`;
  const toRow = (accountId: string, r: Omit<CheckResult, 'accountId'>): Row => {
    const rest: Row = {};
    for (const [k, v] of Object.entries(r)) if (!COLUMNS.has(k)) rest[k] = v;
    return {
      id: r.id,
      account_id: accountId,
      check_id: r.checkId,
      started_ms: Date.parse(r.startedAt),
      run_location: r.runLocation,
      status_code: r.statusCode,
      response_time: r.responseTime,
      failed: r.hasFailures || r.hasErrors,
      attempts: r.attempts,
      result_type: r.resultType,
      check_session_id: r.checkSessionId,
      phases: JSON.stringify(r.phases),
      data: JSON.stringify({ ...rest, startedAt: r.startedAt }),
    };
  };
  const fromRow = (row: Row): CheckResult => {
    const doc = JSON.parse(String(row.data)) as Row;
    return {
      ...doc,
      id: String(row.id),
      accountId: String(row.account_id),
      checkId: String(row.check_id),
      runLocation: String(row.run_location),
      statusCode: row.status_code === null ? null : Number(row.status_code),
      responseTime: Number(row.response_time),
      attempts: Number(row.attempts),
      resultType: row.result_type,
      checkSessionId: (row.check_session_id as string | null) ?? null,
      phases: JSON.parse(String(row.phases)),
    } as CheckResult;
  };
  const run = dbCall(ctx.database);
  const pg = isPostgres(ctx.knex);
  const repo: CheckResultRepository = {
    insertMany: (accountId, results) =>
      run(async () => {
        if (results.length === 0) return;
        const plan = planCompact(results);
        if (plan.narrow.length === 0 && results.length <= 500) {
          // Full rows only (a session's or a test's run), in one statement, which is atomic by
          // itself: no transaction around it, so two round trips fewer.
          await ctx.knex(table).insert(results.map((r) => toRow(accountId, r)));
          return;
        }
        const dueTimes = plan.narrow.map(({ n }) => n.dueMs);
        // Narrow rows only, their keys known and no detail kept: one statement, no transaction.
        const single = singleInsert(ctx, accountId, plan);
        if (single) {
          await withPartitions(ctx, dueTimes, single);
          return;
        }
        const written = await withPartitions(ctx, dueTimes, () => ctx.knex.transaction(async (trx) => {
          const compact = await writeCompact(trx, ctx, accountId, plan);
          const rows = compact.rest.map((r) => toRow(accountId, r));
          // Parameters per statement stay under SQLite's limit of 32766.
          for (let i = 0; i < rows.length; i += 500) await trx(table).insert(rows.slice(i, i + 500));
          return compact;
        }));
        written.committed();
      }),
    get: (accountId, id, checkId) =>
      run(async () => {
        const narrow = await getNarrow(ctx.reader, ctx, accountId, id, checkId);
        if (narrow) return narrow;
        const row = await ctx.reader(table).where({ account_id: accountId, id }).first();
        return row ? fromRow(row) : null;
      }),
    listByCheck: (accountId, checkId, query) => run(() => listMerged(ctx.reader, ctx, accountId, checkId, query, fromRow)),
    aggregate: (accountId, query) =>
      run(async () => {
        if (query.checkIds.length === 0) return [];
        const rolled = await aggregateWithRollups(ctx, accountId, query);
        if (rolled) return rolled;
        return pg ? aggregateInPostgres(ctx.reader, ctx, accountId, query) : aggregateInSqlite(ctx.reader, ctx, accountId, query);
      }),
    deleteOlderThan: (before) =>
      run(() => ctx.knex.transaction(async (trx) =>
        Number(await trx(table).where('started_ms', '<', before.getTime()).delete()) + (await deleteNarrowBefore(trx, ctx, null, before.getTime())))),
    prune: (accountId, before, limit) => run(() => pruneAccount(ctx, accountId, before, limit)),
    rollUp: (accountId, after, before, limit) => run(() => rollUpAccount(ctx, accountId, after, before, limit)),
    pruneRollups: (accountId, before) =>
      run(async () => {
        const deleted = Number(await ctx.knex(`${ctx.prefix}check_result_rollups`).where('account_id', accountId).where('hour_ms', '<', before.getTime()).delete());
        if (deleted > 0) await reclaimSqliteSpace(ctx.knex);
        return deleted;
      }),
  };
  // Whole days go at once where results live in day partitions (PostgreSQL).
  if (pg) {
    repo.dropBefore = (before) => run(() => dropDaysBefore(ctx, before));
    repo.maintain = (now) => run(async () => {
      await makeAhead(ctx, now.getTime());
      await sealClosedDays(ctx, now.getTime());
    });
  }
  return repo;
}
