import type { Check } from '../model/check.js';
import type { CheckGroup } from '../model/check-group.js';
import type { CheckResult } from '../model/check-result.js';
import type { CheckStatus } from '../model/check-status.js';
import type { Dashboard } from '../model/dashboard.js';
import type { StatusPage, StatusPageIncidentEntry } from '../model/status-page.js';
import { dailyUptime, overallUptime, type DownSpan } from '../rules/uptime.js';
import type { ServiceDeps } from './deps.js';
import {
  PUBLIC_CHECK_STATES, type BadgeView, type DashboardView, type PublicCheck, type PublicCheckHour, type PublicCheckState,
  type PublicIncident, type PublicPageOptions, type PublicService, type ServiceState, type StatusPageView,
} from './public-page-views.js';
import type { StatusPageIncidentService } from './status-page-incidents.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export { PUBLIC_CHECK_STATES } from './public-page-views.js';
export type {
  BadgeView, DashboardView, PublicCheck, PublicCheckHour, PublicCheckState, PublicDashboard, PublicIncident, PublicIncidentUpdate,
  PublicPageOptions, PublicService, PublicStatusPage, ServiceState, StatusPageView,
} from './public-page-views.js';

function stateOf(check: Check, status: CheckStatus | undefined, group?: CheckGroup): PublicCheckState {
  if (!check.activated || group?.activated === false) return 'PAUSED';
  if (!status || !status.lastCheckRunId) return 'PENDING';
  if (status.hasFailures || status.hasErrors) return 'FAILING';
  return status.isDegraded ? 'DEGRADED' : 'PASSING';
}

const rank = (s: PublicCheckState) => PUBLIC_CHECK_STATES.indexOf(s);

/**
 * When an incident had the service down, from its updates in the order they were posted: a
 * RESOLVED update closes a span, any other opens one; a span still open runs on (end null). An
 * incident resolved and later reopened is down only while open. Times are the updates' public
 * dates, which a writer may set out of order, so a span never ends before it starts.
 */
function downSpans(entry: StatusPageIncidentEntry): DownSpan[] {
  const spans: DownSpan[] = [];
  let open: number | null = null;
  for (const u of [...entry.incidentUpdates].reverse()) {
    const at = Date.parse(u.publicIncidentUpdateDate);
    if (u.status === 'RESOLVED') {
      if (open !== null) spans.push({ start: open, end: Math.max(open, at) });
      open = null;
    } else open ??= at;
  }
  if (open !== null) spans.push({ start: open, end: null });
  return spans;
}
const responseTime = (fn: 'avg' | 'p50' | 'p95' | 'p99') => ({ name: fn, field: 'responseTime', fn });
const round = (n: number | null | undefined) => (n === null || n === undefined ? null : Math.round(n));

/** A check on a dashboard: it carries one of the tags (all of them with the AND operator); no tags shows every check. */
export function dashboardShows(dashboard: Pick<Dashboard, 'tags' | 'useTagsAndOperator'>, check: Check, group: CheckGroup | undefined): boolean {
  if (dashboard.tags.length === 0) return true;
  const tags = new Set([...check.tags, ...(group?.tags ?? [])]);
  return dashboard.useTagsAndOperator ? dashboard.tags.every((t) => tags.has(t)) : dashboard.tags.some((t) => tags.has(t));
}

/**
 * What the public pages (dashboards, status pages, badges) show. Nothing here is an API shape: the
 * HTTP adapter renders it. Reads address a page by its public name and never cross into another account.
 */
export class PublicPageService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly statusPageIncidents: StatusPageIncidentService,
    private readonly options: PublicPageOptions = {},
  ) {}

  private get storage() {
    return this.deps.storage;
  }

  /** Days of history a status page shows. */
  get uptimeDays(): number {
    return this.options.uptimeDays ?? 90;
  }

  /**
   * The checks of a dashboard with their state and figures of the last 24 hours. `page` (from 1,
   * kept within the pages there are) asks for one page of a dashboard that paginates: the figures
   * of that page's checks alone are worked out.
   */
  async dashboardView(dashboard: Dashboard, options: { hours?: boolean; page?: number } = {}): Promise<DashboardView> {
    const now = this.deps.clock.now();
    const { accountId, keys: _keys, ...publicFields } = dashboard;
    const [checks, groups, statuses] = await Promise.all([
      this.storage.checks.listAll(accountId),
      this.storage.checkGroups.listAll(accountId),
      this.storage.checkStatuses.list(accountId),
    ]);
    const groupById = new Map(groups.map((g) => [g.id, g]));
    const statusById = new Map(statuses.map((s) => [s.checkId, s]));
    const groupOf = (c: Check) => (c.groupId === null ? undefined : groupById.get(c.groupId));
    const shown = checks.filter((c) => dashboardShows(dashboard, c, groupOf(c)));
    const stateById = new Map(shown.map((c) => [c.id, stateOf(c, statusById.get(c.id), groupOf(c))]));
    const counts = Object.fromEntries(PUBLIC_CHECK_STATES.map((s) => [s, 0])) as Record<PublicCheckState, number>;
    for (const state of stateById.values()) counts[state]++;
    shown.sort((a, b) => rank(stateById.get(a.id)!) - rank(stateById.get(b.id)!) || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    const perPage = dashboard.paginate && options.page !== undefined ? (dashboard.checksPerPage ?? 15) : Math.max(shown.length, 1);
    const pages = Math.max(1, Math.ceil(shown.length / perPage));
    const page = Math.min(Math.max(Math.floor(options.page ?? 1), 1), pages);
    const onPage = shown.slice((page - 1) * perPage, page * perPage);
    return {
      dashboard: publicFields,
      checks: await this.publicChecks(accountId, onPage, statusById, groupById, now, options.hours ?? dashboard.expandChecks),
      page,
      pages,
      counts,
      incidents: dashboard.enableIncidents ? await this.dashboardIncidents(accountId, dashboard.id, now) : [],
      generatedAt: now.toISOString(),
    };
  }

  private async publicChecks(
    accountId: string,
    checks: Check[],
    statusById: Map<string, CheckStatus>,
    groupById: Map<number, CheckGroup>,
    now: Date,
    hours: boolean,
  ): Promise<PublicCheck[]> {
    if (checks.length === 0) return [];
    // The figures cover exactly the last 24 hours; the hourly bars, the 24 clock hours up to this one.
    const to = new Date(now.getTime() + 1);
    const from = new Date(now.getTime() - DAY_MS);
    const hoursTo = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
    const hoursFrom = new Date(hoursTo.getTime() - DAY_MS);
    const checkIds = checks.map((c) => c.id);
    const [whole, hourly] = await Promise.all([
      this.storage.checkResults.aggregate(accountId, { checkIds, from, to, measures: (['avg', 'p95', 'p99'] as const).map(responseTime) }),
      hours
        ? this.storage.checkResults.aggregate(accountId, { checkIds, from: hoursFrom, to: hoursTo, bucketMs: HOUR_MS, measures: [responseTime('p50')] })
        : Promise.resolve([]),
    ]);
    const wholeById = new Map(whole.map((r) => [r.checkId, r]));
    const hoursById = new Map<string, Map<string, Omit<PublicCheckHour, 'start'>>>();
    for (const r of hourly) {
      const m = hoursById.get(r.checkId) ?? new Map();
      m.set(new Date(r.bucketStart).toISOString(), { runs: r.count, failures: r.failures, p50: round(r.values.p50) });
      hoursById.set(r.checkId, m);
    }
    return checks.map((c) => {
      const status = statusById.get(c.id);
      const agg = wholeById.get(c.id);
      const byHour = hoursById.get(c.id);
      return {
        id: c.id,
        name: c.name,
        checkType: c.checkType,
        state: stateOf(c, status, c.groupId === null ? undefined : groupById.get(c.groupId)),
        groupName: c.groupId === null ? null : (groupById.get(c.groupId)?.name ?? null),
        tags: c.tags,
        avg: round(agg?.values.avg),
        p95: round(agg?.values.p95),
        p99: round(agg?.values.p99),
        successRatio: agg && agg.count > 0 ? Math.round(((agg.count - agg.failures) / agg.count) * 10_000) / 100 : null,
        runs24h: agg?.count ?? 0,
        lastRunAt: status?.lastCheckRunId ? (status.updated_at ?? status.created_at) : null,
        lastRunLocation: status?.lastRunLocation ?? null,
        hours: hours
          ? Array.from({ length: 24 }, (_, i) => {
              const start = new Date(hoursFrom.getTime() + i * HOUR_MS).toISOString();
              return { start, ...(byHour?.get(start) ?? { runs: 0, failures: 0, p50: null }) };
            })
          : [],
      };
    });
  }

  private async dashboardIncidents(accountId: string, dashboardId: number, now: Date): Promise<PublicIncident[]> {
    const keepFor = this.options.incidentHistoryMs ?? 7 * DAY_MS;
    const { incidents: store } = this.storage;
    const since = new Date(now.getTime() - keepFor);
    const incidents = store.listCurrentByDashboard ? await store.listCurrentByDashboard(accountId, dashboardId, since) : await store.listByDashboard(accountId, dashboardId);
    const out: PublicIncident[] = [];
    for (const i of incidents) {
      const upcoming = i.startedAt !== null && Date.parse(i.startedAt) > now.getTime();
      const stopped = i.stoppedAt !== null && Date.parse(i.stoppedAt) <= now.getTime();
      const active = !upcoming && !stopped;
      if (stopped && now.getTime() - Date.parse(i.stoppedAt!) > keepFor) continue;
      const updates = (await this.storage.incidents.listUpdates(accountId, i.id)).reverse();
      out.push({
        id: i.id, name: i.name, impact: i.impact, status: updates[0]?.status ?? 'INVESTIGATING', active, upcoming,
        startedAt: i.startedAt, stoppedAt: i.stoppedAt, created_at: i.created_at,
        updates: updates.map((u) => ({ id: u.id, status: u.status, description: u.description, created_at: u.created_at })),
      });
    }
    const order = (i: PublicIncident) => (i.active ? 0 : i.upcoming ? 1 : 2);
    return out.sort((a, b) => order(a) - order(b) || b.created_at.localeCompare(a.created_at));
  }

  /** A check of a dashboard that links to its runs, with its newest final results; null when the dashboard does not show it. */
  async dashboardCheckRuns(dashboard: Dashboard, checkId: string, limit = 25): Promise<{ check: PublicCheck; results: CheckResult[] } | null> {
    if (!dashboard.showCheckRunLinks) return null;
    const check = await this.storage.checks.get(dashboard.accountId, checkId);
    if (!check) return null;
    const group = check.groupId === null ? undefined : ((await this.storage.checkGroups.get(dashboard.accountId, check.groupId)) ?? undefined);
    if (!dashboardShows(dashboard, check, group)) return null;
    const status = await this.storage.checkStatuses.get(dashboard.accountId, check.id);
    const groups = new Map(group ? [[group.id, group]] : []);
    const [view] = await this.publicChecks(dashboard.accountId, [check], new Map(status ? [[check.id, status]] : []), groups, this.deps.clock.now(), true);
    const page = await this.storage.checkResults.listByCheck(dashboard.accountId, check.id, { limit, offset: 0, resultType: 'FINAL', countTotal: false });
    return { check: view!, results: page.items };
  }

  /** A status page by its id or its url; an id is looked up first, so no url can stand in for another page's id. */
  async findStatusPage(idOrUrl: string): Promise<StatusPage | null> {
    return (await this.storage.statusPages.findAnywhere(idOrUrl)) ?? (await this.storage.statusPages.findByUrl(idOrUrl.toLowerCase()));
  }

  /** Cards of services with their state and daily uptime, and the incidents on them. */
  async statusPageView(page: StatusPage): Promise<StatusPageView> {
    const now = this.deps.clock.now();
    const days = this.uptimeDays;
    const cutoff = now.getTime() - days * DAY_MS;
    const { accountId, cards, ...publicFields } = page;
    const serviceIds = new Set(cards.flatMap((c) => c.serviceIds));
    const services = new Map((await this.storage.services.listByIds(accountId, [...serviceIds])).map((s) => [s.id, s]));

    // Incidents newest first, down to the oldest day shown; only those touching this page's services.
    const entries: StatusPageIncidentEntry[] = [];
    const serviceIdsOf = new Map<string, string[]>();
    for (const i of await this.statusPageIncidents.current(accountId, new Date(cutoff))) {
      if (!i.serviceIds.some((id) => serviceIds.has(id))) continue;
      entries.push(await this.statusPageIncidents.toEntry(accountId, i));
      serviceIdsOf.set(i.id, i.serviceIds);
    }

    const publicServices = new Map<string, PublicService>();
    for (const [id, service] of services) {
      const mine = entries.filter((e) => serviceIdsOf.get(e.id)!.includes(id));
      const open = mine.filter((e) => e.status !== 'RESOLVED');
      const state: ServiceState = open.some((e) => e.status !== 'MAINTENANCE') ? 'DISRUPTED' : open.length ? 'MAINTENANCE' : 'OPERATIONAL';
      // Planned maintenance (an incident opened as MAINTENANCE) is not downtime.
      const spans = mine.filter((e) => e.incidentUpdates.at(-1)?.status !== 'MAINTENANCE').flatMap(downSpans);
      const since = Date.parse(service.created_at);
      const history = dailyUptime(spans, { days, now, since });
      publicServices.set(id, { id, name: service.name, state, uptime: overallUptime(history, { now, since }), days: history });
    }
    const worst = [...publicServices.values()].map((s) => s.state);
    return {
      page: publicFields,
      state: worst.includes('DISRUPTED') ? 'DISRUPTED' : worst.includes('MAINTENANCE') ? 'MAINTENANCE' : 'OPERATIONAL',
      cards: cards.map((c) => ({ id: c.id, name: c.name, services: c.serviceIds.flatMap((id) => publicServices.get(id) ?? []) })),
      activeIncidents: entries.filter((e) => e.status !== 'RESOLVED'),
      pastIncidents: entries.filter((e) => e.status === 'RESOLVED').slice(0, this.options.pastIncidents ?? 20),
      generatedAt: now.toISOString(),
    };
  }

  /**
   * Of these checks, those that a public (not private) dashboard of the account shows. A badge
   * publishes only what the account already publishes, so an id alone reveals nothing else.
   */
  private async published(accountId: string, checks: Check[], group: CheckGroup | null): Promise<Check[]> {
    if (checks.length === 0) return [];
    const dashboards = (await this.storage.dashboards.list(accountId, { limit: 10_000, offset: 0 })).items.filter((d) => !d.isPrivate);
    return checks.filter((c) => dashboards.some((d) => dashboardShows(d, c, group ?? undefined)));
  }

  /** A check's badge: null unless a public dashboard of its account shows the check. */
  async checkBadge(checkId: string): Promise<BadgeView | null> {
    const check = await this.storage.checks.findAnywhere(checkId);
    if (!check) return null;
    const group = check.groupId === null ? null : await this.storage.checkGroups.get(check.accountId, check.groupId);
    if ((await this.published(check.accountId, [check], group)).length === 0) return null;
    return this.badge(check.accountId, [check], group?.activated === false);
  }

  /**
   * A group's badge: the worst state of its active checks that public dashboards show, their
   * average response time; null when a public dashboard shows none of its checks.
   */
  async groupBadge(groupId: number): Promise<BadgeView | null> {
    const group = await this.storage.checkGroups.findAnywhere(groupId);
    if (!group) return null;
    const checks = await this.published(group.accountId, await this.storage.checks.listByGroup(group.accountId, group.id), group);
    if (checks.length === 0) return null;
    return this.badge(group.accountId, checks, group.activated === false);
  }

  private async badge(accountId: string, checks: Check[], paused = false): Promise<BadgeView> {
    if (paused) return { state: 'PAUSED', responseTime: null };
    const active = checks.filter((c) => c.activated);
    if (checks.length > 0 && active.length === 0) return { state: 'PAUSED', responseTime: null };
    // The badge's own checks' statuses, each by id: not every status of the account.
    const statuses = new Map<string, CheckStatus>();
    for (const status of await Promise.all(active.map((c) => this.storage.checkStatuses.get(accountId, c.id)))) if (status) statuses.set(status.checkId, status);
    const states = active.map((c) => stateOf(c, statuses.get(c.id)));
    const state = states.length ? states.reduce((a, b) => (rank(b) < rank(a) ? b : a)) : 'PENDING';
    const now = this.deps.clock.now();
    const rows = active.length
      ? await this.storage.checkResults.aggregate(accountId, {
          checkIds: active.map((c) => c.id), from: new Date(now.getTime() - DAY_MS), to: new Date(now.getTime() + 1),
          measures: [{ name: 'sum', field: 'responseTime', fn: 'sum' }],
        })
      : [];
    const count = rows.reduce((n, r) => n + r.count, 0);
    const sum = rows.reduce((n, r) => n + (r.values.sum ?? 0), 0);
    return { state, responseTime: count > 0 ? Math.round(sum / count) : null };
  }
}
