import * as v from 'valibot';
import {
  LongTextSchema,
  MAX_HEADER_KEY_LENGTH,
  MAX_HEADER_VALUE_LENGTH,
  MAX_LONG_TEXT_LENGTH,
  MAX_NAME_LENGTH,
  MAX_URL_LENGTH,
  NameSchema,
  boundedString,
  maxChars,
  type Same,
} from './primitives.js';
import { isAbsoluteHttpUrl, isTemplatedUrl } from './urls.js';

/**
 * An object schema whose missing keys read "is required" instead of valibot's generic
 * "Invalid key" text. Unknown keys are dropped, as for every body.
 */
export function modelObject<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  const schema = v.object(entries, (issue) => (issue.path ? 'is required' : 'must be an object'));
  type Run = (typeof schema)['~run'];
  const run: Run = schema['~run'];
  // A JSON array is an object to valibot: refuse it here, so `[]` never reads as `{}` with defaults.
  const refuseArrays: Run = function (this: typeof schema, dataset, config) {
    if (!Array.isArray(dataset.value)) return run.call(this, dataset, config);
    const issue: v.ObjectIssue = {
      kind: 'schema', type: 'object', input: dataset.value, expected: 'Object', received: 'Array',
      message: ARRAY_FOR_OBJECT, lang: config.lang, abortEarly: config.abortEarly, abortPipeEarly: config.abortPipeEarly,
    };
    return { typed: false, value: dataset.value, issues: [issue] } as unknown as ReturnType<Run>;
  };
  (schema as { '~run': Run })['~run'] = refuseArrays;
  return schema;
}

/** The schema `modelObject` makes of these entries. */
export type ModelObject<TEntries extends v.ObjectEntries> = ReturnType<typeof modelObject<TEntries>>;

/**
 * Entries named by an interface, as valibot takes them (a mapped type has the index signature an
 * interface lacks). Declarations then name the interface instead of repeating every entry's type.
 */
export type EntriesOf<T> = Pick<T, keyof T>;

/** The message of a JSON array sent where an object is expected. */
export const ARRAY_FOR_OBJECT = 'must be an object, not an array';

type WithoutDefault<T> = T extends v.OptionalSchema<infer TWrapped, infer _TDefault> ? TWrapped : T;
export type UpdateEntries<TEntries extends v.ObjectEntries> = {
  [K in keyof TEntries]: v.OptionalSchema<WithoutDefault<TEntries[K]> & v.GenericSchema, undefined>;
};

/**
 * The entries of a PUT body made from those of a create body: every field optional and without
 * its default, so that an absent field keeps the stored value when the service merges.
 */
export function updateEntries<const TEntries extends v.ObjectEntries>(entries: TEntries): UpdateEntries<TEntries> {
  const out: Record<string, v.GenericSchema> = {};
  for (const [key, schema] of Object.entries(entries)) {
    const inner = schema.type === 'optional' ? (schema as v.OptionalSchema<v.GenericSchema, unknown>).wrapped : schema;
    out[key] = v.optional(inner);
  }
  return out as UpdateEntries<TEntries>;
}

const integerBetweenSchema = (min: number, max: number, message: string) =>
  v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message));
/** The type of integerBetween's schemas, by name (see `Same`). */
export interface IntegerBetweenSchema extends Same<ReturnType<typeof integerBetweenSchema>> {}
/** An integer in [min, max] whose every failure reads "must be between min and max". */
export function integerBetween(min: number, max: number): IntegerBetweenSchema {
  return integerBetweenSchema(min, max, `must be between ${min} and ${max}`);
}

const integerAtLeastSchema = (min: number, message: string) => v.pipe(v.number(message), v.integer(message), v.minValue(min, message));
/** The type of integerAtLeast's schemas, by name (see `Same`). */
export interface IntegerAtLeastSchema extends Same<ReturnType<typeof integerAtLeastSchema>> {}
/** An integer >= min. */
export function integerAtLeast(min: number): IntegerAtLeastSchema {
  return integerAtLeastSchema(min, `must be an integer of at least ${min}`);
}

export function oneOf<const TOptions extends readonly (string | number)[]>(options: TOptions) {
  return v.picklist(options, `must be one of ${options.join(', ')}`);
}

export const ESCALATION_TYPES = ['RUN_BASED', 'TIME_BASED'] as const;
export const MINUTES_FAILING_THRESHOLDS = [5, 10, 15, 30] as const;
export const REMINDER_INTERVALS = [1, 2, 3, 4, 5, 10, 15, 30] as const;
/** reminders.amount that means "remind until recovery". */
export const UNLIMITED_REMINDERS = 100000;

const ReminderAmountSchema = v.pipe(
  v.number(),
  v.check(
    (n) => (Number.isInteger(n) && n >= 0 && n <= 5) || n === UNLIMITED_REMINDERS,
    `must be between 0 and 5, or ${UNLIMITED_REMINDERS} (unlimited)`,
  ),
);

const alertSettingsSchema = modelObject({
  escalationType: v.optional(oneOf(ESCALATION_TYPES), 'RUN_BASED'),
  runBasedEscalation: v.optional(modelObject({ failedRunThreshold: v.optional(integerBetween(1, 5), 1) }), {}),
  timeBasedEscalation: v.optional(
    modelObject({ minutesFailingThreshold: v.optional(oneOf(MINUTES_FAILING_THRESHOLDS), 5) }),
    {},
  ),
  reminders: v.optional(
    modelObject({
      amount: v.optional(ReminderAmountSchema, 0),
      interval: v.optional(oneOf(REMINDER_INTERVALS), 5),
    }),
    {},
  ),
  parallelRunFailureThreshold: v.optional(
    modelObject({
      enabled: v.optional(v.boolean(), false),
      percentage: v.optional(
        v.pipe(integerBetween(10, 100), v.multipleOf(10, 'must be a multiple of 10 between 10 and 100')),
        10,
      ),
    }),
    {},
  ),
});
/** AlertSettingsSchema's type, by name (see `Same`). */
export interface AlertSettingsSchema extends Same<typeof alertSettingsSchema> {}
export const AlertSettingsSchema: AlertSettingsSchema = alertSettingsSchema;
export type AlertSettings = v.InferOutput<typeof AlertSettingsSchema>;
export const DEFAULT_ALERT_SETTINGS: AlertSettings = v.parse(AlertSettingsSchema, {});

export const RETRY_TYPES = ['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY'] as const;

const retryStrategySchema = modelObject({
  type: oneOf(RETRY_TYPES),
  baseBackoffSeconds: v.optional(integerBetween(0, 600), 60),
  maxRetries: v.optional(integerBetween(1, 10), 2),
  maxDurationSeconds: v.optional(integerBetween(0, 600), 600),
  sameRegion: v.optional(v.boolean(), true),
  onlyOn: v.optional(
    v.pipe(v.array(oneOf(['NETWORK_ERROR'])), v.maxLength(1, 'must hold at most one entry')),
    () => [],
  ),
});
/** RetryStrategySchema's type, by name (see `Same`). */
export interface RetryStrategySchema extends Same<typeof retryStrategySchema> {}
export const RetryStrategySchema: RetryStrategySchema = retryStrategySchema;
export type RetryStrategy = v.InferOutput<typeof RetryStrategySchema>;

/** Groups may say FALLBACK: each member check keeps its own strategy. */
export const GroupRetryStrategySchema = v.union(
  [v.literal('FALLBACK'), RetryStrategySchema],
  'must be FALLBACK or a retry strategy object',
);
export type GroupRetryStrategy = v.InferOutput<typeof GroupRetryStrategySchema>;

export const TriggerIncidentSchema = modelObject({
  // An id, bounded as the other ids a body names (not empty, at most 255 characters) before it is looked up.
  serviceId: NameSchema,
  name: NameSchema,
  description: LongTextSchema,
  notifySubscribers: v.optional(v.boolean(), false),
});
export type TriggerIncident = v.InferOutput<typeof TriggerIncidentSchema>;

const alertChannelSubscriptionSchema = modelObject({
  alertChannelId: integerAtLeast(1),
  activated: v.optional(v.boolean(), true),
});
/** AlertChannelSubscriptionSchema's type, by name (see `Same`). */
export interface AlertChannelSubscriptionSchema extends Same<typeof alertChannelSubscriptionSchema> {}
export const AlertChannelSubscriptionSchema: AlertChannelSubscriptionSchema = alertChannelSubscriptionSchema;
export type AlertChannelSubscription = v.InferOutput<typeof AlertChannelSubscriptionSchema>;

/** Keys starting with this are secret even when `secret` is false (docs/decisions.md "script environment"). */
export const SECRET_ENV_PREFIX = 'SERVICE_SECRET_';
export const MAX_ENVIRONMENT_VARIABLES = 100;
/**
 * The most characters of a variable's value. A secret value is stored sealed, which is longer: the
 * services validate a stored value opened.
 */
export const MAX_ENVIRONMENT_VALUE_LENGTH = MAX_LONG_TEXT_LENGTH;

const environmentVariableSchema = modelObject({
  key: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    maxChars(MAX_HEADER_KEY_LENGTH),
    v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must start with a letter or _ and hold only letters, digits and _'),
  ),
  value: boundedString(MAX_ENVIRONMENT_VALUE_LENGTH),
  locked: v.optional(v.boolean(), false),
  secret: v.optional(v.boolean(), false),
});
/** EnvironmentVariableSchema's type, by name (see `Same`). */
export interface EnvironmentVariableSchema extends Same<typeof environmentVariableSchema> {}
export const EnvironmentVariableSchema: EnvironmentVariableSchema = environmentVariableSchema;
export type EnvironmentVariable = v.InferOutput<typeof EnvironmentVariableSchema>;

export function isSecretVariable(variable: { key: string; secret?: boolean | null }): boolean {
  return variable.secret === true || variable.key.startsWith(SECRET_ENV_PREFIX);
}

const environmentVariablesSchema = v.nullable(
  v.pipe(
    v.array(EnvironmentVariableSchema),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const list = dataset.value;
      const arrayItem = (key: number, value: unknown, suffix?: string): [v.ArrayPathItem, ...v.IssuePathItem[]] => {
        const item: v.ArrayPathItem = { type: 'array', origin: 'value', input: list, key, value };
        if (suffix === undefined) return [item];
        return [item, { type: 'object', origin: 'value', input: value as Record<string, unknown>, key: suffix, value: list[key]?.key }];
      };
      if (list.length > MAX_ENVIRONMENT_VARIABLES) {
        addIssue({
          message: `is over the limit of ${MAX_ENVIRONMENT_VARIABLES} environment variables`,
          path: arrayItem(MAX_ENVIRONMENT_VARIABLES, list[MAX_ENVIRONMENT_VARIABLES]),
        });
      }
      const seen = new Set<string>();
      list.forEach((variable, index) => {
        if (seen.has(variable.key)) {
          addIssue({ message: `is a duplicate key: ${variable.key}`, path: arrayItem(index, variable, 'key') });
        }
        seen.add(variable.key);
      });
    }),
  ),
);
/** EnvironmentVariablesSchema's type, by name (see `Same`). */
export interface EnvironmentVariablesSchema extends Same<typeof environmentVariablesSchema> {}
/** At most 100 variables with unique keys; the issue names the first entry over the limit. */
export const EnvironmentVariablesSchema: EnvironmentVariablesSchema = environmentVariablesSchema;

const headerKeySchema = v.pipe(v.string(), v.minLength(1, 'must not be empty'), maxChars(MAX_HEADER_KEY_LENGTH));
/** HeaderKeySchema's type, by name (see `Same`). */
export interface HeaderKeySchema extends Same<typeof headerKeySchema> {}
/** An HTTP header's or query parameter's name: not empty, at most 255 characters. */
export const HeaderKeySchema: HeaderKeySchema = headerKeySchema;
/** An HTTP header's or query parameter's value: at most 4,096 characters. */
export const HeaderValueSchema = boundedString(MAX_HEADER_VALUE_LENGTH);

const keyValueSchema = modelObject({ key: HeaderKeySchema, value: HeaderValueSchema });
/** KeyValueSchema's type, by name (see `Same`). */
export interface KeyValueSchema extends Same<typeof keyValueSchema> {}
export const KeyValueSchema: KeyValueSchema = keyValueSchema;
export type KeyValue = v.InferOutput<typeof KeyValueSchema>;

const webhookKeyValueSchema = modelObject({
  ...KeyValueSchema.entries,
  locked: v.optional(v.boolean(), false),
});
/** WebhookKeyValueSchema's type, by name (see `Same`). */
export interface WebhookKeyValueSchema extends Same<typeof webhookKeyValueSchema> {}
export const WebhookKeyValueSchema: WebhookKeyValueSchema = webhookKeyValueSchema;
export type WebhookKeyValue = v.InferOutput<typeof WebhookKeyValueSchema>;

export const MAX_HEADERS = 100;

/** Headers or query parameters: at most 100 entries of `item` (KeyValueSchema unless given). */
export function headerListSchema<TItem extends v.GenericSchema>(item: TItem) {
  return v.pipe(v.array(item), v.maxLength(MAX_HEADERS, `must hold at most ${MAX_HEADERS} entries`));
}
export const HeaderListSchema = headerListSchema(KeyValueSchema);

export const ASSERTION_COMPARISONS = [
  'EQUALS', 'NOT_EQUALS', 'IS_EMPTY', 'NOT_EMPTY', 'LESS_THAN', 'GREATER_THAN', 'CONTAINS', 'NOT_CONTAINS',
] as const;
export const API_ASSERTION_COMPARISONS = [
  ...ASSERTION_COMPARISONS, 'HAS_KEY', 'NOT_HAS_KEY', 'HAS_VALUE', 'NOT_HAS_VALUE', 'IS_NULL', 'NOT_NULL',
] as const;
export const TCP_ASSERTION_SOURCES = ['RESPONSE_DATA', 'RESPONSE_TIME'] as const;
export const API_ASSERTION_SOURCES = ['STATUS_CODE', 'TEXT_BODY', 'JSON_BODY', 'HEADERS', 'RESPONSE_TIME'] as const;

/** Whether a pattern is a valid JavaScript regular expression. */
export function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

export const assertionCommonEntries = {
  target: v.optional(LongTextSchema, ''),
  property: v.optional(LongTextSchema, ''),
  regex: v.optional(v.nullable(v.pipe(LongTextSchema, v.check(compiles, 'must be a valid regular expression'))), null),
};

const tcpAssertionSchema = modelObject({
  source: oneOf(TCP_ASSERTION_SOURCES),
  comparison: oneOf(ASSERTION_COMPARISONS),
  ...assertionCommonEntries,
});
/** TcpAssertionSchema's type, by name (see `Same`). */
export interface TcpAssertionSchema extends Same<typeof tcpAssertionSchema> {}
export const TcpAssertionSchema: TcpAssertionSchema = tcpAssertionSchema;
export type TcpAssertion = v.InferOutput<typeof TcpAssertionSchema>;

const apiAssertionSchema = modelObject({
  source: oneOf(API_ASSERTION_SOURCES),
  comparison: oneOf(API_ASSERTION_COMPARISONS),
  ...assertionCommonEntries,
});
/** ApiAssertionSchema's type, by name (see `Same`). */
export interface ApiAssertionSchema extends Same<typeof apiAssertionSchema> {}
export const ApiAssertionSchema: ApiAssertionSchema = apiAssertionSchema;
export type ApiAssertion = v.InferOutput<typeof ApiAssertionSchema>;

const basicAuthSchema = modelObject({
  username: v.optional(boundedString(MAX_NAME_LENGTH), ''),
  password: v.optional(HeaderValueSchema, ''),
});
/** BasicAuthSchema's type, by name (see `Same`). */
export interface BasicAuthSchema extends Same<typeof basicAuthSchema> {}
/** HTTP basic authentication; an empty username means none. */
export const BasicAuthSchema: BasicAuthSchema = basicAuthSchema;
export type BasicAuth = v.InferOutput<typeof BasicAuthSchema>;

const apiCheckDefaultsSchema = modelObject({
  // The base of member checks' relative urls (and their {{GROUP_BASE_URL}}).
  url: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      maxChars(MAX_URL_LENGTH),
      v.check((url) => url === '' || isTemplatedUrl(url) || isAbsoluteHttpUrl(url), 'must be empty or an http:// or https:// URL'),
    ),
    '',
  ),
  headers: v.optional(HeaderListSchema, () => []),
  queryParameters: v.optional(HeaderListSchema, () => []),
  assertions: v.optional(v.array(ApiAssertionSchema), () => []),
  basicAuth: v.optional(BasicAuthSchema, {}),
});
/** ApiCheckDefaultsSchema's type, by name (see `Same`). */
export interface ApiCheckDefaultsSchema extends Same<typeof apiCheckDefaultsSchema> {}
export const ApiCheckDefaultsSchema: ApiCheckDefaultsSchema = apiCheckDefaultsSchema;
export type ApiCheckDefaults = v.InferOutput<typeof ApiCheckDefaultsSchema>;
