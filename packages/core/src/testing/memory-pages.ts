import { NotFoundError } from '../errors.js';
import type { Dashboard } from '../model/dashboard.js';
import type { Incident, IncidentUpdateRecord } from '../model/incident.js';
import { incidentClosedMs, type Service, type StatusPage, type StatusPageIncident, type StatusPageIncidentUpdate, type StatusPageSubscriber } from '../model/status-page.js';
import { ConflictError } from '../errors.js';
import type {
  DashboardRepository,
  IncidentRepository,
  ServiceRepository,
  StatusPageIncidentRepository,
  StatusPageRepository,
  StatusPageSubscriberRepository,
} from '../ports/storage.js';
import { repository, uniqueAcrossAccounts } from './memory-resources.js';
import { copy, type MemoryTable } from './memory-table.js';

export function dashboardRepository(table: MemoryTable<Dashboard>): DashboardRepository {
  const findBy = (match: (d: Dashboard) => boolean) => {
    const found = table.all().find(match);
    return found ? copy(found) : null;
  };
  return {
    ...repository<Dashboard, number>(table, { validate: uniqueAcrossAccounts(table, 'customUrl') }),
    async findByCustomUrl(customUrl) {
      return findBy((d) => d.customUrl === customUrl);
    },
    async findByCustomDomain(customDomain) {
      return findBy((d) => d.customDomain === customDomain);
    },
  };
}

/** Children (updates) that live and die with their parent row in the same account. */
function children<TChild extends { accountId: string; incidentId: string }>(
  parents: MemoryTable<{ id: string; accountId: string }>,
  table: MemoryTable<TChild>,
) {
  return {
    insert(accountId: string, update: Omit<TChild, 'accountId'>): TChild {
      if (!parents.owned(accountId, update.incidentId)) {
        throw new NotFoundError(`${parents.name}: ${update.incidentId} does not exist`);
      }
      return table.insert(accountId, update);
    },
    list(accountId: string, incidentId: string): TChild[] {
      return table.ofAccount(accountId, (u) => u.incidentId === incidentId);
    },
    removeOf(parent: { id: string; accountId: string }) {
      table.removeWhere((u) => u.accountId === parent.accountId && u.incidentId === parent.id);
    },
  };
}

export function incidentRepository(
  table: MemoryTable<Incident>,
  updates: MemoryTable<IncidentUpdateRecord>,
): IncidentRepository {
  const kids = children(table, updates);
  return {
    ...repository<Incident, string>(table, { afterDelete: (row) => kids.removeOf(row) }),
    async listByDashboard(accountId, dashboardId) {
      return table.ofAccount(accountId, (i) => i.dashboardId === dashboardId);
    },
    async listCurrentByDashboard(accountId, dashboardId, since) {
      return table.ofAccount(accountId, (i) => i.dashboardId === dashboardId && (!i.stoppedAt || Date.parse(i.stoppedAt) >= since.getTime()));
    },
    async insertUpdate(accountId, update) {
      return kids.insert(accountId, update);
    },
    async listUpdates(accountId, incidentId) {
      return kids.list(accountId, incidentId);
    },
  };
}

export function statusPageRepository(table: MemoryTable<StatusPage>): StatusPageRepository {
  return {
    ...repository<StatusPage, string>(table, { validate: uniqueAcrossAccounts(table, 'url') }),
    async findByUrl(url) {
      const found = table.all().find((p) => p.url === url);
      return found ? copy(found) : null;
    },
    async findAnywhere(id) {
      const found = table.peek(id);
      return found ? copy(found) : null;
    },
  };
}

/** Up to `limit` rows after the one with id `afterId` (from the start when null; none when unknown). */
function after<T extends { id: string }>(rows: T[], afterId: string | null, limit: number): T[] {
  const start = afterId === null ? 0 : rows.findIndex((r) => r.id === afterId) + 1;
  if (start === 0 && afterId !== null) return [];
  return rows.slice(start, start + Math.max(0, limit));
}

export function serviceRepository(table: MemoryTable<Service>): ServiceRepository {
  return {
    ...repository<Service, string>(table),
    async listAfter(accountId, afterId, limit) {
      return after(table.ofAccount(accountId), afterId, limit);
    },
    async listByIds(accountId, ids) {
      const wanted = new Set(ids);
      return table.ofAccount(accountId, (s) => wanted.has(s.id));
    },
  };
}

/** Incidents newest first; of two created at the same time, the later stored first. */
function newestFirst(rows: StatusPageIncident[]): StatusPageIncident[] {
  return rows
    .map((row, index) => ({ row, index }))
    .sort((a, b) => Date.parse(b.row.created_at) - Date.parse(a.row.created_at) || b.index - a.index)
    .map(({ row }) => row);
}

export function statusPageIncidentRepository(
  table: MemoryTable<StatusPageIncident>,
  updates: MemoryTable<StatusPageIncidentUpdate>,
): StatusPageIncidentRepository {
  const kids = children(table, updates);
  return {
    ...repository<StatusPageIncident, string>(table, { afterDelete: (row) => kids.removeOf(row) }),
    async listAfter(accountId, afterId, limit) {
      return after(newestFirst(table.ofAccount(accountId)), afterId, limit);
    },
    async listCurrent(accountId, since) {
      return newestFirst(table.ofAccount(accountId)).filter((i) => (incidentClosedMs(i) ?? Infinity) >= since.getTime());
    },
    async insertUpdate(accountId, update) {
      return kids.insert(accountId, update);
    },
    async listUpdates(accountId, incidentId) {
      return kids.list(accountId, incidentId);
    },
  };
}

export function statusPageSubscriberRepository(table: MemoryTable<StatusPageSubscriber>): StatusPageSubscriberRepository {
  const tokenTaken = uniqueAcrossAccounts(table, 'tokenHash');
  // An address subscribes to a page once.
  const validate = (row: StatusPageSubscriber) => {
    tokenTaken(row);
    if (table.all().some((o) => o.statusPageId === row.statusPageId && o.email === row.email && o.id !== row.id)) {
      throw new ConflictError(`${row.email} already subscribes to status page ${row.statusPageId}`);
    }
  };
  return {
    ...repository<StatusPageSubscriber, string>(table, { validate }),
    async listByPage(accountId, statusPageId, afterId, limit) {
      return table
        .ofAccount(accountId, (r) => r.statusPageId === statusPageId && (afterId === null || r.id > afterId))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, Math.max(0, limit));
    },
    async countByPage(accountId, statusPageId) {
      return table.all().filter((r) => r.accountId === accountId && r.statusPageId === statusPageId).length;
    },
    async findByEmail(accountId, statusPageId, email) {
      return table.ofAccount(accountId, (r) => r.statusPageId === statusPageId && r.email === email)[0] ?? null;
    },
    async findByTokenHash(tokenHash) {
      const found = table.all().find((r) => r.tokenHash === tokenHash);
      return found ? copy(found) : null;
    },
    async countPendingByEmail(email, sentSince) {
      const since = Date.parse(sentSince);
      return table.all().filter((r) => r.email === email && !r.confirmed && r.confirmationSentAt !== null && Date.parse(r.confirmationSentAt) >= since).length;
    },
    async countPendingByAccount(accountId, sentSince) {
      const since = Date.parse(sentSince);
      return table.all().filter((r) => r.accountId === accountId && !r.confirmed && r.confirmationSentAt !== null && Date.parse(r.confirmationSentAt) >= since).length;
    },
    async deletePending(accountId, statusPageId, sentBefore) {
      const before = Date.parse(sentBefore);
      return table.removeWhere((r) => r.accountId === accountId && r.statusPageId === statusPageId && !r.confirmed
        && (r.confirmationSentAt === null || Date.parse(r.confirmationSentAt) < before));
    },
    async deleteByPage(accountId, statusPageId) {
      return table.removeWhere((r) => r.accountId === accountId && r.statusPageId === statusPageId);
    },
  };
}
