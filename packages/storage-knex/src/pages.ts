import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import {
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

export function incidentRepository(ctx: TableContext): IncidentRepository {
  const table = new DocTable<Incident>(ctx, { name: 'incidents', numericId: false, columns: { dashboard_id: (i) => i.dashboardId } });
  const updates = new DocTable<IncidentUpdateRecord>(ctx, {
    name: 'incident_updates', numericId: false, columns: { incident_id: (u) => u.incidentId },
  });
  const kids = children(table as unknown as DocTable<{ id: string; accountId: string }>, updates);
  return {
    ...docRepository<Incident, string>(table, { afterDelete: (row) => kids.removeOf(row) }),
    listByDashboard: (accountId, dashboardId) => table.where(accountId, { dashboard_id: dashboardId }),
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

/** Up to `limit` rows after the one with id `afterId` (from the start when null; none when unknown). */
function after<T extends { id: string }>(rows: T[], afterId: string | null, limit: number): T[] {
  const start = afterId === null ? 0 : rows.findIndex((r) => r.id === afterId) + 1;
  if (start === 0 && afterId !== null) return [];
  return rows.slice(start, start + Math.max(0, limit));
}

export function serviceRepository(ctx: TableContext): ServiceRepository {
  const table = new DocTable<Service>(ctx, { name: 'services', numericId: false });
  return {
    ...docRepository<Service, string>(table),
    listAfter: async (accountId, afterId, limit) => after(await table.where(accountId), afterId, limit),
    listByIds: (accountId, ids) => (ids.length ? table.where(accountId, { id: ids }) : Promise.resolve([])),
  };
}

export function statusPageIncidentRepository(ctx: TableContext): StatusPageIncidentRepository {
  const table = new DocTable<StatusPageIncident>(ctx, {
    name: 'status_page_incidents', numericId: false, columns: { created_ms: (i) => Date.parse(i.created_at) },
  });
  const updates = new DocTable<StatusPageIncidentUpdate>(ctx, {
    name: 'status_page_incident_updates', numericId: false, columns: { incident_id: (u) => u.incidentId },
  });
  const kids = children(table as unknown as DocTable<{ id: string; accountId: string }>, updates);
  return {
    ...docRepository<StatusPageIncident, string>(table, { afterDelete: (row) => kids.removeOf(row) }),
    async listAfter(accountId, afterId, limit) {
      const rows = (await table.where(accountId)).map((row, index) => ({ row, index }));
      rows.sort((a, b) => Date.parse(b.row.created_at) - Date.parse(a.row.created_at) || b.index - a.index);
      return after(rows.map((r) => r.row), afterId, limit);
    },
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
