import { ConflictError } from '../errors.js';
import type { ListOptions } from '../ports/storage.js';
import type { Page } from '../model/primitives.js';
import { compactCopy, SharingStats } from './memory-compact.js';

type Row = Record<string, unknown>;

/**
 * Copies a value so that neither the caller nor the store can change the other's copy. Plain
 * objects and arrays are copied member by member and their strings shared (a string cannot be
 * changed), which is several times faster than structuredClone; anything else (a Date, bytes) is
 * copied by structuredClone. What the store keeps is copied by compactCopy (memory-compact.ts),
 * which keeps equal plain members of many rows once.
 */
export function copy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  // A spread copies the object's shape at its size; its members that are objects are then copied.
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in out) {
    const member = out[key];
    if (typeof member === 'object' && member !== null) out[key] = copy(member);
  }
  return out as T;
}

/**
 * One table of the in-memory store: rows in insertion order, keyed by a string form of their key.
 * Numeric ids come from a per-table counter starting at 1; string ids come with the row and must
 * be new.
 */
export class MemoryTable<T extends object> {
  private readonly rows = new Map<string, T>();
  private seq = 0;
  /** The keys in sorted order, kept until a key is added or removed. */
  private sorted: string[] | null = null;
  /** Which members of this table's rows are worth looking up among the shared ones (memory-compact.ts). */
  private readonly sharing = new SharingStats();

  constructor(readonly name: string) {}

  /** Stores a copy of `row` under `key`; a taken key is a conflict. */
  add(key: string | number, row: T): T {
    const k = String(key);
    if (this.rows.has(k)) throw new ConflictError(`${this.name}: id ${k} already exists`);
    const stored = compactCopy(row, this.sharing);
    this.rows.set(k, stored);
    this.sorted = null;
    return copy(stored);
  }

  /** Stores a row whose `id` the store assigns when it has none (numeric tables). */
  insert(accountId: string | null, record: object): T {
    const given = (record as { id?: unknown }).id;
    const id = given === undefined || given === null ? ++this.seq : (given as string | number);
    const row = { ...record, id, ...(accountId === null ? {} : { accountId }) } as unknown as T;
    return this.add(id, row);
  }

  /** Replaces (or adds) the row under `key` without a conflict check. */
  put(key: string | number, row: T): T {
    const stored = compactCopy(row, this.sharing);
    const k = String(key);
    if (!this.rows.has(k)) this.sorted = null;
    this.rows.set(k, stored);
    return copy(stored);
  }

  /** Stores a row the store built itself (no caller holds it), without a copy. */
  keep(key: string, row: T): void {
    if (!this.rows.has(key)) this.sorted = null;
    this.rows.set(key, row);
  }

  has(key: string | number): boolean {
    return this.rows.has(String(key));
  }

  /** The stored row itself (not a copy); only for the store's own reads and changes. */
  peek(key: string | number): T | undefined {
    return this.rows.get(String(key));
  }

  /** The stored row under `key` when it belongs to `accountId`, as a copy. */
  get(accountId: string, key: string | number): T | null {
    const row = this.owned(accountId, key);
    return row ? copy(row) : null;
  }

  /** The stored row when it belongs to `accountId` (not a copy). */
  owned(accountId: string, key: string | number): T | undefined {
    const row = this.rows.get(String(key));
    return row && (row as Row).accountId === accountId ? row : undefined;
  }

  remove(key: string | number): boolean {
    const removed = this.rows.delete(String(key));
    if (removed) this.sorted = null;
    return removed;
  }

  /** Deletes every row that matches; answers how many went. */
  removeWhere(match: (row: T) => boolean): number {
    let removed = 0;
    for (const [k, row] of this.rows) {
      if (match(row)) {
        this.rows.delete(k);
        this.sorted = null;
        removed++;
      }
    }
    return removed;
  }

  /**
   * Up to `limit` stored rows (not copies) whose key sorts after `after` (all when null), in key
   * order. The sorted keys are kept between calls, so paging through a large table stays cheap.
   */
  pageAfter(after: string | null, limit: number): T[] {
    const keys = (this.sorted ??= [...this.rows.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    let lo = 0;
    if (after !== null) {
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (keys[mid]! <= after) lo = mid + 1;
        else hi = mid;
      }
    }
    return keys.slice(lo, lo + Math.max(0, limit)).map((k) => this.rows.get(k)!);
  }

  /** Keys and stored rows (not copies) in insertion order. */
  entries(): IterableIterator<[string, T]> {
    return this.rows.entries();
  }

  /** Stored rows (not copies) in insertion order. */
  all(): T[] {
    return [...this.rows.values()];
  }

  /** Copies of the rows that match, in insertion order. */
  select(match: (row: T) => boolean): T[] {
    return this.all().filter(match).map(copy);
  }

  /** Copies of an account's rows, in insertion order. */
  ofAccount(accountId: string, match: (row: T) => boolean = () => true): T[] {
    return this.select((row) => (row as Row).accountId === accountId && match(row));
  }

  /** A page of an account's rows in insertion order; no options means every row. */
  page(accountId: string, options?: ListOptions, match?: (row: T) => boolean): Page<T> {
    const rows = this.ofAccount(accountId, match);
    const offset = options?.offset ?? 0;
    const items = options ? rows.slice(offset, offset + options.limit) : rows.slice(offset);
    return { items, total: rows.length, offset };
  }

  /** Rows as stored, for RawReader. */
  dump(): Record<string, unknown>[] {
    return this.all().map((row) => copy(row) as Row);
  }
}
