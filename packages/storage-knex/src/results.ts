import { aggregateResults, type CheckResult, type CheckResultRepository } from '@vigil/core';
import { mapDbError } from './errors.js';
import type { TableContext } from './table.js';

type Row = Record<string, unknown>;

const COLUMNS = new Set(['id', 'accountId', 'checkId', 'startedAt', 'runLocation', 'statusCode', 'responseTime', 'attempts', 'resultType', 'checkSessionId', 'phases']);

/**
 * Results are stored with real columns for what queries filter and aggregate by, and the rest as
 * a JSON document. Batches go in one transaction.
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
  const run = async <T>(fn: () => Promise<T>) => {
    try {
      return await fn();
    } catch (err) {
      throw mapDbError(err, ctx.database);
    }
  };
  return {
    insertMany: (accountId, results) =>
      run(async () => {
        if (results.length === 0) return;
        await ctx.knex.transaction(async (trx) => {
          const rows = results.map((r) => toRow(accountId, r));
          // Parameters per statement stay under SQLite's limit of 32766.
          for (let i = 0; i < rows.length; i += 500) await trx(table).insert(rows.slice(i, i + 500));
        });
      }),
    get: (accountId, id) =>
      run(async () => {
        const row = await ctx.knex(table).where({ account_id: accountId, id }).first();
        return row ? fromRow(row) : null;
      }),
    listByCheck: (accountId, checkId, query) =>
      run(async () => {
        const q = ctx.knex(table).where({ account_id: accountId, check_id: checkId });
        if (query.from) q.where('started_ms', '>=', query.from.getTime());
        if (query.to) q.where('started_ms', '<', query.to.getTime());
        if (query.resultType) q.where('result_type', query.resultType);
        if (query.checkSessionId !== undefined) q.where('check_session_id', query.checkSessionId);
        const [{ count }] = (await q.clone().count({ count: '*' })) as [{ count: string | number }];
        const rows = await q.orderBy([{ column: 'started_ms', order: 'desc' }, { column: 'seq', order: 'desc' }]).limit(query.limit).offset(query.offset);
        return { items: rows.map(fromRow), total: Number(count), offset: query.offset };
      }),
    aggregate: (accountId, query) =>
      run(async () => {
        if (query.checkIds.length === 0) return [];
        const q = ctx.knex(table)
          .where('account_id', accountId)
          .whereIn('check_id', query.checkIds)
          .where('started_ms', '>=', query.from.getTime())
          .where('started_ms', '<', query.to.getTime());
        if (!query.includeAttempts) q.where('result_type', 'FINAL');
        const statuses = query.filterByStatus ?? [];
        if (statuses.length === 1) q.where('failed', statuses[0] === 'failure');
        const rows = (await q.orderBy('seq')).map(fromRow);
        return aggregateResults(rows, query);
      }),
    deleteOlderThan: (before) => run(async () => Number(await ctx.knex(table).where('started_ms', '<', before.getTime()).delete())),
  };
}
