// The shape every resource repository of a store shares, and the records it is given.
import type { Page } from '../model/primitives.js';

/** What a store is given for a new row: no account id (the call carries it), no store-assigned id. */
export type NewRecord<T> = T extends { id: number } ? Omit<T, 'id' | 'accountId'> : Omit<T, 'accountId'>;
/** What a store is given to replace a row: the whole row but its account (per member of a union). */
export type StoredRecord<T> = T extends unknown ? Omit<T, 'accountId'> : never;

export interface ListOptions {
  limit: number;
  offset: number;
}

/**
 * The shape every resource repository shares. Every call is scoped to an account: a row of
 * another account is never read, changed or deleted, and reads as absent (null / false).
 */
export interface Repository<T extends { id: TId; accountId: string }, TId extends string | number> {
  /** Stores a new row. Numeric ids are assigned by the store; string ids come with the row. */
  insert(accountId: string, record: NewRecord<T>): Promise<T>;
  get(accountId: string, id: TId): Promise<T | null>;
  /** Rows in creation order (oldest first). */
  list(accountId: string, options?: ListOptions): Promise<Page<T>>;
  /** Replaces the row; null when it does not exist in this account. */
  update(accountId: string, id: TId, record: StoredRecord<T>): Promise<T | null>;
  delete(accountId: string, id: TId): Promise<boolean>;
}
