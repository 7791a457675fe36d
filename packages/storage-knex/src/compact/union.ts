/*
 * Results as one relation: the full rows of check_results UNION ALL the narrow rows of each type,
 * with the same columns. Aggregates, retention and roll-ups read it; the two sets are disjoint.
 */
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { attemptSql, dueSql, FLAG, isPostgres, LAYOUTS, locationKeySql, MAX_OFFSET_MS, NO_PHASE, slotAt, startedSql, tables, type Layout } from './layout.js';

export interface Scope {
  /** null: every account. */
  accountId: string | null;
  checkIds?: readonly string[] | undefined;
  /** Inclusive, ms; null for no lower bound. */
  from: number | null;
  /** Exclusive, ms. */
  to: number;
  finalOnly?: boolean | undefined;
  /** Only failed (true) or passed (false) results. */
  failed?: boolean | undefined;
  /**
   * What a narrow row's time is: when it started (reads), or when it was due (roll-ups and
   * retention, which go by whole days and hours of the slots). A full row's is always its start.
   */
  time: 'started' | 'due';
}

/** The SQL of a measured field in a full row (from its JSON phases). */
export function fullFieldSql(pg: boolean, field: string): string {
  if (field === 'responseTime') return 'response_time';
  if (field === 'attempts') return 'attempts';
  const lit = `'${field.replace(/'/g, "''")}'`;
  return pg ? `(phases::jsonb ->> ${lit})::float8` : `json_extract(phases, '$."' || ${lit.replace(/"/g, '')} || '"')`;
}

/** The SQL of a measured field in a narrow row of `layout` (alias `n`). */
export function narrowFieldSql(pg: boolean, layout: Layout, field: string): string {
  const f8 = (sql: string) => (pg ? `(${sql})::float8` : sql);
  if (field === 'responseTime' || field === 'total') return f8('n.rt / 100.0');
  if (field === 'attempts') return f8(attemptSql('n'));
  const p = layout.phases.find((c) => c.phase === field);
  if (!p) return pg ? 'null::float8' : 'null';
  return p.optional ? f8(`case when n.${p.column} = ${NO_PHASE} then null else n.${p.column} / 100.0 end`) : f8(`n.${p.column} / 100.0`);
}

/** A narrow table's rows in the scope (alias `n`, joined to its check `k` and location `l`). */
export function narrowRows(db: Knex, ctx: TableContext, layout: Layout, scope: Scope): Knex.QueryBuilder {
  const t = tables(ctx);
  const q = db({ n: t.runs(layout) })
    .join({ k: t.keys }, 'k.check_key', 'n.check_key')
    .join({ l: t.locations }, 'l.loc_key', db.raw(locationKeySql('n')));
  // Filtered on the joined check keys, so the planner starts from the few checks in scope and
  // reads each one's slot range along the primary key.
  if (scope.accountId !== null) q.where('k.account_id', scope.accountId);
  if (scope.checkIds) q.whereIn('k.check_id', [...scope.checkIds]);
  if (scope.time === 'due') {
    if (scope.from !== null) q.where('n.slot', '>=', slotAt(scope.from));
    q.where('n.slot', '<', slotAt(scope.to));
  } else {
    if (scope.from !== null) q.where('n.slot', '>=', slotAt(scope.from - MAX_OFFSET_MS)).whereRaw(`${startedSql('n')} >= ?`, [scope.from]);
    q.where('n.slot', '<', slotAt(scope.to + MAX_OFFSET_MS + 1)).whereRaw(`${startedSql('n')} < ?`, [scope.to]);
  }
  if (scope.finalOnly) q.whereRaw(`(n.flags & ${FLAG.attempt}) = 0`);
  if (scope.failed !== undefined) q.whereRaw(`(n.flags & ${FLAG.failures | FLAG.errors}) ${scope.failed ? '<>' : '='} 0`);
  return q;
}

/** check_results rows in the scope. */
export function fullRows(db: Knex, ctx: TableContext, scope: Scope): Knex.QueryBuilder {
  const q = db(`${ctx.prefix}check_results`).where('started_ms', '<', scope.to);
  if (scope.from !== null) q.where('started_ms', '>=', scope.from);
  if (scope.accountId !== null) q.where('account_id', scope.accountId);
  if (scope.checkIds) q.whereIn('check_id', [...scope.checkIds]);
  if (scope.finalOnly) q.where('result_type', 'FINAL');
  if (scope.failed !== undefined) q.where('failed', scope.failed);
  return q;
}

/**
 * Every result in the scope with the columns aggregates use: account_id, check_id, started_ms,
 * run_location, status_code, response_time, failed, attempts, result_type, and f0, f1, ... for
 * `fields` (null where a result has no such value).
 */
export function resultsRelation(db: Knex, ctx: TableContext, scope: Scope, fields: readonly string[] = []): Knex.QueryBuilder {
  const pg = isPostgres(db);
  const full = fullRows(db, ctx, scope).select(
    'account_id', 'check_id', 'started_ms', 'run_location', 'status_code', 'response_time', 'failed', 'attempts', 'result_type',
    ...fields.map((f, i) => db.raw(`${fullFieldSql(pg, f)} as f${i}`)),
  );
  const branches = LAYOUTS.map((layout) => {
    const time = scope.time === 'due' ? dueSql('n') : startedSql('n');
    return narrowRows(db, ctx, layout, scope).select(
      'k.account_id', 'k.check_id', db.raw(`${time} as started_ms`), db.raw('l.name as run_location'),
      db.raw(layout.http ? `${pg ? 'nullif(n.status_code, 0)::int4' : 'nullif(n.status_code, 0)'} as status_code` : `${pg ? 'null::int4' : 'null'} as status_code`),
      db.raw(`${narrowFieldSql(pg, layout, 'responseTime')} as response_time`),
      db.raw(`((n.flags & ${FLAG.failures | FLAG.errors}) <> 0) as failed`),
      db.raw(`${pg ? `${attemptSql('n')}::int4` : attemptSql('n')} as attempts`),
      db.raw(`case when (n.flags & ${FLAG.attempt}) <> 0 then 'ATTEMPT' else 'FINAL' end as result_type`),
      ...fields.map((f, i) => db.raw(`${narrowFieldSql(pg, layout, f)} as f${i}`)),
    );
  });
  return full.unionAll(branches, false);
}

/** The times (start for full rows, `scope.time` for narrow ones) of the scope's results, as one column `t`. */
export function timesRelation(db: Knex, ctx: TableContext, scope: Scope): Knex.QueryBuilder {
  const full = fullRows(db, ctx, scope).select(db.raw('started_ms as t'));
  const time = scope.time === 'due' ? dueSql('n') : startedSql('n');
  return full.unionAll(LAYOUTS.map((l) => narrowRows(db, ctx, l, scope).select(db.raw(`${time} as t`))), false);
}
