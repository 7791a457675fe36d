import {

  NotFoundError,
  type Account,
  type AlertChannel,
  type AlertChannelRepository,
  type AlertSubscription,
  type AlertSubscriptionRepository,
  type ApiKey,
  type Check,
  type CheckGroup,
  type CheckGroupRepository,
  type CheckRepository,
  type ClientCertificate,
  type ClientCertificateRepository,
  maintenanceWindowEndMs,
  type MaintenanceWindow,
  type MaintenanceWindowRepository,
  type Snippet,
  type SnippetRepository,
  type AccountRepository,
  type ApiKeyRepository,
  type Repository,
} from '@vigil/core';
import type { DocTable, TableContext } from './table.js';
import { DocTable as Table } from './table.js';

type Owned = { id: string | number; accountId: string };

/** The shared account-scoped repository over one document table. */
export function docRepository<T extends Owned & { id: TId }, TId extends string | number>(
  table: DocTable<T>,
  hooks: { afterDelete?: (row: T) => Promise<void> } = {},
): Repository<T, TId> {
  return {
    async insert(accountId, record) {
      return table.insert(accountId, record);
    },
    get: (accountId, id) => table.get(accountId, id),
    list: (accountId, options) => table.page(accountId, options),
    async update(accountId, id, record) {
      return table.put(accountId, id, record);
    },
    async delete(accountId, id) {
      const row = await table.get(accountId, id);
      if (!row) return false;
      await table.remove(accountId, { id });
      await hooks.afterDelete?.(row);
      return true;
    },
  };
}

export function accountRepository(ctx: TableContext): AccountRepository {
  const table = new Table<Account>(ctx, { name: 'accounts', numericId: false, global: true });
  return {
    insert: (account) => table.insert(null, account),
    get: (id) => table.get(null, id),
    async update(account) {
      const saved = await table.put(null, account.id, account);
      if (!saved) throw new NotFoundError(`account ${account.id} does not exist`);
      return saved;
    },
    async listIds() {
      return (await table.where(null)).map((a) => a.id);
    },
  };
}

export function apiKeyRepository(ctx: TableContext): ApiKeyRepository {
  const table = new Table<ApiKey>(ctx, { name: 'api_keys', numericId: false, columns: { prefix: (k) => k.prefix } });
  return {
    insert: (key) => table.insert(key.accountId, key),
    findByPrefix: (prefix) => table.where(null, { prefix }),
    list: (accountId) => table.where(accountId),
    async revoke(accountId, id, at) {
      const key = await table.get(accountId, id);
      if (!key) return false;
      if (key.revokedAt === null) await table.put(accountId, id, { ...key, revokedAt: at });
      return true;
    },
    async touch(id, at) {
      const [key] = await table.where(null, { id });
      if (key) await table.put(key.accountId, id, { ...key, lastUsedAt: at });
    },
  };
}

export function checkRepository(ctx: TableContext): CheckRepository {
  const table = new Table<Check>(ctx, {
    name: 'checks',
    numericId: false,
    columns: {
      group_id: (c) => c.groupId,
      ping_token: (c) => (c.checkType === 'HEARTBEAT' ? c.heartbeat.pingToken : null),
      name: (c) => c.name,
      check_type: (c) => c.checkType,
      created_at: (c) => c.created_at,
    },
  });
  // The hottest read of the API (GET /v1/checks/{id}) is the table's by-id read (docRepository's
  // get): one statement prepared per connection, the parsed document becoming the check itself.
  return {
    ...docRepository<Check, string>(table),
    listByGroup: (accountId, groupId) => table.where(accountId, { group_id: groupId }),
    listByIds: (accountId, ids) => (ids.length ? table.where(accountId, { id: ids }) : Promise.resolve([])),
    listAll: (accountId) => table.where(accountId),
    async listSummaries(accountId) {
      // Columns of their own, so thousands of documents are neither read nor parsed.
      return table.run(async () => {
        const rows = await table.readQuery(accountId)
          .select('id', 'name', { checkType: 'check_type' }, 'created_at')
          .orderBy('seq', 'asc');
        return rows.map((r: Record<string, unknown>) => ({
          id: String(r.id), name: String(r.name), checkType: String(r.checkType), created_at: String(r.created_at),
        }));
      });
    },
    async scan(afterId, limit) {
      return table.run(async () => {
        const q = table.reader(table.table).orderBy('id', 'asc').limit(limit);
        if (afterId !== null) q.where('id', '>', afterId);
        return (await q).map((r: Record<string, unknown>) => table.fromRow(r));
      });
    },
    async findByPingToken(token) {
      const [found] = await table.where(null, { ping_token: token });
      return found?.checkType === 'HEARTBEAT' ? found : null;
    },
    async findAnywhere(id) {
      return (await table.where(null, { id }))[0] ?? null;
    },
  };
}

export function checkGroupRepository(ctx: TableContext): CheckGroupRepository {
  const table = new Table<CheckGroup>(ctx, { name: 'check_groups', numericId: true });
  return {
    ...docRepository<CheckGroup, number>(table),
    listAll: (accountId) => table.where(accountId),
    findAnywhere: async (id) => (Number.isSafeInteger(id) ? ((await table.where(null, { id }))[0] ?? null) : null),
  };
}

export function alertChannelRepository(ctx: TableContext): AlertChannelRepository {
  const table = new Table<AlertChannel>(ctx, { name: 'alert_channels', numericId: true });
  return { ...docRepository<AlertChannel, number>(table), listAll: (accountId) => table.where(accountId) };
}

/**
 * When a window is over for good, as its `ends_ms` column keeps it; null (read for every run, as
 * one that repeats for ever) where that cannot be worked out, such as a time zone this runtime no
 * longer knows.
 */
export function windowEndsMs(window: MaintenanceWindow): number | null {
  try {
    return maintenanceWindowEndMs(window);
  } catch {
    return null;
  }
}

export function maintenanceWindowRepository(ctx: TableContext): MaintenanceWindowRepository {
  const table = new Table<MaintenanceWindow>(ctx, { name: 'maintenance_windows', numericId: true, columns: { ends_ms: windowEndsMs } });
  return {
    ...docRepository<MaintenanceWindow, number>(table),
    listAll: (accountId) => table.where(accountId),
    // Read for every run: the windows whose repeats have ended are left in the table, unparsed.
    listInForce: (accountId, at) => table.whereFixed(accountId, 'ends_ms is null or ends_ms > ?', [at.getTime()]),
  };
}

export function snippetRepository(ctx: TableContext): SnippetRepository {
  return docRepository<Snippet, number>(new Table<Snippet>(ctx, { name: 'snippets', numericId: true }));
}

export function clientCertificateRepository(ctx: TableContext): ClientCertificateRepository {
  const table = new Table<ClientCertificate>(ctx, { name: 'client_certificates', numericId: false, columns: { host: (c) => c.host } });
  const repo = docRepository<ClientCertificate, string>(table);
  return {
    insert: repo.insert, get: repo.get, list: repo.list, delete: repo.delete,
    // Along the (account, host) index: an HTTPS run reads its host's certificates, not the account's.
    listByHosts: (accountId, hosts) => (hosts.length === 0 || hosts.some((h) => h.includes('\0'))
      ? Promise.resolve([])
      : table.whereFixed(accountId, `host in (${hosts.map(() => '?').join(', ')})`, hosts)),
  };
}

type Target = { checkId: string } | { groupId: number };
const targetFilter = (t: Target) => ('checkId' in t ? { check_id: t.checkId } : { group_id: t.groupId });

export function alertSubscriptionRepository(ctx: TableContext): AlertSubscriptionRepository {
  const table = new Table<AlertSubscription>(ctx, {
    name: 'alert_subscriptions',
    numericId: true,
    columns: { alert_channel_id: (s) => s.alertChannelId, check_id: (s) => s.checkId, group_id: (s) => s.groupId },
  });
  const insertAll = async (accountId: string, subs: Omit<AlertSubscription, 'id' | 'accountId'>[]) => {
    const out: AlertSubscription[] = [];
    for (const s of subs) out.push(await table.insert(accountId, s));
    return out;
  };
  return {
    insert: (accountId, s) => table.insert(accountId, s),
    listByChannel: (accountId, alertChannelId) => table.where(accountId, { alert_channel_id: alertChannelId }),
    listByCheck: (accountId, checkId) => table.where(accountId, { check_id: checkId }),
    listByGroup: (accountId, groupId) => table.where(accountId, { group_id: groupId }),
    listAll: (accountId) => table.where(accountId),
    async replaceForChannel(accountId, alertChannelId, subs) {
      await table.remove(accountId, { alert_channel_id: alertChannelId });
      return insertAll(accountId, subs.map((s) => ({ ...s, alertChannelId })));
    },
    async replaceForTarget(accountId, target, subs) {
      await table.remove(accountId, targetFilter(target));
      const fields = 'checkId' in target ? { checkId: target.checkId, groupId: null } : { checkId: null, groupId: target.groupId };
      return insertAll(accountId, subs.map((s) => ({ ...s, ...fields })));
    },
    deleteByChannel: (accountId, alertChannelId) => table.remove(accountId, { alert_channel_id: alertChannelId }),
    deleteByTarget: (accountId, target) => table.remove(accountId, targetFilter(target)),
  };
}
