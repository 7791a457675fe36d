import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import {
  incidentClosedMs,
  NotFoundError,
  type Dashboard,
  type DashboardRepository,
  type Incident,
  type IncidentRepository,
  type IncidentUpdateRecord,
  type Service,
  type ServiceRepository,
  type StatusPage,
  type StatusPageIncident,
  type StatusPageIncidentRepository,
  type StatusPageIncidentUpdate,
  type StatusPageRepository,
  type StatusPageSubscriber,
  type StatusPageSubscriberRepository,
} from '@vigil/core';
import { docRepository } from './resources.js';
import { DocTable, type TableContext } from './table.js';

export function dashboardRepository(ctx: TableContext): DashboardRepository {
  const table = new DocTable<Dashboard>(ctx, {
    name: 'dashboards',
    numericId: true,
    columns: { custom_url: (d) => d.customUrl, custom_domain: (d) => d.customDomain },
  });
  return {
    ...docRepository<Dashboard, number>(table),
    async findByCustomUrl(customUrl) {
      return (await table.where(null, { custom_url: customUrl }))[0] ?? null;
    },
    async findByCustomDomain(customDomain) {
      return (await table.where(null, { custom_domain: customDomain }))[0] ?? null;
    },
  };
}

/** Updates that live and die with their parent row in the same account. */
function children<TChild extends { id: string; accountId: string; incidentId: string }>(
  parents: DocTable<{ id: string; accountId: string }>,
  table: DocTable<TChild>,
) {
  return {
    async insert(accountId: string, update: Omit<TChild, 'accountId'>): Promise<TChild> {
      if (!(await parents.get(accountId, update.incidentId))) {
        throw new NotFoundError(`${parents.spec.name}: ${update.incidentId} does not exist`);
      }
      return table.insert(accountId, update);
    },
    list: (accountId: string, incidentId: string) => table.where(accountId, { incident_id: incidentId }),
    async removeOf(parent: { id: string; accountId: string }) {
      await table.remove(parent.accountId, { incident_id: parent.id });
    },
  };
}

/** When a dashboard incident stopped, as its `stopped_ms` column keeps it (null while it has no stop). */
export const incidentStoppedMs = (incident: Pick<Incident, 'stoppedAt'>): number | null => (incident.stoppedAt ? Date.parse(incident.stoppedAt) : null);

export function incidentRepository(ctx: TableContext): IncidentRepository {
  const table = new DocTable<Incident>(ctx, {
    name: 'incidents', numericId: false, columns: { dashboard_id: (i) => i.dashboardId, stopped_ms: incidentStoppedMs },
  });
  const updates = new DocTable<IncidentUpdateRecord>(ctx, {
    name: 'incident_updates', numericId: false, columns: { incident_id: (u) => u.incidentId },
  });
  const kids = children(table as unknown as DocTable<{ id: string; accountId: string }>, updates);
  return {
    ...docRepository<Incident, string>(table, { afterDelete: (row) => kids.removeOf(row) }),
    listByDashboard: (accountId, dashboardId) => table.where(accountId, { dashboard_id: dashboardId }),
    // Along the (account, dashboard) index; the incidents stopped before `since` are left unparsed.
    listCurrentByDashboard: (accountId, dashboardId, since) =>
      table.whereFixed(accountId, 'dashboard_id = ? and (stopped_ms is null or stopped_ms >= ?)', [dashboardId, since.getTime()]),
    insertUpdate: (accountId, update) => kids.insert(accountId, update),
    listUpdates: (accountId, incidentId) => kids.list(accountId, incidentId),
  };
}

export function statusPageRepository(ctx: TableContext): StatusPageRepository {
  const table = new DocTable<StatusPage>(ctx, { name: 'status_pages', numericId: false, columns: { url: (p) => p.url } });
  return {
    ...docRepository<StatusPage, string>(table),
    async findByUrl(url) {
      return (await table.where(null, { url }))[0] ?? null;
    },
    async findAnywhere(id) {
      return (await table.where(null, { id }))[0] ?? null;
    },
  };
}

/**
 * The account's rows after the row `afterId` (null: from the first), `limit` of them in the order
 * of `columns` (each descending or not; the last names one row): read from the cursor's row on
 * along an index in that order, never the account's rows before it. A cursor that is not a row
 * of the account gives none.
 */
function listAfter<T extends { id: string }>(table: DocTable<T>, accountId: string, afterId: string | null, limit: number, columns: [string, 'asc' | 'desc'][]): Promise<T[]> {
  return table.run(async () => {
    if (afterId !== null && afterId.includes('\0')) return [];
    const q = table.readQuery(accountId).orderBy(columns.map(([column, order]) => ({ column, order }))).limit(Math.max(0, Math.min(limit, 2 ** 31 - 1)));
    if (afterId !== null) {
      const [cursor] = (await table.readQuery(accountId).select(columns.map(([c]) => c)).where('id', afterId).limit(1)) as Record<string, unknown>[];
      if (!cursor) return [];
      // (a, b) after (x, y): a past x, or a at x and b past y; and so on for more columns. The
      // first column's bound alone as well, for the index to start from.
      const [first, firstOrder] = columns[0]!;
      q.where(first, firstOrder === 'desc' ? '<=' : '>=', cursor[first] as number);
      q.where((w) => {
        columns.forEach(([column, order], i) => {
          w.orWhere((term) => {
            for (const [earlier] of columns.slice(0, i)) term.where(earlier, cursor[earlier] as number);
            term.where(column, order === 'desc' ? '<' : '>', cursor[column] as number);
          });
        });
      });
    }
    return ((await q) as Record<string, unknown>[]).map((r) => table.fromRow(r));
  });
}

export function serviceRepository(ctx: TableContext): ServiceRepository {
  const table = new DocTable<Service>(ctx, { name: 'services', numericId: false });
  return {
    ...docRepository<Service, string>(table),
    listAfter: (accountId, afterId, limit) => listAfter(table, accountId, afterId, limit, [['seq', 'asc']]),
    listByIds: (accountId, ids) => (ids.length ? table.where(accountId, { id: ids }) : Promise.resolve([])),
  };
}

export function statusPageIncidentRepository(ctx: TableContext): StatusPageIncidentRepository {
  const table = new DocTable<StatusPageIncident>(ctx, {
    name: 'status_page_incidents', numericId: false, columns: { created_ms: (i) => Date.parse(i.created_at), closed_ms: incidentClosedMs },
  });
  const updates = new DocTable<StatusPageIncidentUpdate>(ctx, {
    name: 'status_page_incident_updates', numericId: false, columns: { incident_id: (u) => u.incidentId },
  });
  const kids = children(table as unknown as DocTable<{ id: string; accountId: string }>, updates);
  return {
    ...docRepository<StatusPageIncident, string>(table, { afterDelete: (row) => kids.removeOf(row) }),
    // Newest first along the (account, created) index; of two created at the same time, the later stored first.
    listAfter: (accountId, afterId, limit) => listAfter(table, accountId, afterId, limit, [['created_ms', 'desc'], ['seq', 'desc']]),
    // The open ones and those closed since, along the (account, closed) index, not every incident:
    // newest first, those created at the same time the later stored first (a stable sort of the
    // rows from the last stored on).
    listCurrent: async (accountId, since) =>
      (await table.whereFixed(accountId, 'closed_ms is null or closed_ms >= ?', [since.getTime()]))
        .reverse().sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at)),
    insertUpdate: (accountId, update) => kids.insert(accountId, update),
    listUpdates: (accountId, incidentId) => kids.list(accountId, incidentId),
  };
}

/** A page and an address as one fixed-length key (an address may be 254 characters long). */
const pageEmail = (statusPageId: string, email: string) => createHash('sha256').update(`${statusPageId}\n${email}`).digest('hex');
const emailHash = (email: string) => createHash('sha256').update(email).digest('hex');

export function statusPageSubscriberRepository(ctx: TableContext): StatusPageSubscriberRepository {
  const table = new DocTable<StatusPageSubscriber>(ctx, {
    name: 'status_page_subscribers',
    numericId: false,
    columns: {
      status_page_id: (r) => r.statusPageId,
      // Unique: an address subscribes to a page once, and a token belongs to one subscriber.
      page_email: (r) => pageEmail(r.statusPageId, r.email),
      token_hash: (r) => r.tokenHash,
      email_hash: (r) => emailHash(r.email),
      confirmed: (r) => r.confirmed,
      sent_ms: (r) => (r.confirmationSentAt === null ? null : Date.parse(r.confirmationSentAt)),
    },
  });
  const pending = (q: Knex.QueryBuilder) => q.where('confirmed', false);
  return {
    ...docRepository<StatusPageSubscriber, string>(table),
    listByPage: (accountId, statusPageId, afterId, limit) =>
      table.run(async () => {
        if (afterId !== null && afterId.includes('\0')) return [];
        const q = table.readQuery(accountId).where('status_page_id', statusPageId).orderBy('id', 'asc').limit(Math.max(0, Math.min(limit, 10_000)));
        if (afterId !== null) q.where('id', '>', afterId);
        return ((await q) as Record<string, unknown>[]).map((r) => table.fromRow(r));
      }),
    countByPage: (accountId, statusPageId) =>
      table.run(async () => {
        const [{ count }] = (await table.readQuery(accountId).where('status_page_id', statusPageId).count({ count: '*' })) as [{ count: number | string }];
        return Number(count);
      }),
    async findByEmail(accountId, statusPageId, email) {
      return (await table.where(accountId, { page_email: pageEmail(statusPageId, email) }))[0] ?? null;
    },
    async findByTokenHash(tokenHash) {
      return (await table.where(null, { token_hash: tokenHash }))[0] ?? null;
    },
    countPendingByEmail: (email, sentSince) =>
      table.run(async () => {
        const q = pending(table.readQuery(null).where('email_hash', emailHash(email)).where('sent_ms', '>=', Date.parse(sentSince)));
        const [{ count }] = (await q.count({ count: '*' })) as [{ count: number | string }];
        return Number(count);
      }),
    countPendingByAccount: (accountId, sentSince) =>
      table.run(async () => {
        const [{ count }] = (await pending(table.readQuery(accountId)).where('sent_ms', '>=', Date.parse(sentSince)).count({ count: '*' })) as [{ count: number | string }];
        return Number(count);
      }),
    deletePending: (accountId, statusPageId, sentBefore) =>
      table.run(async () => pending(table.query(accountId).where('status_page_id', statusPageId))
        .where((w) => w.whereNull('sent_ms').orWhere('sent_ms', '<', Date.parse(sentBefore)))
        .delete()),
    deleteByPage: (accountId, statusPageId) => table.remove(accountId, { status_page_id: statusPageId }),
  };
}
