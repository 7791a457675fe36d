import { createHash, timingSafeEqual } from 'node:crypto';
import { ConflictError } from '../errors.js';
import {
  DashboardCreateSchema,
  DashboardUpdateSchema,
  type Dashboard,
  type DashboardKeyRecord,
  type DashboardResponse,
} from '../model/dashboard.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, mapPage, mergeDefined, numericId, pageOptions, stringId } from './support.js';

function maskKey(key: string): string {
  return `${key.slice(0, 4)}...${key.slice(-4)}`;
}

const digest = (key: string) => createHash('sha256').update(key).digest();

export class DashboardService {
  constructor(private readonly deps: ServiceDeps) {}

  private get storage() {
    return this.deps.storage;
  }

  private toResponse(d: Dashboard): DashboardResponse {
    const { accountId: _a, keys, ...rest } = d;
    return {
      ...rest,
      keys: keys.map((k) => ({
        id: k.id,
        rawKey: this.deps.secretBox.decrypt(k.encryptedKey),
        maskedKey: k.maskedKey,
        created_at: k.created_at,
        updated_at: k.updated_at ?? k.created_at,
      })),
    };
  }

  private newKey(): DashboardKeyRecord {
    const raw = `dk_${this.deps.ids.token(24)}`;
    return { id: this.deps.ids.uuid(), encryptedKey: this.deps.secretBox.encrypt(raw), maskedKey: maskKey(raw), created_at: nowIso(this.deps), updated_at: null };
  }

  /** customUrl and customDomain are unique across all accounts. */
  private async assertFreeUrl(customUrl: string, ownId: number | null): Promise<void> {
    const taken = await this.storage.dashboards.findByCustomUrl(customUrl);
    if (taken && taken.id !== ownId) throw new ConflictError(`customUrl "${customUrl}" is already taken`);
  }

  private async assertFreeDomain(customDomain: string | null, ownId: number | null): Promise<void> {
    if (customDomain === null) return;
    const taken = await this.storage.dashboards.findByCustomDomain(customDomain);
    if (taken && taken.id !== ownId) throw new ConflictError(`customDomain "${customDomain}" is already taken`);
  }

  async create(accountId: string, body: unknown): Promise<DashboardResponse> {
    const input = parse(DashboardCreateSchema, body);
    const dashboardId = this.deps.ids.uuid();
    const customUrl = input.customUrl ?? `dashboard-${dashboardId.slice(0, 8)}`;
    await this.assertFreeUrl(customUrl, null);
    await this.assertFreeDomain(input.customDomain, null);
    const dashboard = await this.storage.dashboards.insert(accountId, {
      ...input,
      customUrl,
      dashboardId,
      keys: input.isPrivate ? [this.newKey()] : [],
      created_at: nowIso(this.deps),
      updated_at: null,
    });
    return this.toResponse(dashboard);
  }

  async update(accountId: string, rawId: unknown, body: unknown): Promise<DashboardResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(DashboardUpdateSchema, body);
    const { id, accountId: _a, dashboardId, keys, created_at, updated_at: _u, ...storedBody } = stored;
    const input = parse(DashboardCreateSchema, mergeDefined(storedBody, given));
    const customUrl = input.customUrl ?? stored.customUrl;
    if (customUrl !== stored.customUrl) await this.assertFreeUrl(customUrl, id);
    if (input.customDomain !== stored.customDomain) await this.assertFreeDomain(input.customDomain, id);
    const nextKeys = input.isPrivate && keys.length === 0 ? [this.newKey()] : keys;
    const updated = await this.storage.dashboards.update(accountId, id, {
      ...input, customUrl, id, dashboardId, keys: nextKeys, created_at, updated_at: nowIso(this.deps),
    });
    return this.toResponse(found(updated, 'Dashboard'));
  }

  async get(accountId: string, rawId: unknown): Promise<DashboardResponse> {
    return this.toResponse(await this.getRecord(accountId, rawId));
  }

  async getRecord(accountId: string, rawId: unknown): Promise<Dashboard> {
    return found(await this.storage.dashboards.get(accountId, numericId(rawId)), 'Dashboard');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<DashboardResponse>> {
    return mapPage(await this.storage.dashboards.list(accountId, pageOptions(rawQuery)), (d) => this.toResponse(d));
  }

  /** Deletes the dashboard and the incidents shown on it. */
  async delete(accountId: string, rawId: unknown): Promise<void> {
    const d = await this.getRecord(accountId, rawId);
    for (const incident of await this.storage.incidents.listByDashboard(accountId, d.id)) {
      await this.storage.incidents.delete(accountId, incident.id);
    }
    await this.storage.dashboards.delete(accountId, d.id);
  }

  async createKey(accountId: string, rawId: unknown): Promise<DashboardResponse> {
    const d = await this.getRecord(accountId, rawId);
    const { accountId: _a, ...rest } = d;
    const updated = await this.storage.dashboards.update(accountId, d.id, { ...rest, keys: [...d.keys, this.newKey()], updated_at: nowIso(this.deps) });
    return this.toResponse(found(updated, 'Dashboard'));
  }

  async deleteKey(accountId: string, rawId: unknown, rawKeyId: unknown): Promise<DashboardResponse> {
    const d = await this.getRecord(accountId, rawId);
    const keyId = stringId(rawKeyId, 'keyId');
    if (!d.keys.some((k) => k.id === keyId)) found(null, 'Dashboard key');
    const { accountId: _a, ...rest } = d;
    const updated = await this.storage.dashboards.update(accountId, d.id, { ...rest, keys: d.keys.filter((k) => k.id !== keyId), updated_at: nowIso(this.deps) });
    return this.toResponse(found(updated, 'Dashboard'));
  }

  /**
   * Whether a viewer's key opens a private dashboard. Digests of equal length are compared in
   * constant time, against every key, so neither the key's length nor which key matched leaks.
   */
  verifyKey(dashboard: Dashboard, presented: string | null | undefined): boolean {
    if (!dashboard.isPrivate) return true;
    if (!presented) return false;
    const given = digest(presented);
    let match = false;
    for (const k of dashboard.keys) match = timingSafeEqual(digest(this.deps.secretBox.decrypt(k.encryptedKey)), given) || match;
    return match;
  }

  /** A dashboard by its customUrl, for the public pages. */
  async findPublic(customUrl: string): Promise<Dashboard | null> {
    return this.storage.dashboards.findByCustomUrl(customUrl.toLowerCase());
  }

  /** A dashboard by its customDomain, for a host that routes that domain to the pages. */
  async findByDomain(customDomain: string): Promise<Dashboard | null> {
    return this.storage.dashboards.findByCustomDomain(customDomain.toLowerCase());
  }
}
