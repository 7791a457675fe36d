import {
  MaintenanceWindowCreateSchema,
  MaintenanceWindowUpdateSchema,
  type MaintenanceWindow,
  type MaintenanceWindowResponse,
} from '../model/maintenance-window.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import { activeWindows, maintenanceEffect, type MaintenanceEffect, type MaintenanceTarget } from '../rules/maintenance.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, mapPage, mergeDefined, numericId, pageOptions, stripAccount } from './support.js';

export class MaintenanceWindowService {
  constructor(private readonly deps: ServiceDeps) {}

  async create(accountId: string, body: unknown): Promise<MaintenanceWindowResponse> {
    const input = parse(MaintenanceWindowCreateSchema, body);
    return stripAccount(await this.deps.storage.maintenanceWindows.insert(accountId, { ...input, created_at: nowIso(this.deps), updated_at: null }));
  }

  /** PUT /v1/maintenance-windows/{id}: name, startsAt, endsAt and repeatUnit are required. */
  async update(accountId: string, rawId: unknown, body: unknown): Promise<MaintenanceWindowResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(MaintenanceWindowUpdateSchema, body);
    const { id, accountId: _a, created_at, updated_at: _u, ...storedBody } = stored;
    const input = parse(MaintenanceWindowCreateSchema, mergeDefined(storedBody, given));
    const updated = await this.deps.storage.maintenanceWindows.update(accountId, id, { ...input, id, created_at, updated_at: nowIso(this.deps) });
    return stripAccount(found(updated, 'Maintenance window'));
  }

  async get(accountId: string, rawId: unknown): Promise<MaintenanceWindowResponse> {
    return stripAccount(await this.getRecord(accountId, rawId));
  }

  private async getRecord(accountId: string, rawId: unknown): Promise<MaintenanceWindow> {
    return found(await this.deps.storage.maintenanceWindows.get(accountId, numericId(rawId)), 'Maintenance window');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<MaintenanceWindowResponse>> {
    return mapPage(await this.deps.storage.maintenanceWindows.list(accountId, pageOptions(rawQuery)), stripAccount);
  }

  async delete(accountId: string, rawId: unknown): Promise<void> {
    if (!(await this.deps.storage.maintenanceWindows.delete(accountId, numericId(rawId)))) found(null, 'Maintenance window');
  }

  /** Whether the account's windows pause or silence a check at an instant. */
  async activeEffect(accountId: string, target: MaintenanceTarget, at: Date): Promise<MaintenanceEffect> {
    return maintenanceEffect(await this.inForce(accountId, at), target, at);
  }

  /** The account's windows in force at an instant, read once, as the effect on any check (a page of many checks asks each). */
  async effectsAt(accountId: string, at: Date): Promise<(target: MaintenanceTarget) => MaintenanceEffect> {
    const windows = activeWindows(await this.inForce(accountId, at), at);
    return (target) => maintenanceEffect(windows, target, at);
  }

  /** The windows that may be in force at `at`: those whose repeats have not ended, where the store can tell. */
  private inForce(accountId: string, at: Date): Promise<MaintenanceWindow[]> {
    const windows = this.deps.storage.maintenanceWindows;
    return windows.listInForce ? windows.listInForce(accountId, at) : windows.listAll(accountId);
  }
}
