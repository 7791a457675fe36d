import { ConflictError, NotFoundError } from '../errors.js';
import type { Account, ApiKey } from '../model/account.js';
import type { AlertSubscription } from '../model/alert-channel.js';
import type { Check } from '../model/check.js';
import type {
  AccountRepository,
  AlertSubscriptionRepository,
  ApiKeyRepository,
  CheckRepository,
  NewRecord,
  Repository,
} from '../ports/storage.js';
import { copy, MemoryTable } from './memory-table.js';

type Owned = { id: string | number; accountId: string };

export interface RepositoryHooks<T> {
  /** Throws when `row` breaks a rule of the table (e.g. a value unique across accounts). */
  validate?: (row: T) => void;
  /** Removes what belongs to a deleted row. */
  afterDelete?: (row: T) => void;
}

/** The shared account-scoped repository over one table. */
export function repository<T extends Owned & { id: TId }, TId extends string | number>(
  table: MemoryTable<T>,
  hooks: RepositoryHooks<T> = {},
): Repository<T, TId> {
  return {
    async insert(accountId, record) {
      // A numeric table's candidate has no id yet, so it equals no stored row's id.
      hooks.validate?.({ ...(record as object), accountId } as unknown as T);
      return table.insert(accountId, record);
    },
    async get(accountId, id) {
      return table.get(accountId, id);
    },
    async list(accountId, options) {
      return table.page(accountId, options);
    },
    async update(accountId, id, record) {
      if (!table.owned(accountId, id)) return null;
      const row = { ...(record as object), id, accountId } as unknown as T;
      hooks.validate?.(row);
      return table.put(id, row);
    },
    async delete(accountId, id) {
      const row = table.owned(accountId, id);
      if (!row) return false;
      table.remove(id);
      hooks.afterDelete?.(row);
      return true;
    },
  };
}

/** A rule that `field` (when set) is held by at most one row across all accounts. */
export function uniqueAcrossAccounts<T extends Owned>(table: MemoryTable<T>, field: keyof T & string) {
  return (row: T) => {
    const value = row[field];
    if (value === null || value === undefined || value === '') return;
    const taken = table.all().some((other) => other[field] === value && other.id !== row.id);
    if (taken) throw new ConflictError(`${field} ${String(value)} is already taken`);
  };
}

export function accountRepository(table: MemoryTable<Account>): AccountRepository {
  return {
    async insert(account) {
      return table.add(account.id, account);
    },
    async get(accountId) {
      const row = table.peek(accountId);
      return row ? copy(row) : null;
    },
    async update(account) {
      if (!table.has(account.id)) throw new NotFoundError(`account ${account.id} does not exist`);
      return table.put(account.id, account);
    },
    async listIds() {
      return table.all().map((a) => a.id);
    },
  };
}

export function apiKeyRepository(table: MemoryTable<ApiKey>): ApiKeyRepository {
  return {
    async insert(key) {
      return table.add(key.id, key);
    },
    async findByPrefix(prefix) {
      return table.select((k) => k.prefix === prefix);
    },
    async list(accountId) {
      return table.ofAccount(accountId);
    },
    async revoke(accountId, id, at) {
      const row = table.owned(accountId, id);
      if (!row) return false;
      // The first revocation time stands; revoking again changes nothing.
      row.revokedAt ??= at;
      return true;
    },
    async touch(id, at) {
      const row = table.peek(id);
      if (row) row.lastUsedAt = at;
    },
  };
}

export function checkRepository(table: MemoryTable<Check>): CheckRepository {
  return {
    ...repository<Check, string>(table),
    async listByGroup(accountId, groupId) {
      return table.ofAccount(accountId, (c) => c.groupId === groupId);
    },
    async listByIds(accountId, ids) {
      const wanted = new Set(ids);
      return table.ofAccount(accountId, (c) => wanted.has(c.id));
    },
    async listAll(accountId) {
      return table.ofAccount(accountId);
    },
    async listSummaries(accountId) {
      return table.ofAccount(accountId).map((c) => ({ id: c.id, name: c.name, checkType: c.checkType, created_at: c.created_at }));
    },
    async scan(afterId, limit) {
      // Only the page is copied, and the table keeps its keys sorted: a scan over a large store stays cheap.
      return table.pageAfter(afterId, limit).map(copy);
    },
    async findByPingToken(token) {
      const found = table.all().find((c) => c.checkType === 'HEARTBEAT' && c.heartbeat.pingToken === token);
      return found ? copy(found) : null;
    },
    async findAnywhere(id) {
      const found = table.peek(id);
      return found ? copy(found) : null;
    },
  };
}

type Target = { checkId: string } | { groupId: number };

function targets(target: Target) {
  return (s: AlertSubscription) => ('checkId' in target ? s.checkId === target.checkId : s.groupId === target.groupId);
}

export function alertSubscriptionRepository(table: MemoryTable<AlertSubscription>): AlertSubscriptionRepository {
  const owned = (accountId: string) => (s: AlertSubscription) => s.accountId === accountId;
  const insertAll = (accountId: string, subs: NewRecord<AlertSubscription>[]) =>
    subs.map((s) => table.insert(accountId, s));
  return {
    async insert(accountId, subscription) {
      return table.insert(accountId, subscription);
    },
    async listByChannel(accountId, alertChannelId) {
      return table.ofAccount(accountId, (s) => s.alertChannelId === alertChannelId);
    },
    async listByCheck(accountId, checkId) {
      return table.ofAccount(accountId, (s) => s.checkId === checkId);
    },
    async listByGroup(accountId, groupId) {
      return table.ofAccount(accountId, (s) => s.groupId === groupId);
    },
    async listAll(accountId) {
      return table.ofAccount(accountId);
    },
    async replaceForChannel(accountId, alertChannelId, subscriptions) {
      table.removeWhere((s) => owned(accountId)(s) && s.alertChannelId === alertChannelId);
      return insertAll(accountId, subscriptions.map((s) => ({ ...s, alertChannelId })));
    },
    async replaceForTarget(accountId, target, subscriptions) {
      table.removeWhere((s) => owned(accountId)(s) && targets(target)(s));
      const fields = 'checkId' in target ? { checkId: target.checkId, groupId: null } : { checkId: null, groupId: target.groupId };
      return insertAll(accountId, subscriptions.map((s) => ({ ...s, ...fields })));
    },
    async deleteByChannel(accountId, alertChannelId) {
      return table.removeWhere((s) => owned(accountId)(s) && s.alertChannelId === alertChannelId);
    },
    async deleteByTarget(accountId, target) {
      return table.removeWhere((s) => owned(accountId)(s) && targets(target)(s));
    },
  };
}
