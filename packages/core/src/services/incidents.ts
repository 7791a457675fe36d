import { ValidationError } from '../errors.js';
import {
  IncidentCreateSchema,
  IncidentUpdateCreateSchema,
  IncidentUpdateSchema,
  type Incident,
  type IncidentResponse,
} from '../model/incident.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import { applyIncidentUpdate } from '../rules/transitions.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, mapPage, mergeDefined, pageOptions, stringId, stripAccount } from './support.js';

/** A client-given stop before the start is refused (the times come from the body, not from updates). */
function assertOrder(times: { startedAt: string | null; stoppedAt: string | null }): void {
  if (times.startedAt && times.stoppedAt && Date.parse(times.stoppedAt) < Date.parse(times.startedAt)) {
    throw new ValidationError([{ path: 'stoppedAt', message: 'must not be before startedAt' }]);
  }
}

export class IncidentService {
  constructor(private readonly deps: ServiceDeps) {}

  private get storage() {
    return this.deps.storage;
  }

  private async toResponse(accountId: string, incident: Incident): Promise<IncidentResponse> {
    const updates = await this.storage.incidents.listUpdates(accountId, incident.id);
    return { ...stripAccount(incident), incidentUpdates: updates.map(stripAccount) };
  }

  /** POST /v1/incidents: exactly one update, on a dashboard of the account. */
  async create(accountId: string, body: unknown): Promise<IncidentResponse> {
    const input = parse(IncidentCreateSchema, body);
    if (!(await this.storage.dashboards.get(accountId, input.dashboardId))) {
      throw new ValidationError([{ path: 'dashboardId', message: 'is not a dashboard of this account' }]);
    }
    const first = input.incidentUpdates[0]!;
    const now = this.deps.clock.now();
    const times = applyIncidentUpdate({ startedAt: input.startedAt ?? null, stoppedAt: null }, first.status, now);
    // A stoppedAt the client gives wins over the one a RESOLVED first update would set.
    const stoppedAt = input.stoppedAt ?? times.stoppedAt;
    assertOrder({ startedAt: times.startedAt, stoppedAt });
    const incident = await this.storage.incidents.insert(accountId, {
      id: this.deps.ids.uuid(),
      name: input.name,
      impact: input.impact,
      dashboardId: input.dashboardId,
      startedAt: times.startedAt,
      stoppedAt,
      created_at: now.toISOString(),
      updated_at: null,
    });
    await this.storage.incidents.insertUpdate(accountId, {
      id: this.deps.ids.uuid(), incidentId: incident.id, status: first.status, description: first.description,
      created_at: now.toISOString(), updated_at: null,
    });
    return this.toResponse(accountId, incident);
  }

  async get(accountId: string, rawId: unknown): Promise<IncidentResponse> {
    return this.toResponse(accountId, await this.getRecord(accountId, rawId));
  }

  private async getRecord(accountId: string, rawId: unknown): Promise<Incident> {
    return found(await this.storage.incidents.get(accountId, stringId(rawId)), 'Incident');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<IncidentResponse>> {
    return mapPage(await this.storage.incidents.list(accountId, pageOptions(rawQuery)), (i) => this.toResponse(accountId, i));
  }

  async update(accountId: string, rawId: unknown, body: unknown): Promise<IncidentResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(IncidentUpdateSchema, body);
    const { accountId: _a, ...rest } = stored;
    const merged = mergeDefined(rest, given);
    if (given.startedAt !== undefined || given.stoppedAt !== undefined) assertOrder(merged);
    const updated = await this.storage.incidents.update(accountId, stored.id, { ...merged, updated_at: nowIso(this.deps) });
    return this.toResponse(accountId, found(updated, 'Incident'));
  }

  async delete(accountId: string, rawId: unknown): Promise<void> {
    if (!(await this.storage.incidents.delete(accountId, stringId(rawId)))) found(null, 'Incident');
  }

  /** POST /v1/incidents/{id}/updates: RESOLVED stops the incident, a later update reopens it. */
  async addUpdate(accountId: string, rawId: unknown, body: unknown): Promise<IncidentResponse> {
    const incident = await this.getRecord(accountId, rawId);
    const input = parse(IncidentUpdateCreateSchema, body);
    const now = this.deps.clock.now();
    await this.storage.incidents.insertUpdate(accountId, {
      id: this.deps.ids.uuid(), incidentId: incident.id, status: input.status, description: input.description,
      created_at: now.toISOString(), updated_at: null,
    });
    const { accountId: _a, ...rest } = incident;
    const moved = applyIncidentUpdate(rest, input.status, now);
    const updated = await this.storage.incidents.update(accountId, incident.id, { ...moved, updated_at: now.toISOString() });
    return this.toResponse(accountId, found(updated, 'Incident'));
  }
}
