/**
 * How the in-memory store keeps a row compactly. The row itself is a fresh object (the store
 * changes a row's own members in place: a lease, a delivery time), but each member that is a
 * plain JSON value (objects and arrays of strings, finite numbers, booleans and null) is kept
 * once for all rows that hold an equal one: a hundred thousand checks with the same alert
 * settings, request assertions or empty lists hold one copy of each. A shared member is frozen
 * and never changed; reads copy it (see `copy` in memory-table.ts) as before. Members holding
 * anything else (a Date, bytes, undefined) are copied by structuredClone. A member of a table's
 * rows that is seldom found shared (see SharingStats) is copied plainly instead of looked up.
 */

/** Members whose JSON text is longer than this are not looked up among the shared ones. */
const MAX_SHARED_TEXT = 4096;

/** Shared members by a hash of their JSON text; an entry goes when no row holds its member. */
const shared = new Map<number, WeakRef<object>>();
const released = new FinalizationRegistry<{ hash: number; ref: WeakRef<object> }>(({ hash, ref }) => {
  if (shared.get(hash) === ref) shared.delete(hash);
});

/** True when `value` comes back equal from JSON text (and -0, NaN, undefined do not occur). */
function jsonSafe(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== 'object' || depth > 32) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !jsonSafe(value[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (!jsonSafe((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}

/** FNV-1a over the text's UTF-16 units. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) freezeDeep(member);
    Object.freeze(value);
  }
  return value;
}

/** The shared, frozen copy of a JSON-safe member equal to `value`, and whether an equal one was kept already. */
function sharedCopy(value: object): { copy: object; found: boolean } {
  const text = JSON.stringify(value);
  if (text.length > MAX_SHARED_TEXT) return { copy: freezeDeep(JSON.parse(text) as object), found: false };
  const hash = hashOf(text);
  const found = shared.get(hash)?.deref();
  // Equal text means an equal value in the same member order; another text under the hash is kept apart.
  if (found) return JSON.stringify(found) === text ? { copy: found, found: true } : { copy: freezeDeep(JSON.parse(text) as object), found: false };
  const made = freezeDeep(JSON.parse(text) as object);
  const ref = new WeakRef(made);
  shared.set(hash, ref);
  released.register(made, { hash, ref });
  return { copy: made, found: false };
}

/** A JSON-safe value copied member by member (its strings are shared: a string cannot be changed). */
function plainCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = plainCopy(value[i]);
    return out;
  }
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in out) out[key] = plainCopy(out[key]);
  return out;
}

/** Lookups of a member before its share of finds decides whether it is looked up any more. */
const TRIAL_LOOKUPS = 256;
/** A member whose lookups found a kept copy less often than this, over its trial, is no longer looked up. */
const MIN_FOUND_SHARE = 1 / 8;

/**
 * How often each member of one table's rows was found among the shared ones. A member that is
 * new in almost every row (an alert state's recent run ids, rewritten on every run) gains nothing
 * from a lookup, which costs its JSON text, a parse, a weak reference and a map entry: after its
 * trial it is copied plainly, as its own.
 */
export class SharingStats {
  private readonly members = new Map<string, { looked: number; found: number }>();

  /** Whether `member` is still looked up among the shared members. */
  shares(member: string): boolean {
    const m = this.members.get(member);
    return m === undefined || m.looked < TRIAL_LOOKUPS || m.found >= m.looked * MIN_FOUND_SHARE;
  }

  count(member: string, found: boolean): void {
    let m = this.members.get(member);
    if (!m) this.members.set(member, (m = { looked: 0, found: 0 }));
    // After the trial the share is settled: the counts stop.
    if (m.looked >= TRIAL_LOOKUPS) return;
    m.looked++;
    if (found) m.found++;
  }
}

/**
 * The copy of `row` the store keeps: its own object, members shared where they are plain JSON
 * (and, with `stats`, where that member of the table's rows was found shared often enough).
 */
export function compactCopy<T>(row: T, stats?: SharingStats): T {
  if (typeof row !== 'object' || row === null || Array.isArray(row) || Object.getPrototypeOf(row) !== Object.prototype) {
    return structuredClone(row);
  }
  // A spread copies the row's shape at its size; its members that are objects are then replaced.
  const out: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const key in out) {
    const member = out[key];
    if (typeof member !== 'object' || member === null) continue;
    if (!jsonSafe(member, 0)) out[key] = structuredClone(member);
    else if (stats && !stats.shares(key)) out[key] = plainCopy(member);
    else {
      const kept = sharedCopy(member);
      stats?.count(key, kept.found);
      out[key] = kept.copy;
    }
  }
  return out as T;
}
