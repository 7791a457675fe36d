import { type AggregateMeasure, type CheckResult, type CheckResultRepository, type ResultAggregateQuery, type ResultAggregateRow } from '@vigil/core';
import type { Knex } from 'knex';
import { dbCall } from './errors.js';
import { pruneAccount, rollUpAccount } from './retention.js';
import { aggregateWithRollups } from './rollup-aggregate.js';
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
  const run = dbCall(ctx.database);
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
        const row = await ctx.reader(table).where({ account_id: accountId, id }).first();
        return row ? fromRow(row) : null;
      }),
    listByCheck: (accountId, checkId, query) =>
      run(async () => {
        const q = ctx.reader(table).where({ account_id: accountId, check_id: checkId });
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
        const rolled = await aggregateWithRollups(ctx, accountId, query);
        if (rolled) return rolled;
        if (['pg', 'postgres', 'postgresql'].includes(String(ctx.knex.client.config.client))) return aggregateInPostgres(ctx.reader, table, accountId, query);
        return aggregateInSqlite(ctx.reader, table, accountId, query);
      }),
    deleteOlderThan: (before) => run(async () => Number(await ctx.knex(table).where('started_ms', '<', before.getTime()).delete())),
    prune: (accountId, before, limit) => run(() => pruneAccount(ctx, accountId, before, limit)),
    rollUp: (accountId, after, before, limit) => run(() => rollUpAccount(ctx, accountId, after, before, limit)),
  };
}

const WORK_MEM = '128MB';
const PERCENTILE: Record<string, number> = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

function valueSql(knex: Knex, field: string): Knex.Raw {
  if (field === 'responseTime') return knex.raw('response_time');
  if (field === 'attempts') return knex.raw('attempts');
  return knex.raw('(phases::jsonb ->> ?)::float8', [field]);
}

function measureSql(knex: Knex, m: AggregateMeasure): Knex.Raw {
  const v = valueSql(knex, m.field);
  const p = PERCENTILE[m.fn];
  if (p !== undefined) return knex.raw('percentile_cont(?) within group (order by ?)', [p, v]);
  const fn = { avg: 'avg', max: 'max', min: 'min', sum: 'sum', stddev: 'stddev_samp', count: 'count' }[m.fn as string];
  return knex.raw(`${fn}(?)`, [v]);
}

/** The aggregate in one query: percentile_cont, stddev_samp and friends computed by PostgreSQL. */
async function aggregateInPostgres(knex: Knex, table: string, accountId: string, query: ResultAggregateQuery): Promise<ResultAggregateRow[]> {
  const from = query.from.getTime();
  const bucketMs = query.bucketMs && query.bucketMs > 0 ? query.bucketMs : null;
  const bucket = bucketMs === null ? knex.raw('?::bigint', [from]) : knex.raw('?::bigint + floor((started_ms - ?) / ?::float8)::bigint * ?::bigint', [from, from, bucketMs, bucketMs]);
  const group = query.groupBy === 'runLocation' ? knex.raw('run_location') : query.groupBy === 'statusCode' ? knex.raw('status_code::text') : knex.raw('null::text');
  const selects: Knex.Raw[] = [
    knex.raw('check_id'), knex.raw('? as bucket', [bucket]), knex.raw('? as grp', [group]),
    knex.raw('count(*) as n'), knex.raw('sum(case when failed then 1 else 0 end) as failures'),
    ...query.measures.map((m, i) => knex.raw(`? as m${i}`, [measureSql(knex, m)])),
  ];
  const build = (db: Knex | Knex.Transaction) => {
    const q = db(table)
      .select(selects)
      .where('account_id', accountId)
      .whereIn('check_id', query.checkIds)
      .where('started_ms', '>=', from)
      .where('started_ms', '<', query.to.getTime())
      .groupByRaw('1, 2, 3')
      .orderByRaw('check_id collate "C", 2, coalesce(?, \'\') collate "C"', [group]);
    if (!query.includeAttempts) q.where('result_type', 'FINAL');
    const statuses = query.filterByStatus ?? [];
    if (statuses.length === 1) q.where('failed', statuses[0] === 'failure');
    return q;
  };
  // Percentiles sort every value; enough work memory keeps a million of them off the disk.
  const rows = (await knex.transaction(async (trx) => {
    await trx.raw(`set local work_mem = '${WORK_MEM}'`);
    return build(trx);
  })) as Record<string, unknown>[];
  const num = (x: unknown) => (x === null || x === undefined ? null : Number(x));
  return rows.map((r) => ({
    checkId: String(r.check_id),
    bucketStart: new Date(Number(r.bucket)).toISOString(),
    group: r.grp === null ? null : String(r.grp),
    count: Number(r.n),
    failures: Number(r.failures),
    values: Object.fromEntries(query.measures.map((m, i) => [m.name, m.fn === 'count' ? Number(r[`m${i}`]) : num(r[`m${i}`])])),
  }));
}

/** The WHERE clause both dialects share. */
function scoped(knex: Knex, table: string, accountId: string, query: ResultAggregateQuery): Knex.QueryBuilder {
  const q = knex(table)
    .where('account_id', accountId)
    .whereIn('check_id', query.checkIds)
    .where('started_ms', '>=', query.from.getTime())
    .where('started_ms', '<', query.to.getTime());
  if (!query.includeAttempts) q.where('result_type', 'FINAL');
  const statuses = query.filterByStatus ?? [];
  if (statuses.length === 1) q.where('failed', statuses[0] === 'failure');
  return q;
}

function sqliteValue(field: string): string {
  if (field === 'responseTime') return 'response_time';
  if (field === 'attempts') return 'attempts';
  return `json_extract(phases, '$.' || ${JSON.stringify(field).replace(/'/g, "''").replace(/^"|"$/g, "'")})`;
}

/**
 * SQLite has no percentile_cont nor stddev_samp: each percentile is found with window functions
 * (the two ranks around the fraction, interpolated), and the deviations from each bucket's mean
 * with a window average, all inside the database.
 */
async function aggregateInSqlite(knex: Knex, table: string, accountId: string, query: ResultAggregateQuery): Promise<ResultAggregateRow[]> {
  const from = query.from.getTime();
  const bucketMs = query.bucketMs && query.bucketMs > 0 ? query.bucketMs : null;
  const bucket = bucketMs === null ? `${from}` : `(${from} + ((started_ms - ${from}) / ${bucketMs}) * ${bucketMs})`;
  const group = query.groupBy === 'runLocation' ? 'run_location' : query.groupBy === 'statusCode' ? 'CAST(status_code AS TEXT)' : 'NULL';
  const base = scoped(knex, table, accountId, query).select(
    knex.raw('check_id'), knex.raw(`${bucket} AS bucket`), knex.raw(`${group} AS grp`),
    knex.raw('count(*) AS n'), knex.raw('sum(CASE WHEN failed THEN 1 ELSE 0 END) AS failures'),
    ...query.measures.flatMap((m, i) => {
      const v = sqliteValue(m.field);
      switch (m.fn) {
        case 'avg': case 'max': case 'min': case 'sum': case 'count':
          return [knex.raw(`${m.fn === 'sum' ? 'total' : m.fn}(${v}) AS m${i}`), ...(m.fn === 'sum' ? [knex.raw(`count(${v}) AS c${i}`)] : [])];
        default:
          return [];
      }
    }),
  ).groupByRaw('1, 2, 3');
  const rows = (await base) as Record<string, unknown>[];
  const key = (r: Record<string, unknown>) => JSON.stringify([r.check_id, Number(r.bucket), r.grp ?? null]);
  const out = new Map<string, ResultAggregateRow>();
  for (const r of rows) {
    const values: Record<string, number | null> = {};
    query.measures.forEach((m, i) => {
      if (m.fn === 'sum') {
        values[m.name] = Number(r[`c${i}`]) === 0 ? null : Number(r[`m${i}`]);
      } else if (m.fn === 'count') {
        values[m.name] = Number(r[`m${i}`]);
      } else if (PERCENTILE[m.fn] === undefined && m.fn !== 'stddev') {
        values[m.name] = r[`m${i}`] === null ? null : Number(r[`m${i}`]);
      } else {
        values[m.name] = null;
      }
    });
    out.set(key(r), {
      checkId: String(r.check_id), bucketStart: new Date(Number(r.bucket)).toISOString(), group: (r.grp as string | null) ?? null,
      count: Number(r.n), failures: Number(r.failures), values,
    });
  }
  const partition = `PARTITION BY check_id, ${bucket}, ${group}`;
  // stddev_samp in two passes: each value's distance from its bucket's mean, then the squares of
  // those. The one-pass sum(v * v) - sum(v)^2 / n cancels away the spread of near-equal large
  // values (runs that all hit one timeout), which PostgreSQL's stddev_samp keeps.
  const spreads = query.measures.flatMap((m, i) => (m.fn === 'stddev' ? [{ m, i, v: sqliteValue(m.field) }] : []));
  if (spreads.length > 0) {
    const inner = scoped(knex, table, accountId, query).select(
      knex.raw('check_id'), knex.raw(`${bucket} AS bucket`), knex.raw(`${group} AS grp`),
      ...spreads.map(({ i, v }) => knex.raw(`${v} - avg(${v}) OVER (${partition}) AS d${i}`)),
    );
    const sums = (await knex.select(
      'check_id', 'bucket', 'grp',
      ...spreads.flatMap(({ i }) => [knex.raw(`count(d${i}) AS c${i}`), knex.raw(`total(d${i} * d${i}) AS q${i}`)]),
    ).from(inner.as('spread')).groupBy('check_id', 'bucket', 'grp')) as Record<string, unknown>[];
    for (const r of sums) {
      const row = out.get(key(r));
      if (!row) continue;
      for (const { m, i } of spreads) {
        const n = Number(r[`c${i}`]);
        row.values[m.name] = n < 2 ? null : Math.sqrt(Number(r[`q${i}`]) / (n - 1));
      }
    }
  }
  for (const m of query.measures) {
    const p = PERCENTILE[m.fn];
    if (p === undefined) continue;
    const v = sqliteValue(m.field);
    const inner = scoped(knex, table, accountId, query).whereRaw(`${v} IS NOT NULL`).select(
      knex.raw('check_id'), knex.raw(`${bucket} AS bucket`), knex.raw(`${group} AS grp`), knex.raw(`${v} AS v`),
      knex.raw(`row_number() OVER (${partition} ORDER BY ${v}) - 1 AS rn`),
      knex.raw(`count(*) OVER (${partition}) AS n`),
    );
    const pos = `(${p} * (n - 1))`;
    const lo = `CAST(${pos} AS INTEGER)`;
    const picked = (await knex.select(
      'check_id', 'bucket', 'grp',
      knex.raw(`max(CASE WHEN rn = ${lo} THEN v END) AS lo`),
      knex.raw(`max(CASE WHEN rn = ${lo} + (${pos} > ${lo}) THEN v END) AS hi`),
      knex.raw(`max(${pos} - ${lo}) AS frac`),
    ).from(inner.as('ranked')).whereRaw(`rn BETWEEN ${lo} AND ${lo} + 1`).groupBy('check_id', 'bucket', 'grp')) as Record<string, unknown>[];
    for (const r of picked) {
      const row = out.get(key(r));
      if (!row) continue;
      const lower = Number(r.lo);
      row.values[m.name] = lower + (Number(r.hi) - lower) * Number(r.frac);
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...out.values()].sort((a, b) => cmp(a.checkId, b.checkId) || Date.parse(a.bucketStart) - Date.parse(b.bucketStart) || cmp(a.group ?? '', b.group ?? ''));
}
