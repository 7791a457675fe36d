import { parse } from '../model/parse.js';
import type { CursorPage } from '../model/primitives.js';
import { ServiceCreateSchema, ServiceListQuerySchema, ServiceUpdateSchema, type ServiceResponse } from '../model/status-page.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, stringId } from './support.js';

/** The services that status pages show in their cards. */
export class ServiceCatalog {
  constructor(private readonly deps: ServiceDeps) {}

  async create(accountId: string, body: unknown): Promise<ServiceResponse> {
    const { name } = parse(ServiceCreateSchema, body);
    return this.deps.storage.services.insert(accountId, { id: this.deps.ids.uuid(), name, created_at: nowIso(this.deps), updated_at: null });
  }

  async get(accountId: string, rawId: unknown): Promise<ServiceResponse> {
    return found(await this.deps.storage.services.get(accountId, stringId(rawId)), 'Service');
  }

  /** GET /v1/status-pages/services: a cursor list; with paginated=false, every service at once. */
  async list(accountId: string, rawQuery: unknown): Promise<CursorPage<ServiceResponse>> {
    const q = parse(ServiceListQuerySchema, rawQuery ?? {}, 'query');
    if (!q.paginated) {
      const all = await this.deps.storage.services.listAfter(accountId, null, Number.MAX_SAFE_INTEGER);
      return { length: all.length, entries: all, nextId: null };
    }
    // One more than asked tells whether a next page exists.
    const rows = await this.deps.storage.services.listAfter(accountId, q.nextId ?? null, q.limit + 1);
    const entries = rows.slice(0, q.limit);
    return { length: entries.length, entries, nextId: rows.length > q.limit ? entries.at(-1)!.id : null };
  }

  async update(accountId: string, rawId: unknown, body: unknown): Promise<ServiceResponse> {
    const stored = await this.get(accountId, rawId);
    const { name } = parse(ServiceUpdateSchema, body);
    const { accountId: _a, ...rest } = stored;
    return found(await this.deps.storage.services.update(accountId, stored.id, { ...rest, name, updated_at: nowIso(this.deps) }), 'Service');
  }

  async delete(accountId: string, rawId: unknown): Promise<void> {
    if (!(await this.deps.storage.services.delete(accountId, stringId(rawId)))) found(null, 'Service');
  }
}
