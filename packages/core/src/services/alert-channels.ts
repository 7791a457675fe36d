import * as v from 'valibot';
import { ValidationError } from '../errors.js';
import {
  AlertChannelCreateSchema,
  AlertChannelSubscriptionsUpdateSchema,
  AlertChannelUpdateSchema,
  SECRET_CONFIG_FIELDS,
  type AlertChannel,
  type AlertChannelResponse,
  type AlertSubscription,
} from '../model/alert-channel.js';
import { parse, toValidationIssues } from '../model/parse.js';
import { queryInteger, type Page } from '../model/primitives.js';
import type { DeliveryAttempt } from '../ports/storage.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { MASKED } from './masking.js';
import { found, mapPage, numericId, pageOptions } from './support.js';

type Config = Record<string, unknown>;

export const DeliveryLogQuerySchema = v.object({ limit: queryInteger(1, 100, 20) });

export class AlertChannelService {
  constructor(private readonly deps: ServiceDeps) {}

  private get storage() {
    return this.deps.storage;
  }

  /** A registered transport's own config schema also applies to its type. */
  private checkConfig(type: string, config: unknown): void {
    const transport = this.deps.transports.get(type);
    if (!transport) return;
    const r = v.safeParse(transport.configSchema, config, { abortEarly: false });
    if (!r.success) {
      throw new ValidationError(toValidationIssues(r.issues).map((i) => ({ ...i, path: i.path ? `config.${i.path}` : 'config' })));
    }
  }

  /** Secret config fields sealed; a masked value sent back keeps the stored secret. */
  private seal(type: AlertChannel['type'], config: Config, previous?: Config): Config {
    const out = { ...config };
    for (const field of SECRET_CONFIG_FIELDS[type]) {
      const value = out[field];
      if (typeof value !== 'string' || value === '') continue;
      out[field] = value === MASKED && typeof previous?.[field] === 'string' ? previous[field] : this.deps.secretBox.encrypt(value);
    }
    return out;
  }

  private open(channel: AlertChannel): AlertChannel {
    const config: Config = { ...channel.config };
    for (const field of SECRET_CONFIG_FIELDS[channel.type]) {
      const value = config[field];
      if (typeof value === 'string' && this.deps.secretBox.isSealed(value)) config[field] = this.deps.secretBox.decrypt(value);
    }
    return { ...channel, config } as AlertChannel;
  }

  private async toResponse(accountId: string, channel: AlertChannel): Promise<AlertChannelResponse> {
    const { accountId: _a, ...rest } = channel;
    const config: Config = { ...rest.config };
    for (const field of SECRET_CONFIG_FIELDS[channel.type]) if (config[field]) config[field] = MASKED;
    const subscriptions = (await this.storage.alertSubscriptions.listByChannel(accountId, channel.id)).map((s) => ({
      id: s.id, checkId: s.checkId, groupId: s.groupId, activated: s.activated,
    }));
    return { ...rest, config, subscriptions } as AlertChannelResponse;
  }

  async create(accountId: string, body: unknown): Promise<AlertChannelResponse> {
    const parsed = parse(AlertChannelCreateSchema, body);
    this.checkConfig(parsed.type, parsed.config);
    const channel = await this.storage.alertChannels.insert(accountId, {
      ...parsed,
      config: this.seal(parsed.type, parsed.config as Config),
      created_at: nowIso(this.deps),
      updated_at: null,
    } as never);
    return this.toResponse(accountId, channel);
  }

  async update(accountId: string, rawId: unknown, body: unknown): Promise<AlertChannelResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(AlertChannelUpdateSchema, body);
    if (given.type !== undefined && given.type !== stored.type) {
      throw new ValidationError([{ path: 'type', message: `cannot change; this channel is ${stored.type}` }]);
    }
    const { id, accountId: _a, created_at, updated_at: _u, ...storedBody } = stored;
    const merged: Record<string, unknown> = { ...storedBody };
    for (const [k, value] of Object.entries(given)) if (value !== undefined) merged[k] = value;
    if (given.config) {
      // Secrets the client left masked (or left out) keep their stored values while validating.
      const config: Config = { ...given.config };
      for (const field of SECRET_CONFIG_FIELDS[stored.type]) {
        if (config[field] === MASKED || (config[field] === undefined && (stored.config as Config)[field])) config[field] = MASKED;
      }
      merged.config = config;
    }
    const parsed = parse(AlertChannelCreateSchema, merged);
    this.checkConfig(parsed.type, parsed.config);
    const config = given.config
      ? this.seal(stored.type, parsed.config as Config, stored.config as Config)
      : (stored.config as Config);
    const channel = found(
      await this.storage.alertChannels.update(accountId, id, { ...parsed, config, id, created_at, updated_at: nowIso(this.deps) } as never),
      'Alert channel',
    );
    return this.toResponse(accountId, channel);
  }

  async get(accountId: string, rawId: unknown): Promise<AlertChannelResponse> {
    return this.toResponse(accountId, await this.getRecord(accountId, rawId));
  }

  async getRecord(accountId: string, rawId: unknown): Promise<AlertChannel> {
    return found(await this.storage.alertChannels.get(accountId, numericId(rawId)), 'Alert channel');
  }

  /** The channel with its secrets opened, for its transport only. */
  async getForDelivery(accountId: string, id: number): Promise<AlertChannel> {
    return this.open(await this.getRecord(accountId, id));
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<AlertChannelResponse>> {
    return mapPage(await this.storage.alertChannels.list(accountId, pageOptions(rawQuery)), (c) => this.toResponse(accountId, c));
  }

  async delete(accountId: string, rawId: unknown): Promise<void> {
    const channel = await this.getRecord(accountId, rawId);
    const before = await this.storage.alertSubscriptions.listByChannel(accountId, channel.id);
    await this.storage.alertChannels.delete(accountId, channel.id);
    await this.storage.alertSubscriptions.deleteByChannel(accountId, channel.id);
    await this.syncTargets(accountId, before);
  }

  /**
   * Checks and groups also keep their subscriptions in their own record (their responses, their
   * runs and their updates read it): after a change made from the channel's side, each target
   * touched gets its list again from the subscription rows.
   */
  private async syncTargets(accountId: string, touched: readonly Pick<AlertSubscription, 'checkId' | 'groupId'>[]): Promise<void> {
    const toSubs = (rows: AlertSubscription[]) => rows.map((r) => ({ alertChannelId: r.alertChannelId, activated: r.activated }));
    for (const checkId of new Set(touched.flatMap((t) => (t.checkId ? [t.checkId] : [])))) {
      const check = await this.storage.checks.get(accountId, checkId);
      if (!check) continue;
      const { accountId: _a, ...rest } = check;
      const subs = toSubs(await this.storage.alertSubscriptions.listByCheck(accountId, checkId));
      await this.storage.checks.update(accountId, checkId, { ...rest, alertChannelSubscriptions: subs } as never);
    }
    for (const groupId of new Set(touched.flatMap((t) => (t.groupId !== null ? [t.groupId] : [])))) {
      const group = await this.storage.checkGroups.get(accountId, groupId);
      if (!group) continue;
      const { accountId: _a, ...rest } = group;
      const subs = toSubs(await this.storage.alertSubscriptions.listByGroup(accountId, groupId));
      await this.storage.checkGroups.update(accountId, groupId, { ...rest, alertChannelSubscriptions: subs });
    }
  }

  /** The delivery log of a channel, newest first: every attempt with its outcome. */
  async deliveries(accountId: string, rawId: unknown, rawQuery: unknown): Promise<Omit<DeliveryAttempt, 'accountId'>[]> {
    const channel = await this.getRecord(accountId, rawId);
    const { limit } = parse(DeliveryLogQuerySchema, rawQuery ?? {}, 'query');
    return (await this.storage.outbox.listAttempts(accountId, channel.id, limit)).map(({ accountId: _a, ...rest }) => rest);
  }

  /** PUT /v1/alert-channels/{id}/subscriptions: the channel's whole list of checks and groups. */
  async updateSubscriptions(accountId: string, rawId: unknown, body: unknown): Promise<AlertChannelResponse> {
    const channel = await this.getRecord(accountId, rawId);
    const items = parse(AlertChannelSubscriptionsUpdateSchema, body);
    const issues = [];
    for (const [i, item] of items.entries()) {
      if (item.checkId !== undefined && !(await this.storage.checks.get(accountId, item.checkId))) {
        issues.push({ path: `${i}.checkId`, message: 'is not a check of this account' });
      }
      if (item.groupId !== undefined && !(await this.storage.checkGroups.get(accountId, item.groupId))) {
        issues.push({ path: `${i}.groupId`, message: 'is not a check group of this account' });
      }
    }
    if (issues.length) throw new ValidationError(issues);
    const rows: Omit<AlertSubscription, 'id' | 'accountId'>[] = items.map((item) => ({
      alertChannelId: channel.id,
      checkId: item.checkId ?? null,
      groupId: item.groupId ?? null,
      activated: item.activated,
    }));
    const before = await this.storage.alertSubscriptions.listByChannel(accountId, channel.id);
    await this.storage.alertSubscriptions.replaceForChannel(accountId, channel.id, rows);
    await this.syncTargets(accountId, [...before, ...rows]);
    return this.toResponse(accountId, channel);
  }
}
