import * as v from 'valibot';
import { UnavailableError, ValidationError } from '../errors.js';
import {
  ALERT_CHANNEL_TYPES,
  AlertChannelCreateSchema,
  AlertChannelFlagsSchema,
  AlertChannelSubscriptionsUpdateSchema,
  AlertChannelUpdateSchema,
  LOCKED_CONFIG_LISTS,
  SECRET_CONFIG_FIELDS,
  type AlertChannel,
  type AlertChannelResponse,
  type AlertChannelType,
  type AlertSubscription,
} from '../model/alert-channel.js';
import { modelObject } from '../model/shared.js';
import type { AlertMessage, AlertTransport, DeliveryReceipt } from '../ports/alert-transport.js';
import { parse, toValidationIssues } from '../model/parse.js';
import { queryInteger, type Page } from '../model/primitives.js';
import type { DeliveryAttempt } from '../ports/storage.js';
import type { OutboxPayload } from '../model/outbox-payload.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { MASKED } from './masking.js';
import { ChannelCredentials, channelSecrets } from './sealing.js';
import { scrubSecrets } from '../runner-kit/scrub.js';
import { found, mapPage, numericId, pageOptions, stringId } from './support.js';
import { checkChannelTargetFields } from './target-fields.js';
import { policyForAccount } from '../runner-kit/target-policy.js';

type Config = Record<string, unknown>;

/** One alert of a check: what it sent, to which channel, and how its delivery went. */
export interface CheckAlert {
  id: string;
  alertType: string;
  alertChannelId: number;
  /** Null when the channel was deleted since. */
  channel: { type: string } | null;
  created_at: string;
  deliveredAt: string | null;
  /** PENDING: still being tried; NOT_DELIVERED: dropped or given up (the last attempt failed). */
  state: 'PENDING' | 'DELIVERED' | 'NOT_DELIVERED';
  lastError: string | null;
  payload: OutboxPayload;
  /** Every attempt, oldest first. */
  log: { at: string; ok: boolean; detail: string | null }[];
}

export const DeliveryLogQuerySchema = v.object({ limit: queryInteger(1, 100, 20) });

const isBuiltinChannelType = (type: string): type is AlertChannelType => (ALERT_CHANNEL_TYPES as readonly string[]).includes(type);

/** PUT body of a plugin's channel: as for a built-in one, but its type is the plugin's own name. */
const PluginChannelUpdateSchema = modelObject({ ...AlertChannelUpdateSchema.entries, type: v.optional(v.string()) });

export class AlertChannelService {
  private readonly pluginSchemas = new Map<string, v.GenericSchema>();

  constructor(private readonly deps: ServiceDeps) {}

  private get storage() {
    return this.deps.storage;
  }

  /** The transport of a channel type that no built-in schema models (a plugin's own), if one is registered. */
  private pluginTransport(type: unknown): AlertTransport | undefined {
    return typeof type === 'string' && !isBuiltinChannelType(type) ? this.deps.transports.get(type) : undefined;
  }

  /**
   * The create schema of a body's type: the built-in variant, or for a plugin's type its
   * transport's config schema with the flags every channel has. An unknown type names them all.
   */
  private createSchemaFor(type: unknown): v.GenericSchema {
    const transport = this.pluginTransport(type);
    if (!transport) {
      const plugins = [...this.deps.transports.keys()].filter((t) => !isBuiltinChannelType(t));
      if (typeof type === 'string' && !isBuiltinChannelType(type) && plugins.length > 0) {
        throw new ValidationError([{ path: 'type', message: `must be one of ${[...ALERT_CHANNEL_TYPES, ...plugins].join(', ')}` }]);
      }
      return AlertChannelCreateSchema;
    }
    let schema = this.pluginSchemas.get(transport.channelType);
    if (!schema) {
      schema = modelObject({ type: v.literal(transport.channelType), config: transport.configSchema, ...AlertChannelFlagsSchema.entries });
      this.pluginSchemas.set(transport.channelType, schema);
    }
    return schema;
  }

  /** Config fields sealed at rest and masked in responses: a built-in type's list, or the one its transport declares. */
  private secretFields(type: string): readonly string[] {
    return isBuiltinChannelType(type) ? SECRET_CONFIG_FIELDS[type] : this.deps.transports.get(type)?.secretFields ?? [];
  }

  /**
   * A registered transport's own config schema also applies to its type, and a URL the account
   * wrote must not name an address the target policy of its account refuses.
   */
  private async checkConfig(accountId: string, type: string, config: unknown): Promise<void> {
    const transport = this.deps.transports.get(type);
    const r = transport ? v.safeParse(transport.configSchema, config, { abortEarly: false }) : null;
    if (r && !r.success) {
      throw new ValidationError(toValidationIssues(r.issues).map((i) => ({ ...i, path: i.path ? `config.${i.path}` : 'config' })));
    }
    checkChannelTargetFields(await policyForAccount(this.deps.targetPolicy, accountId), type, config);
  }

  /** How the channel type's key/value lists and credential URLs are sealed and masked. */
  private credentials(type: string): ChannelCredentials {
    return new ChannelCredentials(type, isBuiltinChannelType(type) ? LOCKED_CONFIG_LISTS[type] : [], this.deps.secretBox);
  }

  /** Secret config fields and credentials sealed; a masked secret field sent back keeps the stored secret. */
  private seal(type: string, config: Config, previous?: Config): Config {
    const box = this.deps.secretBox;
    const out = { ...config };
    for (const field of this.secretFields(type)) {
      const value = out[field];
      if (typeof value !== 'string' || value === '') continue;
      out[field] = value === MASKED && typeof previous?.[field] === 'string' ? previous[field] : box.encrypt(value);
    }
    return this.credentials(type).seal(out);
  }

  private open(channel: AlertChannel): AlertChannel {
    const box = this.deps.secretBox;
    const config: Config = { ...channel.config };
    for (const field of this.secretFields(channel.type)) {
      const value = config[field];
      if (typeof value === 'string' && box.isSealed(value)) config[field] = box.decrypt(value);
    }
    return { ...channel, config: this.credentials(channel.type).open(config) } as AlertChannel;
  }

  /** A stored config as the channel's responses show it. */
  private maskConfig(channel: Pick<AlertChannel, 'type' | 'config'>): Config {
    let config: Config = { ...channel.config };
    for (const field of this.secretFields(channel.type)) if (config[field]) config[field] = MASKED;
    const credentials = this.credentials(channel.type);
    config = credentials.mask(credentials.open(config));
    if (!isBuiltinChannelType(channel.type)) {
      // Sealed values stay masked even in a process that lacks the plugin's transport.
      for (const [field, value] of Object.entries(config)) if (typeof value === 'string' && this.deps.secretBox.isSealed(value)) config[field] = MASKED;
    }
    return config;
  }

  private async toResponse(accountId: string, channel: AlertChannel): Promise<AlertChannelResponse> {
    const { accountId: _a, ...rest } = channel;
    const config = this.maskConfig(channel);
    const subscriptions = (await this.storage.alertSubscriptions.listByChannel(accountId, channel.id)).map((s) => ({
      id: s.id, checkId: s.checkId, groupId: s.groupId, activated: s.activated,
    }));
    return { ...rest, config, subscriptions } as AlertChannelResponse;
  }

  async create(accountId: string, body: unknown): Promise<AlertChannelResponse> {
    const parsed = parse(this.createSchemaFor((body as { type?: unknown } | null)?.type), body) as v.InferOutput<typeof AlertChannelCreateSchema>;
    await this.checkConfig(accountId, parsed.type, parsed.config);
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
    const given = parse(isBuiltinChannelType(stored.type) ? AlertChannelUpdateSchema : PluginChannelUpdateSchema, body);
    if (given.type !== undefined && given.type !== stored.type) {
      throw new ValidationError([{ path: 'type', message: `cannot change; this channel is ${stored.type}` }]);
    }
    const { id, accountId: _a, created_at, updated_at: _u, ...storedBody } = stored;
    // The stored config is validated opened (a sealed URL is no URL); it is stored as it was.
    const merged: Record<string, unknown> = { ...storedBody, config: this.open(stored).config };
    for (const [k, value] of Object.entries(given)) if (value !== undefined) merged[k] = value;
    if (given.config) {
      // Secrets the client left masked (or left out) keep their stored values while validating.
      const config = this.credentials(stored.type).unmask({ ...given.config }, this.open(stored).config as Config);
      for (const field of this.secretFields(stored.type)) {
        if (config[field] === MASKED || (config[field] === undefined && (stored.config as Config)[field])) config[field] = MASKED;
      }
      merged.config = config;
    }
    const parsed = parse(this.createSchemaFor(stored.type), merged) as v.InferOutput<typeof AlertChannelCreateSchema>;
    await this.checkConfig(accountId, parsed.type, parsed.config);
    const config = given.config
      ? this.seal(stored.type, parsed.config as Config, stored.config as Config)
      : this.credentials(stored.type).seal(stored.config as Config);
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

  /**
   * Sends the channel a test alert at once, through its transport (not the outbox: the caller
   * waits for the outcome). Resolves with the receipt; rejects with the transport's error, or an
   * UnavailableError when this process has no transport of the channel's type.
   */
  async sendTest(accountId: string, rawId: unknown, signal: AbortSignal = AbortSignal.timeout(30_000)): Promise<DeliveryReceipt> {
    const channel = this.open(await this.getRecord(accountId, rawId));
    const transport = this.deps.transports.get(channel.type);
    if (!transport) throw new UnavailableError(`No transport for ${channel.type} channels is installed in this process`);
    const now = nowIso(this.deps);
    const alert: AlertMessage = {
      id: this.deps.ids.uuid(),
      accountId,
      alertType: 'ALERT_FAILURE',
      title: 'Test alert from Vigil: this channel is set up',
      check: { id: 'test', name: 'Test alert', checkType: 'TEST', tags: [], groupName: null },
      result: null,
      failingSince: null,
      isReminder: false,
      reminderSequence: 0,
      ssl: null,
      variables: {},
      created_at: now,
    };
    try {
      return await transport.send(alert, channel, signal, { targetPolicy: await policyForAccount(this.deps.targetPolicy, accountId) });
    } catch (err) {
      // What the transport reports may repeat a secret of the channel (a token in a URL): it is shown to the viewer scrubbed, as delivery logs are.
      const message = scrubSecrets(err instanceof Error ? err.message : String(err), channelSecrets(channel, transport));
      throw new Error(message, { cause: err });
    }
  }

  /** The delivery log of a channel, newest first: every attempt with its outcome. */
  async deliveries(accountId: string, rawId: unknown, rawQuery: unknown): Promise<Omit<DeliveryAttempt, 'accountId'>[]> {
    const channel = await this.getRecord(accountId, rawId);
    const { limit } = parse(DeliveryLogQuerySchema, rawQuery ?? {}, 'query');
    return (await this.storage.outbox.listAttempts(accountId, channel.id, limit)).map(({ accountId: _a, ...rest }) => rest);
  }

  /**
   * A check's alert history, newest first: what each alert sent, to which channel, and every
   * delivery attempt with its outcome (for as long as retention keeps them). 404 for a check that
   * is not the account's.
   */
  async checkAlerts(accountId: string, rawCheckId: unknown, rawQuery: unknown): Promise<CheckAlert[]> {
    const check = found(await this.storage.checks.get(accountId, stringId(rawCheckId, 'checkId')), 'Check');
    const { limit } = parse(DeliveryLogQuerySchema, rawQuery ?? {}, 'query');
    const messages = await this.storage.outbox.listByCheck(accountId, check.id, limit);
    if (messages.length === 0) return [];
    const [attempts, channels] = await Promise.all([
      this.storage.outbox.listAttemptsOf(accountId, messages.map((m) => m.id)),
      this.storage.alertChannels.listAll(accountId),
    ]);
    const channelById = new Map(channels.map((c) => [c.id, c]));
    const logOf = new Map<string, CheckAlert['log']>();
    for (const a of attempts) {
      const log = logOf.get(a.outboxId) ?? [];
      log.push({ at: a.at, ok: a.ok, detail: a.detail });
      logOf.set(a.outboxId, log);
    }
    return messages.map((m) => {
      const log = logOf.get(m.id) ?? [];
      const channel = channelById.get(m.alertChannelId);
      const state = m.deliveredAt === null ? 'PENDING' : log.at(-1)?.ok === false ? 'NOT_DELIVERED' : 'DELIVERED';
      return {
        id: m.id,
        alertType: m.alertType,
        alertChannelId: m.alertChannelId,
        channel: channel ? { type: channel.type } : null,
        created_at: m.created_at,
        deliveredAt: m.deliveredAt,
        state,
        lastError: m.lastError,
        payload: m.payload,
        log,
      };
    });
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
