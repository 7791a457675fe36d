import { parse } from '../model/parse.js';
import type { CursorPage } from '../model/primitives.js';
import {
  incidentClosedMs,
  StatusPageIncidentCreateSchema,
  StatusPageIncidentListQuerySchema,
  StatusPageIncidentUpdateCreateSchema,
  type StatusPageIncident,
  type StatusPageIncidentEntry,
  type StatusPageIncidentUpdate,
} from '../model/status-page.js';
import { ValidationError } from '../errors.js';
import type { ServiceDeps } from './deps.js';
import type { StatusPageSubscriberService } from './status-page-subscribers.js';
import { found, stringId } from './support.js';

/** Incidents published on status pages (the spec's read-only entries, and how they are written). */
export class StatusPageIncidentService {
  constructor(
    private readonly deps: ServiceDeps,
    /** Emails an update that asks to notify subscribers (absent: nobody is notified). */
    private readonly subscribers?: StatusPageSubscriberService,
  ) {}

  /**
   * Queues the update's emails to the pages' subscribers. A failure is logged, not thrown: the
   * update stands either way.
   */
  private async notify(accountId: string, incident: StatusPageIncident, update: StatusPageIncidentUpdate): Promise<void> {
    if (!this.subscribers || !update.notifySubscribers) return;
    try {
      await this.subscribers.notify(accountId, incident, update);
    } catch (err) {
      this.deps.logger.warn('status pages: could not queue the subscribers\' emails of an incident update', {
        accountId, incidentId: incident.id, error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  private get storage() {
    return this.deps.storage;
  }

  /**
   * The account's incidents open, or closed at or after `since`, newest first: from the store
   * where it can find them alone, else from every incident of the account (an incident opened
   * long ago may be open still).
   */
  async current(accountId: string, since: Date): Promise<StatusPageIncident[]> {
    const incidents = this.storage.statusPageIncidents;
    if (incidents.listCurrent) return incidents.listCurrent(accountId, since);
    const current: StatusPageIncident[] = [];
    for (let after: string | null = null; ;) {
      const batch = await incidents.listAfter(accountId, after, 100);
      current.push(...batch.filter((i) => (incidentClosedMs(i) ?? Infinity) >= since.getTime()));
      if (batch.length < 100) return current;
      after = batch.at(-1)!.id;
    }
  }

  /** The read-only entry of an incident: its services and updates, newest first. */
  async toEntry(accountId: string, incident: StatusPageIncident): Promise<StatusPageIncidentEntry> {
    const [services, updates] = await Promise.all([
      this.storage.services.listByIds(accountId, incident.serviceIds),
      this.storage.statusPageIncidents.listUpdates(accountId, incident.id),
    ]);
    return {
      name: incident.name,
      id: incident.id,
      services,
      incidentUpdates: [...updates].reverse().map((u) => ({
        description: u.description,
        id: u.id,
        status: u.status ?? 'INVESTIGATING',
        created_at: u.created_at,
        publicIncidentUpdateDate: u.publicIncidentUpdateDate ?? u.created_at,
        notifySubscribers: u.notifySubscribers,
      })),
      status: incident.status ?? 'INVESTIGATING',
      stoppedAt: incident.stoppedAt ?? null,
      created_at: incident.created_at,
      duration: Math.max(0, (incident.stoppedAt ? Date.parse(incident.stoppedAt) : this.deps.clock.now().getTime()) - Date.parse(incident.created_at)),
      updated_at: incident.updated_at,
    };
  }

  async create(accountId: string, body: unknown): Promise<StatusPageIncidentEntry> {
    const input = parse(StatusPageIncidentCreateSchema, body);
    const known = new Set((await this.storage.services.listByIds(accountId, input.serviceIds)).map((s) => s.id));
    const missing = input.serviceIds.findIndex((id) => !known.has(id));
    if (missing >= 0) throw new ValidationError([{ path: `serviceIds.${missing}`, message: 'is not a service of this account' }]);
    const now = this.deps.clock.now().toISOString();
    const status = input.incidentUpdate.status ?? 'INVESTIGATING';
    const incident = await this.storage.statusPageIncidents.insert(accountId, {
      id: this.deps.ids.uuid(), name: input.name, serviceIds: input.serviceIds, status,
      stoppedAt: status === 'RESOLVED' ? now : null, created_at: now, updated_at: null,
    });
    const update = await this.storage.statusPageIncidents.insertUpdate(accountId, {
      id: this.deps.ids.uuid(), incidentId: incident.id, description: input.incidentUpdate.description, status,
      notifySubscribers: input.incidentUpdate.notifySubscribers,
      publicIncidentUpdateDate: input.incidentUpdate.publicIncidentUpdateDate ?? now, created_at: now, updated_at: null,
    });
    await this.notify(accountId, incident, update);
    return this.toEntry(accountId, incident);
  }

  async addUpdate(accountId: string, rawId: unknown, body: unknown): Promise<StatusPageIncidentEntry> {
    const incident = found(await this.storage.statusPageIncidents.get(accountId, stringId(rawId)), 'Status page incident');
    const input = parse(StatusPageIncidentUpdateCreateSchema, body);
    const now = this.deps.clock.now().toISOString();
    const status = input.status ?? incident.status ?? 'INVESTIGATING';
    const update = await this.storage.statusPageIncidents.insertUpdate(accountId, {
      id: this.deps.ids.uuid(), incidentId: incident.id, description: input.description, status, notifySubscribers: input.notifySubscribers,
      publicIncidentUpdateDate: input.publicIncidentUpdateDate ?? now, created_at: now, updated_at: null,
    });
    const { accountId: _a, ...rest } = incident;
    // RESOLVED stops the clock; any later status reopens the incident (any status may follow any other).
    const stoppedAt = status === 'RESOLVED' ? (incident.status === 'RESOLVED' ? incident.stoppedAt ?? now : now) : null;
    const updated = found(await this.storage.statusPageIncidents.update(accountId, incident.id, { ...rest, status, stoppedAt, updated_at: now }), 'Status page incident');
    await this.notify(accountId, updated, update);
    return this.toEntry(accountId, updated);
  }

  /** One incident's entry (its services and updates). */
  async get(accountId: string, rawId: unknown): Promise<StatusPageIncidentEntry> {
    return this.toEntry(accountId, found(await this.storage.statusPageIncidents.get(accountId, stringId(rawId)), 'Status page incident'));
  }

  /** GET /v1/status-pages/incidents: newest first, by cursor. */
  async list(accountId: string, rawQuery: unknown): Promise<CursorPage<StatusPageIncidentEntry>> {
    const q = parse(StatusPageIncidentListQuerySchema, rawQuery ?? {}, 'query');
    const rows = await this.storage.statusPageIncidents.listAfter(accountId, q.nextId ?? null, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const entries = await Promise.all(page.map((i) => this.toEntry(accountId, i)));
    return { length: entries.length, entries, nextId: rows.length > q.limit ? page.at(-1)!.id : null };
  }
}
