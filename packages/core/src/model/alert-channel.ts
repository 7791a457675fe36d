import * as v from 'valibot';
import { CodeSchema, MAX_HEADER_VALUE_LENGTH, MAX_NAME_LENGTH, NameSchema, TimestampSchema, boundedString, maxChars, nameSchema } from './primitives.js';
import { HttpUrlSchema } from './urls.js';
import {
  HeaderValueSchema,
  WebhookKeyValueSchema,
  headerListSchema,
  integerAtLeast,
  integerBetween,
  modelObject,
  oneOf,
  updateEntries,
  type EntriesOf,
  type ModelObject,
} from './shared.js';

export const ALERT_CHANNEL_TYPES = ['EMAIL', 'WEBHOOK', 'SMS', 'CALL', 'CHAT', 'CHAT_APP', 'PAGING_A', 'PAGING_B'] as const;
export type AlertChannelType = (typeof ALERT_CHANNEL_TYPES)[number];
export const AlertChannelTypeSchema = oneOf(ALERT_CHANNEL_TYPES);

/** The alert messages a channel may receive (docs/decisions.md "alert types"). */
export const ALERT_TYPES = [
  'ALERT_FAILURE',
  'ALERT_RECOVERY',
  'ALERT_DEGRADED',
  'ALERT_DEGRADED_RECOVERY',
  'ALERT_FAILURE_REMAIN',
  'ALERT_DEGRADED_FAILURE',
  'ALERT_FAILURE_DEGRADED',
  'ALERT_SSL',
] as const;
export const AlertTypeSchema = oneOf(ALERT_TYPES);
export type AlertType = v.InferOutput<typeof AlertTypeSchema>;

const PhoneNumberSchema = v.pipe(v.string(), v.regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 number such as +14155550100'));

export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export const PAGING_B_REGIONS = ['EU', 'US'] as const;
export const PAGING_B_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'] as const;

export const EmailConfigSchema = modelObject({
  address: v.pipe(v.string(), v.trim(), maxChars(254), v.email('must be a valid email address')),
});
export const WebhookConfigSchema = modelObject({
  name: NameSchema,
  url: HttpUrlSchema,
  method: v.optional(oneOf(WEBHOOK_METHODS), 'POST'),
  headers: v.optional(headerListSchema(WebhookKeyValueSchema), () => []),
  queryParameters: v.optional(headerListSchema(WebhookKeyValueSchema), () => []),
  template: v.optional(v.nullable(CodeSchema), null),
  webhookSecret: v.optional(v.nullable(HeaderValueSchema), null),
});
export const PhoneConfigSchema = modelObject({ number: PhoneNumberSchema, name: NameSchema });
export const ChatConfigSchema = modelObject({ url: HttpUrlSchema, channel: v.optional(v.nullable(boundedString(MAX_NAME_LENGTH)), null) });
export const ChatAppConfigSchema = modelObject({ url: HttpUrlSchema });
export const PagingAConfigSchema = modelObject({
  serviceKey: nameSchema(MAX_HEADER_VALUE_LENGTH),
  account: v.optional(v.nullable(boundedString(MAX_NAME_LENGTH)), null),
  serviceName: v.optional(v.nullable(boundedString(MAX_NAME_LENGTH)), null),
});
export const PagingBConfigSchema = modelObject({
  name: NameSchema,
  apiKey: nameSchema(MAX_HEADER_VALUE_LENGTH),
  region: oneOf(PAGING_B_REGIONS),
  priority: v.optional(oneOf(PAGING_B_PRIORITIES), 'P3'),
});
export type WebhookConfig = v.InferOutput<typeof WebhookConfigSchema>;

/** The config schema of each built-in channel type, by name. */
export interface AlertChannelConfigSchemas {
  EMAIL: typeof EmailConfigSchema;
  WEBHOOK: typeof WebhookConfigSchema;
  SMS: typeof PhoneConfigSchema;
  CALL: typeof PhoneConfigSchema;
  CHAT: typeof ChatConfigSchema;
  CHAT_APP: typeof ChatAppConfigSchema;
  PAGING_A: typeof PagingAConfigSchema;
  PAGING_B: typeof PagingBConfigSchema;
}

/** The config schema of each built-in channel type (docs/decisions.md "channel config"). */
export const ALERT_CHANNEL_CONFIG_SCHEMAS: Readonly<AlertChannelConfigSchemas> = {
  EMAIL: EmailConfigSchema,
  WEBHOOK: WebhookConfigSchema,
  SMS: PhoneConfigSchema,
  CALL: PhoneConfigSchema,
  CHAT: ChatConfigSchema,
  CHAT_APP: ChatAppConfigSchema,
  PAGING_A: PagingAConfigSchema,
  PAGING_B: PagingBConfigSchema,
};

/** Config fields that are encrypted at rest and masked in responses. */
export const SECRET_CONFIG_FIELDS: Record<AlertChannelType, readonly string[]> = {
  EMAIL: [],
  WEBHOOK: ['webhookSecret'],
  SMS: [],
  CALL: [],
  CHAT: [],
  CHAT_APP: [],
  PAGING_A: ['serviceKey'],
  PAGING_B: ['apiKey'],
};

/**
 * Key/value lists of a config whose `locked` entries are secret (a webhook's Authorization
 * header, a token in its query): sealed at rest, masked in responses, opened only for delivery.
 */
export const LOCKED_CONFIG_LISTS: Record<AlertChannelType, readonly string[]> = {
  EMAIL: [],
  WEBHOOK: ['headers', 'queryParameters'],
  SMS: [],
  CALL: [],
  CHAT: [],
  CHAT_APP: [],
  PAGING_A: [],
  PAGING_B: [],
};

const flagEntries = {
  sendRecovery: v.optional(v.boolean(), true),
  sendFailure: v.optional(v.boolean(), true),
  sendDegraded: v.optional(v.boolean(), false),
  sslExpiry: v.optional(v.boolean(), false),
  sslExpiryThreshold: v.optional(integerBetween(1, 30), 30),
  autoSubscribe: v.optional(v.boolean(), false),
};
/** The flags' entries, by name (an interface): the channel schemas' declarations name them instead of repeating them. */
export interface AlertChannelFlagEntries extends FlagShape {}
type FlagShape = typeof flagEntries;

/** The flags every channel has, whatever its type (for channel types a plugin adds). */
export const AlertChannelFlagsSchema = modelObject<EntriesOf<AlertChannelFlagEntries>>(flagEntries);
export type AlertChannelFlags = v.InferOutput<typeof AlertChannelFlagsSchema>;

const typeMessage = (issue: v.BaseIssue<unknown>) =>
  issue.path ? `must be one of ${ALERT_CHANNEL_TYPES.join(', ')}` : 'must be an object';

/** The entries of one channel type's option: `{type, config}` of that type, the flags, and `TExtra`. */
type ChannelOptionEntries<TType extends AlertChannelType, TExtra extends v.ObjectEntries> =
  { type: v.LiteralSchema<TType, undefined>; config: AlertChannelConfigSchemas[TType] } & EntriesOf<AlertChannelFlagEntries> & TExtra;

/** The option of one channel type, by name (an interface, so that declarations name it). */
export interface AlertChannelOption<TType extends AlertChannelType, TExtra extends v.ObjectEntries>
  extends ModelObject<ChannelOptionEntries<TType, TExtra>> {}

/** One option per channel type: `{type, config}` of that type plus `extra` entries. */
function perType<const TExtra extends v.ObjectEntries>(extra: TExtra) {
  const option = <const TType extends AlertChannelType>(type: TType): AlertChannelOption<TType, TExtra> =>
    modelObject<ChannelOptionEntries<TType, TExtra>>({
      type: v.literal(type),
      config: ALERT_CHANNEL_CONFIG_SCHEMAS[type],
      ...flagEntries,
      ...extra,
    });
  return [
    option('EMAIL'),
    option('WEBHOOK'),
    option('SMS'),
    option('CALL'),
    option('CHAT'),
    option('CHAT_APP'),
    option('PAGING_A'),
    option('PAGING_B'),
  ] as const;
}

export const AlertChannelCreateSchema = v.variant('type', perType({}), typeMessage);
export type AlertChannelCreate = v.InferOutput<typeof AlertChannelCreateSchema>;

/**
 * PUT body. A given config replaces the stored one and is checked against the channel's type when
 * the service re-validates the merged channel; a given type must equal the stored one.
 */
export const AlertChannelUpdateSchema = modelObject({
  type: v.optional(AlertChannelTypeSchema),
  config: v.optional(v.record(v.string(), v.unknown(), 'must be an object')),
  ...updateEntries(flagEntries),
});
export type AlertChannelUpdate = v.InferOutput<typeof AlertChannelUpdateSchema>;

const channelRecordEntries = {
  id: v.number(),
  accountId: v.string(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};
/** What a stored channel adds to a channel's entries, by name. */
export interface AlertChannelRecordEntries extends RecordShape {}
type RecordShape = typeof channelRecordEntries;

export const AlertChannelSchema = v.variant('type', perType<EntriesOf<AlertChannelRecordEntries>>(channelRecordEntries));
export type AlertChannel = v.InferOutput<typeof AlertChannelSchema>;

export const AlertChannelSubscriptionSummarySchema = v.object({
  id: v.number(),
  checkId: v.nullable(v.string()),
  groupId: v.nullable(v.number()),
  activated: v.boolean(),
});

const channelResponseEntries = {
  id: v.number(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
  subscriptions: v.array(AlertChannelSubscriptionSummarySchema),
};
/** What a channel response adds to a channel's entries, by name. */
export interface AlertChannelResponseEntries extends ResponseShape {}
type ResponseShape = typeof channelResponseEntries;

export const AlertChannelResponseSchema = v.variant('type', perType<EntriesOf<AlertChannelResponseEntries>>(channelResponseEntries));
export type AlertChannelResponse = v.InferOutput<typeof AlertChannelResponseSchema>;

/** A link of a channel to a check or a group (exactly one of checkId / groupId is set). */
export const AlertSubscriptionSchema = v.object({
  id: v.number(),
  accountId: v.string(),
  alertChannelId: v.number(),
  checkId: v.nullable(v.string()),
  groupId: v.nullable(v.number()),
  activated: v.boolean(),
});
export type AlertSubscription = v.InferOutput<typeof AlertSubscriptionSchema>;

/** Body of PUT /v1/alert-channels/{id}/subscriptions: the channel's whole list of subscriptions. */
export const AlertChannelSubscriptionsUpdateSchema = v.array(
  v.pipe(
    modelObject({
      checkId: v.optional(NameSchema),
      groupId: v.optional(integerAtLeast(1)),
      activated: v.optional(v.boolean(), true),
    }),
    v.check(
      (item) => (item.checkId === undefined) !== (item.groupId === undefined),
      'must name exactly one of checkId or groupId',
    ),
  ),
  'must be an array of subscriptions',
);
export type AlertChannelSubscriptionsUpdate = v.InferOutput<typeof AlertChannelSubscriptionsUpdateSchema>;
