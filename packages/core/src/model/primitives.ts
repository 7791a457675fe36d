import * as v from 'valibot';

/**
 * A type as itself. An interface that extends `Same<typeof schema>` gives a schema's type a name,
 * so that declarations which hold the schema name it instead of repeating its whole type.
 */
export type Same<T> = T;

/** Data-center locations, exactly as the spec lists them. */
export const LOCATIONS = [
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ca-central-1', 'sa-east-1', 'eu-west-1',
  'eu-central-1', 'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-south-1', 'me-south-1',
  'ap-southeast-1', 'ap-northeast-1', 'ap-east-1', 'ap-southeast-2', 'ap-southeast-3',
  'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'af-south-1',
] as const;
export const LocationSchema = v.picklist(LOCATIONS, 'must be one of the data-center locations');
export type Location = v.InferOutput<typeof LocationSchema>;

/** Runtime identifiers, newest first, as the spec lists them. */
export const RUNTIME_IDS = ['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10'] as const;
export const RuntimeIdSchema = v.picklist(RUNTIME_IDS, `must be one of ${RUNTIME_IDS.join(', ')}`);
export type RuntimeId = v.InferOutput<typeof RuntimeIdSchema>;

/** Every check type the spec's enumeration names. */
export const CHECK_TYPES = [
  'AGENTIC', 'API', 'BROWSER', 'HEARTBEAT', 'ICMP', 'MULTI_STEP', 'TCP', 'PLAYWRIGHT', 'URL', 'DNS',
] as const;
export const CheckTypeSchema = v.picklist(CHECK_TYPES);
export type CheckType = v.InferOutput<typeof CheckTypeSchema>;

/** Check frequencies in minutes. Browser checks accept exactly these; TCP checks also accept 0. */
export const FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
export const TCP_FREQUENCIES = [0, ...FREQUENCIES] as const;
export const DEFAULT_FREQUENCY = 10;
export const FrequencySchema = v.picklist(FREQUENCIES, `must be one of ${FREQUENCIES.join(', ')}`);
export const TcpFrequencySchema = v.picklist(TCP_FREQUENCIES, `must be one of ${TCP_FREQUENCIES.join(', ')}`);

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** True for an ISO 8601 calendar date or timestamp that names a real instant. */
export function isIsoDateOrDateTime(value: string): boolean {
  if (!ISO_DATE.test(value) && !ISO_DATE_TIME.test(value)) return false;
  const t = Date.parse(value);
  if (Number.isNaN(t)) return false;
  // Reject calendar overflow such as 2026-02-31, which Date.parse rolls into March.
  const [y, m, d] = value.slice(0, 10).split('-').map(Number);
  const probe = new Date(Date.UTC(y!, m! - 1, d!));
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === m! - 1 && probe.getUTCDate() === d;
}

const dateTimeSchema = v.pipe(
  v.string(),
  v.check(isIsoDateOrDateTime, 'must be an ISO 8601 date or date-time'),
  v.transform((s) => new Date(s).toISOString()),
);
/** DateTimeSchema's type, by name (see `Same`). */
export interface DateTimeSchema extends Same<typeof dateTimeSchema> {}
/**
 * An ISO 8601 date or date-time on input, normalised to a UTC timestamp
 * (`2026-05-01T10:00:00.000Z`) so that stored values compare and sort as strings.
 */
export const DateTimeSchema: DateTimeSchema = dateTimeSchema;

/** A timestamp in a response: the ISO string the service wrote. */
export const TimestampSchema = v.string();

const nonEmptyStringSchema = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'));
/** NonEmptyStringSchema's type, by name (see `Same`). */
export interface NonEmptyStringSchema extends Same<typeof nonEmptyStringSchema> {}
export const NonEmptyStringSchema: NonEmptyStringSchema = nonEmptyStringSchema;

export const PositiveIntegerSchema = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1));

const numericIdSchema = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,15}$/, 'must be a positive integer'), v.transform(Number))]),
  v.number(),
  v.integer('must be a positive integer'),
  v.minValue(1, 'must be a positive integer'),
);
/** NumericIdSchema's type, by name (see `Same`). */
export interface NumericIdSchema extends Same<typeof numericIdSchema> {}
/** Numeric resource ids in paths (groups, alert channels, dashboards, maintenance windows). */
export const NumericIdSchema: NumericIdSchema = numericIdSchema;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuidSchema = v.pipe(v.string(), v.regex(UUID, 'must be a UUID'));
/** UuidSchema's type, by name (see `Same`). */
export interface UuidSchema extends Same<typeof uuidSchema> {}
export const UuidSchema: UuidSchema = uuidSchema;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const queryBooleanSchema = v.pipe(
  v.union([v.boolean(), v.picklist(['true', 'false'], 'must be true or false')]),
  v.transform((b) => b === true || b === 'true'),
);
/** QueryBooleanSchema's type, by name (see `Same`). */
export interface QueryBooleanSchema extends Same<typeof queryBooleanSchema> {}
/** Query-string boolean: `true`/`false` (also real booleans when a caller passes parsed values). */
export const QueryBooleanSchema: QueryBooleanSchema = queryBooleanSchema;

const queryIntegerSchema = (min: number, max: number, fallback: number) =>
  v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^-?\d+$/, 'must be an integer'), v.transform(Number))]),
      v.number(),
      v.integer('must be an integer'),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    fallback,
  );
/** The type of queryInteger's schemas, by name (see `Same`). */
export interface QueryIntegerSchema extends Same<ReturnType<typeof queryIntegerSchema>> {}
/** Query-string integer in a range, with a default when absent. */
export function queryInteger(min: number, max: number, fallback: number): QueryIntegerSchema {
  return queryIntegerSchema(min, max, fallback);
}

/** `limit` (1..100, default 10) and `page` (>= 1, default 1) of the page lists of docs/decisions.md. */
export const PageQuerySchema = v.object({
  limit: queryInteger(1, 100, 10),
  page: queryInteger(1, Number.MAX_SAFE_INTEGER, 1),
});
export type PageQuery = v.InferOutput<typeof PageQuerySchema>;

/** `limit` (1..100, default 20) and `nextId` of the status-page cursor lists. */
export const CursorQuerySchema = v.object({
  limit: queryInteger(1, 100, 20),
  nextId: v.optional(v.pipe(v.string(), v.minLength(1))),
});
export type CursorQuery = v.InferOutput<typeof CursorQuerySchema>;

/** A page of a cursor list, as the spec's status-page reads answer. */
export interface CursorPage<T> {
  length: number;
  entries: T[];
  nextId: string | null;
}

/** A page of a page list; the HTTP adapter puts `total` into `Content-Range`. */
export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
}

/** The spec's error body. */
export const ErrorBodySchema = v.object({
  statusCode: v.number(),
  error: v.string(),
  message: v.string(),
});

/**
 * Maxima of free-text fields (docs/decisions.md "string lengths"). A longer value is a 400 naming
 * the field; where the API states a maximum (a maintenance window's name, a description) it wins.
 */
export const MAX_NAME_LENGTH = 255;
export const MAX_TAG_LENGTH = 64;
export const MAX_TAGS = 100;
export const MAX_HEADER_KEY_LENGTH = 255;
export const MAX_HEADER_VALUE_LENGTH = 4096;
export const MAX_URL_LENGTH = 2048;
export const MAX_LONG_TEXT_LENGTH = 10_000;
/** Code (scripts, snippets, dependencies, request bodies) may be longer than prose. */
export const MAX_CODE_LENGTH = 100_000;

/** A string of at most `max` characters; the message states the maximum. */
export function maxChars(max: number) {
  return v.maxLength<string, number, string>(max, `must be at most ${max} characters`);
}

const boundedStringSchema = (max: number) => v.pipe(v.string(), maxChars(max));
/** The type of boundedString's schemas, by name (see `Same`). */
export interface BoundedStringSchema extends Same<ReturnType<typeof boundedStringSchema>> {}
/** A string of at most `max` characters. */
export function boundedString(max: number): BoundedStringSchema {
  return boundedStringSchema(max);
}

const requiredNameSchema = (max: number) => v.pipe(NonEmptyStringSchema, maxChars(max));
/** The type of nameSchema's schemas (NameSchema's too), by name (see `Same`). */
export interface NameSchema extends Same<ReturnType<typeof requiredNameSchema>> {}
/** A required name: trimmed, not empty, at most 255 characters (or the API's own maximum). */
export function nameSchema(max: number = MAX_NAME_LENGTH): NameSchema {
  return requiredNameSchema(max);
}
export const NameSchema: NameSchema = nameSchema();

const tagSchema = v.pipe(NonEmptyStringSchema, maxChars(MAX_TAG_LENGTH));
/** TagSchema's type, by name (see `Same`). */
export interface TagSchema extends Same<typeof tagSchema> {}
/** One tag: not empty, at most 64 characters. */
export const TagSchema: TagSchema = tagSchema;

const tagsSchema = v.pipe(v.array(TagSchema), v.maxLength(MAX_TAGS, `must hold at most ${MAX_TAGS} tags`));
/** TagsSchema's type, by name (see `Same`). */
export interface TagsSchema extends Same<typeof tagsSchema> {}
/** The tags of a resource: at most 100, each a TagSchema. */
export const TagsSchema: TagsSchema = tagsSchema;

/** Free text such as an incident update's description: at most 10,000 characters. */
export const LongTextSchema = boundedString(MAX_LONG_TEXT_LENGTH);

/** Code or a document sent as is (scripts, snippets, request bodies): at most 100,000 characters. */
export const CodeSchema = boundedString(MAX_CODE_LENGTH);
