import type { KnexStorage } from '../../src/index.js';

export interface Statement {
  sql: string;
  bindings: readonly unknown[];
}

/** The statements `fn` sends through the store's knex, in order, with what it answers. */
export async function captured<T>(storage: KnexStorage, fn: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  const statements: Statement[] = [];
  const onQuery = (q: { sql: string; bindings?: readonly unknown[] }) => statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
  storage.knex.on('query', onQuery);
  try {
    return { result: await fn(), statements };
  } finally {
    storage.knex.off('query', onQuery);
  }
}

/**
 * How the database would run a statement: SQLite's `EXPLAIN QUERY PLAN` steps, one a line
 * (`SCAN t` reads the whole table, `SEARCH t USING INDEX i (a=?)` looks up), or PostgreSQL's
 * `EXPLAIN (FORMAT JSON)` as text (a `"Seq Scan"` reads the whole table; an index's `"Index Cond"`
 * names the columns it looks up by).
 */
export async function planOf(kind: 'sqlite' | 'postgres', storage: KnexStorage, { sql, bindings }: Statement): Promise<string> {
  if (kind === 'sqlite') {
    const steps = (await storage.knex.raw(`EXPLAIN QUERY PLAN ${sql}`, bindings as never[])) as { detail: string }[];
    return steps.map((step) => step.detail).join('\n');
  }
  // knex reports PostgreSQL's statement with its `$n` placeholders; EXPLAIN is given `?` ones.
  const plan = (await storage.knex.raw(`EXPLAIN (FORMAT JSON) ${sql.replace(/\$\d+/g, '?')}`, bindings as never[])) as { rows: { 'QUERY PLAN': unknown }[] };
  return JSON.stringify(plan.rows[0]!['QUERY PLAN']);
}

/** Whether a plan (planOf) reads a whole table. */
export const readsWholeTable = (kind: 'sqlite' | 'postgres', plan: string) => (kind === 'sqlite' ? /^SCAN /m.test(plan) : plan.includes('"Seq Scan"'));
