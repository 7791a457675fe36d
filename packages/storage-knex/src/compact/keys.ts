/*
 * The dictionaries the narrow rows point into: a small integer per check (with its account and
 * latest name) and per run location. Each process caches them; a batch resolves the keys it has
 * not seen with one insert and one select, and the cache learns them only once the batch's
 * transaction has committed (a rolled-back insert leaves no key behind that the cache would keep).
 */
import type { Knex } from 'knex';
import type { TableContext } from '../table.js';
import { tables } from './layout.js';

export interface CheckKey {
  key: number;
  name: string;
}

interface Cache {
  checks: Map<string, CheckKey>;
  locations: Map<string, number>;
}

const caches = new WeakMap<object, Cache>();

function cacheOf(ctx: TableContext): Cache {
  let c = caches.get(ctx);
  if (!c) caches.set(ctx, (c = { checks: new Map(), locations: new Map() }));
  return c;
}

const checkRef = (accountId: string, checkId: string) => `${accountId}\u0000${checkId}`;

/** What a batch learned, applied to the cache after its transaction commits. */
export interface Learned {
  checks: Map<string, CheckKey>;
  locations: Map<string, number>;
}

export const nothingLearned = (): Learned => ({ checks: new Map(), locations: new Map() });

export function remember(ctx: TableContext, learned: Learned): void {
  const c = cacheOf(ctx);
  for (const [ref, key] of learned.checks) c.checks.set(ref, key);
  for (const [name, key] of learned.locations) c.locations.set(name, key);
}

/**
 * The keys of an account's checks, made where missing; a check whose name changed has it updated.
 * `checks` maps check id to the name its run was stored with.
 */
export async function checkKeys(trx: Knex.Transaction, ctx: TableContext, accountId: string, checks: Map<string, string>, learned: Learned): Promise<Map<string, number>> {
  const cache = cacheOf(ctx);
  const table = tables(ctx).keys;
  const out = new Map<string, number>();
  const missing: string[] = [];
  for (const [checkId, name] of checks) {
    const known = cache.checks.get(checkRef(accountId, checkId));
    if (!known) {
      missing.push(checkId);
      continue;
    }
    out.set(checkId, known.key);
    if (known.name !== name) {
      await trx(table).where('check_key', known.key).update({ name });
      learned.checks.set(checkRef(accountId, checkId), { key: known.key, name });
    }
  }
  for (let i = 0; i < missing.length; i += 300) {
    const ids = missing.slice(i, i + 300);
    await trx(table).insert(ids.map((checkId) => ({ account_id: accountId, check_id: checkId, name: checks.get(checkId)! }))).onConflict(['account_id', 'check_id']).ignore();
    for (const r of (await trx(table).select('check_key', 'check_id', 'name').where('account_id', accountId).whereIn('check_id', ids)) as Record<string, unknown>[]) {
      const checkId = String(r.check_id);
      const name = checks.get(checkId)!;
      out.set(checkId, Number(r.check_key));
      if (String(r.name) !== name) await trx(table).where('check_key', Number(r.check_key)).update({ name });
      learned.checks.set(checkRef(accountId, checkId), { key: Number(r.check_key), name });
    }
  }
  return out;
}

/** The keys of an account's checks where this process knows every one under the name given, else null. */
export function knownCheckKeys(ctx: TableContext, accountId: string, checks: Map<string, string>): Map<string, number> | null {
  const cache = cacheOf(ctx);
  const out = new Map<string, number>();
  for (const [checkId, name] of checks) {
    const known = cache.checks.get(checkRef(accountId, checkId));
    if (!known || known.name !== name) return null;
    out.set(checkId, known.key);
  }
  return out;
}

/** The keys of run locations where this process knows every one, else null. */
export function knownLocationKeys(ctx: TableContext, names: Set<string>): Map<string, number> | null {
  const cache = cacheOf(ctx);
  const out = new Map<string, number>();
  for (const name of names) {
    const key = cache.locations.get(name);
    if (key === undefined) return null;
    out.set(name, key);
  }
  return out;
}

/** The keys of run locations, made where missing. */
export async function locationKeys(trx: Knex.Transaction, ctx: TableContext, names: Set<string>, learned: Learned): Promise<Map<string, number>> {
  const cache = cacheOf(ctx);
  const table = tables(ctx).locations;
  const out = new Map<string, number>();
  const missing = [...names].filter((n) => {
    const k = cache.locations.get(n);
    if (k !== undefined) out.set(n, k);
    return k === undefined;
  });
  if (missing.length > 0) {
    await trx(table).insert(missing.map((name) => ({ name }))).onConflict(['name']).ignore();
    for (const r of (await trx(table).select('loc_key', 'name').whereIn('name', missing)) as Record<string, unknown>[]) {
      out.set(String(r.name), Number(r.loc_key));
      learned.locations.set(String(r.name), Number(r.loc_key));
    }
  }
  return out;
}

/** An account's check key for reading (null: the check has no narrow rows). */
export async function readCheckKey(db: Knex, ctx: TableContext, accountId: string, checkId: string): Promise<CheckKey | null> {
  // No stored check id holds a NUL character (PostgreSQL would refuse the lookup outright).
  if (checkId.includes('\0') || accountId.includes('\0')) return null;
  const known = cacheOf(ctx).checks.get(checkRef(accountId, checkId));
  if (known) return known;
  const row = (await db(tables(ctx).keys).select('check_key', 'name').where({ account_id: accountId, check_id: checkId }).first()) as Record<string, unknown> | undefined;
  return row ? { key: Number(row.check_key), name: String(row.name) } : null;
}
