import { ConflictError } from '../errors.js';
import type { ListOptions } from '../ports/storage.js';
import type { Page } from '../model/primitives.js';

type Row = Record<string, unknown>;

/** Copies a value so that neither the caller nor the store can change the other's copy. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

/**
 * One table of the in-memory store: rows in insertion order, keyed by a string form of their key.
 * Numeric ids come from a per-table counter starting at 1; string ids come with the row and must
 * be new.
 */
export class MemoryTable<T extends object> {
  private readonly rows = new Map<string, T>();
  private seq = 0;

  constructor(readonly name: string) {}

  /** Stores a copy of `row` under `key`; a taken key is a conflict. */
  add(key: string | number, row: T): T {
    const k = String(key);
    if (this.rows.has(k)) throw new ConflictError(`${this.name}: id ${k} already exists`);
    const stored = copy(row);
    this.rows.set(k, stored);
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
    const stored = copy(row);
    this.rows.set(String(key), stored);
    return copy(stored);
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
    return this.rows.delete(String(key));
  }

  /** Deletes every row that matches; answers how many went. */
  removeWhere(match: (row: T) => boolean): number {
    let removed = 0;
    for (const [k, row] of this.rows) {
      if (match(row)) {
        this.rows.delete(k);
        removed++;
      }
    }
    return removed;
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
