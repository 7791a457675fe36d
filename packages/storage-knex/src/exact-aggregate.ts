/*
 * Exact aggregates over raw results, computed by the database: what analytics answers for ranges
 * that roll-ups do not serve.
 */
import type { AggregateMeasure, ResultAggregateQuery, ResultAggregateRow } from '@vigil/core';
import type { Knex } from 'knex';
import { resultsRelation, type Scope } from './compact/union.js';
import type { TableContext } from './table.js';

const WORK_MEM = '128MB';
const PERCENTILE: Record<string, number> = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

/** The measured fields that are neither column of every result: f0, f1, ... in the relation. */
const extraFields = (query: ResultAggregateQuery) => [...new Set(query.measures.map((m) => m.field))].filter((f) => f !== 'responseTime' && f !== 'attempts');

function valueSql(query: ResultAggregateQuery, field: string): string {
  if (field === 'responseTime') return 'response_time';
  if (field === 'attempts') return 'attempts';
  return `f${extraFields(query).indexOf(field)}`;
}

/** The query's results, full and narrow rows alike, as the relation `r`. */
function source(db: Knex, ctx: TableContext, accountId: string, query: ResultAggregateQuery): Knex.QueryBuilder {
  const statuses = query.filterByStatus ?? [];
  const scope: Scope = {
    accountId, checkIds: query.checkIds, from: query.from.getTime(), to: query.to.getTime(), time: 'started',
    finalOnly: !query.includeAttempts, failed: statuses.length === 1 ? statuses[0] === 'failure' : undefined,
  };
  return db.from(resultsRelation(db, ctx, scope, extraFields(query)).as('r'));
}

function measureSql(knex: Knex, query: ResultAggregateQuery, m: AggregateMeasure): Knex.Raw {
  const v = knex.raw(valueSql(query, m.field));
  const p = PERCENTILE[m.fn];
  if (p !== undefined) return knex.raw('percentile_cont(?) within group (order by ?)', [p, v]);
  const fn = { avg: 'avg', max: 'max', min: 'min', sum: 'sum', stddev: 'stddev_samp', count: 'count' }[m.fn as string];
  return knex.raw(`${fn}(?)`, [v]);
}

/** The aggregate in one query: percentile_cont, stddev_samp and friends computed by PostgreSQL. */
export async function aggregateInPostgres(knex: Knex, ctx: TableContext, accountId: string, query: ResultAggregateQuery): Promise<ResultAggregateRow[]> {
  const from = query.from.getTime();
  const bucketMs = query.bucketMs && query.bucketMs > 0 ? query.bucketMs : null;
  const bucket = bucketMs === null ? knex.raw('?::bigint', [from]) : knex.raw('?::bigint + floor((started_ms - ?) / ?::float8)::bigint * ?::bigint', [from, from, bucketMs, bucketMs]);
  const group = query.groupBy === 'runLocation' ? knex.raw('run_location') : query.groupBy === 'statusCode' ? knex.raw('status_code::text') : knex.raw('null::text');
  const selects: Knex.Raw[] = [
    knex.raw('check_id'), knex.raw('? as bucket', [bucket]), knex.raw('? as grp', [group]),
    knex.raw('count(*) as n'), knex.raw('sum(case when failed then 1 else 0 end) as failures'),
    ...query.measures.map((m, i) => knex.raw(`? as m${i}`, [measureSql(knex, query, m)])),
  ];
  const build = (db: Knex | Knex.Transaction) =>
    source(db as Knex, ctx, accountId, query)
      .select(selects)
      .groupByRaw('1, 2, 3')
      .orderByRaw('check_id collate "C", 2, coalesce(?, \'\') collate "C"', [group]);
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


/**
 * SQLite has no percentile_cont nor stddev_samp: each percentile is found with window functions
 * (the two ranks around the fraction, interpolated), and the deviations from each bucket's mean
 * with a window average, all inside the database.
 */
export async function aggregateInSqlite(knex: Knex, ctx: TableContext, accountId: string, query: ResultAggregateQuery): Promise<ResultAggregateRow[]> {
  const from = query.from.getTime();
  const bucketMs = query.bucketMs && query.bucketMs > 0 ? query.bucketMs : null;
  const bucket = bucketMs === null ? `${from}` : `(${from} + ((started_ms - ${from}) / ${bucketMs}) * ${bucketMs})`;
  const group = query.groupBy === 'runLocation' ? 'run_location' : query.groupBy === 'statusCode' ? 'CAST(status_code AS TEXT)' : 'NULL';
  const base = source(knex, ctx, accountId, query).select(
    knex.raw('check_id'), knex.raw(`${bucket} AS bucket`), knex.raw(`${group} AS grp`),
    knex.raw('count(*) AS n'), knex.raw('sum(CASE WHEN failed THEN 1 ELSE 0 END) AS failures'),
    ...query.measures.flatMap((m, i) => {
      const v = valueSql(query, m.field);
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
  const spreads = query.measures.flatMap((m, i) => (m.fn === 'stddev' ? [{ m, i, v: valueSql(query, m.field) }] : []));
  if (spreads.length > 0) {
    const inner = source(knex, ctx, accountId, query).select(
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
    const v = valueSql(query, m.field);
    const inner = source(knex, ctx, accountId, query).whereRaw(`${v} IS NOT NULL`).select(
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
