import { ConflictError, ValidationError } from '../errors.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import {
  StatusPageCreateSchema,
  StatusPageUpdateSchema,
  type StatusPage,
  type StatusPageCard,
  type StatusPageResponse,
} from '../model/status-page.js';
import { nowIso, type ServiceDeps } from './deps.js';
import type { StatusPageSubscriberService } from './status-page-subscribers.js';
import { found, mapPage, mergeDefined, pageOptions, stringId } from './support.js';

type CardInput = { name: string; serviceIds: string[] };

export class StatusPageService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly subscribers?: StatusPageSubscriberService,
  ) {}

  private get storage() {
    return this.deps.storage;
  }

  private async toResponse(page: StatusPage): Promise<StatusPageResponse> {
    const { accountId, cards, ...rest } = page;
    const ids = [...new Set(cards.flatMap((c) => c.serviceIds))];
    const services = new Map((await this.storage.services.listByIds(accountId, ids)).map((s) => [s.id, s]));
    return {
      ...rest,
      cards: cards.map((c) => ({
        id: c.id,
        name: c.name,
        created_at: c.created_at,
        updated_at: c.updated_at,
        services: c.serviceIds.flatMap((id) => (services.has(id) ? [services.get(id)!] : [])),
      })),
    };
  }

  /** Cards keep their ids by position, so an update does not churn them. */
  private async cards(accountId: string, input: CardInput[], previous: StatusPageCard[] = []): Promise<StatusPageCard[]> {
    const ids = [...new Set(input.flatMap((c) => c.serviceIds))];
    const known = new Set((await this.storage.services.listByIds(accountId, ids)).map((s) => s.id));
    const issues = input.flatMap((c, i) =>
      c.serviceIds.some((id) => !known.has(id)) ? [{ path: `cards.${i}.serviceIds`, message: 'names a service that is not in this account' }] : [],
    );
    if (issues.length) throw new ValidationError(issues);
    const now = nowIso(this.deps);
    return input.map((c, i) => {
      const old = previous[i];
      return old
        ? { ...old, name: c.name, serviceIds: c.serviceIds, updated_at: now }
        : { id: this.deps.ids.uuid(), name: c.name, serviceIds: c.serviceIds, created_at: now, updated_at: null };
    });
  }

  private async assertFreeUrl(url: string, ownId: string | null): Promise<void> {
    const taken = await this.storage.statusPages.findByUrl(url);
    if (taken && taken.id !== ownId) throw new ConflictError(`url "${url}" is already taken`);
  }

  async create(accountId: string, body: unknown): Promise<StatusPageResponse> {
    const input = parse(StatusPageCreateSchema, body);
    const cards = await this.cards(accountId, input.cards);
    await this.assertFreeUrl(input.url, null);
    const page = await this.storage.statusPages.insert(accountId, {
      ...input, cards, id: this.deps.ids.uuid(), created_at: nowIso(this.deps), updated_at: null,
    });
    return this.toResponse(page);
  }

  async update(accountId: string, rawId: unknown, body: unknown): Promise<StatusPageResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(StatusPageUpdateSchema, body);
    const { id, accountId: _a, cards: storedCards, created_at, updated_at: _u, ...storedBody } = stored;
    const input = parse(StatusPageCreateSchema, mergeDefined({ ...storedBody, cards: storedCards.map((c) => ({ name: c.name, serviceIds: c.serviceIds })) }, given));
    if (input.url !== stored.url) await this.assertFreeUrl(input.url, id);
    const cards = given.cards === undefined ? storedCards : await this.cards(accountId, input.cards, storedCards);
    const updated = await this.storage.statusPages.update(accountId, id, { ...input, cards, id, created_at, updated_at: nowIso(this.deps) });
    return this.toResponse(found(updated, 'Status page'));
  }

  async get(accountId: string, rawId: unknown): Promise<StatusPageResponse> {
    return this.toResponse(await this.getRecord(accountId, rawId));
  }

  private async getRecord(accountId: string, rawId: unknown): Promise<StatusPage> {
    return found(await this.storage.statusPages.get(accountId, stringId(rawId, 'statusPageId')), 'Status page');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<StatusPageResponse>> {
    return mapPage(await this.storage.statusPages.list(accountId, pageOptions(rawQuery)), (p) => this.toResponse(p));
  }

  /** Deleting a page forgets its subscribers. */
  async delete(accountId: string, rawId: unknown): Promise<void> {
    const id = stringId(rawId, 'statusPageId');
    if (!(await this.storage.statusPages.delete(accountId, id))) found(null, 'Status page');
    await this.subscribers?.forgetPage(accountId, id);
  }

  /** A status page by its url, for the public pages. */
  async findPublic(url: string): Promise<StatusPage | null> {
    return this.storage.statusPages.findByUrl(url.toLowerCase());
  }
}
