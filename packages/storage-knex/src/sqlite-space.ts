import type { Knex } from 'knex';

/**
 * Gives the free pages of a SQLite file back to the file system: the pages deleted results left
 * (retention's prune) are cut from the end of the file, so the file shrinks to what it holds.
 * Answers how many pages were freed (the free-list count before minus after); 0, and nothing done,
 * on PostgreSQL (its autovacuum makes the space of deleted rows reusable) and on a SQLite file
 * without incremental auto-vacuum. `maxPages` caps the pages freed in one call, to keep the
 * write lock short; by default every free page goes. Under write-ahead logging the file itself
 * shrinks at the next checkpoint.
 *
 * A file Vigil creates uses incremental auto-vacuum. A file made before Vigil set it (or by the
 * host with auto-vacuum off) cannot take it while it has tables: it reuses its free pages for new
 * results, so it stops growing once retention deletes as much as arrives, but it never shrinks.
 * To convert it, stop every process that uses it and run once
 * `sqlite3 vigil.sqlite 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'`, which rewrites the whole
 * file: it needs about twice the file's size free on disk and took about 26 s per GB measured.
 */
export async function reclaimSqliteSpace(knex: Knex, maxPages?: number): Promise<number> {
  if (knex.client.dialect !== 'sqlite3') return 0;
  if (maxPages !== undefined && !(maxPages >= 1)) return 0;
  if ((await pragma(knex, 'auto_vacuum')) !== 2) return 0;
  const before = await pragma(knex, 'freelist_count');
  if (before === 0) return 0;
  // SQLite frees every page for an N below 1: a cap is a whole number of at least 1.
  const limit = maxPages === undefined || !Number.isFinite(maxPages) ? '' : `(${Math.floor(maxPages)})`;
  await knex.raw(`PRAGMA incremental_vacuum${limit}`);
  return before - (await pragma(knex, 'freelist_count'));
}

async function pragma(knex: Knex, name: 'auto_vacuum' | 'freelist_count'): Promise<number> {
  const rows = (await knex.raw(`PRAGMA ${name}`)) as Record<string, unknown>[];
  return Number(rows[0]?.[name] ?? 0);
}
