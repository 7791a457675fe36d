import * as v from 'valibot';
import { ApiRequestSchema } from './api-request.js';
import {
  isSafeRelativePath, recordEntries, responseEntries, responseTimeSchema, ScriptPathSchema, typeEntries, withFrequencyOffsetRule,
} from './check-common.js';
import {
  DEFAULT_FREQUENCY,
  CodeSchema,
  LongTextSchema,
  MAX_URL_LENGTH,
  NonEmptyStringSchema,
  TcpFrequencySchema,
  maxChars,
  type Same,
} from './primitives.js';
import {
  EnvironmentVariablesSchema,
  TcpAssertionSchema,
  integerAtLeast,
  integerBetween,
  modelObject,
  oneOf,
  updateEntries,
} from './shared.js';

/** The check types whose fields the core models; a plugin adds its own with `defineCheckType`. */
export const BUILTIN_CHECK_TYPES = ['TCP', 'API', 'BROWSER', 'HEARTBEAT', 'DNS', 'URL', 'ICMP', 'MULTI_STEP', 'PLAYWRIGHT'] as const;
export type BuiltinCheckType = (typeof BUILTIN_CHECK_TYPES)[number];

export {
  AlertChannelsSummarySchema, checkCommonEntries, CheckCommonCreateSchema, checkRecordEntries, checkResponseEntries,
  type AlertChannelsSummary, type CheckCommonCreate,
} from './check-common.js';
import { DnsCheckCreateSchema, DnsCheckResponseSchema, DnsCheckSchema, DnsCheckUpdateSchema } from './check-dns.js';
import { IcmpCheckCreateSchema, IcmpCheckResponseSchema, IcmpCheckSchema, IcmpCheckUpdateSchema } from './check-icmp.js';
import { PlaywrightCheckCreateSchema, PlaywrightCheckResponseSchema, PlaywrightCheckSchema, PlaywrightCheckUpdateSchema } from './check-playwright.js';
import { MultiStepCheckCreateSchema, MultiStepCheckResponseSchema, MultiStepCheckSchema, MultiStepCheckUpdateSchema } from './check-multistep.js';
import { UrlCheckCreateSchema, UrlCheckResponseSchema, UrlCheckSchema, UrlCheckUpdateSchema } from './check-url.js';

const tcpRequestSchema = modelObject({
  port: integerBetween(1, 65535),
  hostname: v.pipe(NonEmptyStringSchema, v.maxLength(253, 'must be at most 253 characters')),
  data: v.optional(v.nullable(LongTextSchema), null),
  assertions: v.optional(v.array(TcpAssertionSchema), () => []),
  ipFamily: v.optional(oneOf(['IPv4', 'IPv6']), 'IPv4'),
});
/** TcpRequestSchema's type, by name (see `Same`). */
export interface TcpRequestSchema extends Same<typeof tcpRequestSchema> {}
export const TcpRequestSchema: TcpRequestSchema = tcpRequestSchema;
export type TcpRequest = v.InferOutput<typeof TcpRequestSchema>;

const tcpEntries = typeEntries({
  frequency: v.optional(TcpFrequencySchema, DEFAULT_FREQUENCY),
  request: TcpRequestSchema,
  // Null: the scheduler derives a stable phase from the check id.
  frequencyOffset: v.optional(v.nullable(integerAtLeast(1)), null),
  degradedResponseTime: responseTimeSchema(3000),
  maxResponseTime: responseTimeSchema(5000),
});

export const TcpCheckCreateSchema = withFrequencyOffsetRule(tcpEntries);
export type TcpCheckCreate = v.InferOutput<typeof TcpCheckCreateSchema>;
export const TcpCheckUpdateSchema = modelObject(updateEntries(tcpEntries));
export type TcpCheckUpdate = v.InferOutput<typeof TcpCheckUpdateSchema>;
export const TcpCheckSchema = v.object(recordEntries(tcpEntries, 'TCP'));
export type TcpCheck = v.InferOutput<typeof TcpCheckSchema>;
export const TcpCheckResponseSchema = v.object(responseEntries(tcpEntries, 'TCP'));
export type TcpCheckResponse = v.InferOutput<typeof TcpCheckResponseSchema>;

// The spec bounds response times for TCP checks only (0..5000 ms); an HTTP API answers slower, so
// API checks take 0..30000 ms with defaults 10000 and 20000, as the product the spec follows does.
const apiResponseTimeSchema = (fallback: number) => v.optional(v.nullable(integerBetween(0, 30_000)), fallback);

const apiEntries = typeEntries({
  // "TCP checks additionally accept 0"; the frequencyOffset rules name API checks too, frequency 0 included.
  frequency: v.optional(TcpFrequencySchema, DEFAULT_FREQUENCY),
  request: ApiRequestSchema,
  frequencyOffset: v.optional(v.nullable(integerAtLeast(1)), null),
  degradedResponseTime: apiResponseTimeSchema(10_000),
  maxResponseTime: apiResponseTimeSchema(20_000),
});

export const ApiCheckCreateSchema = withFrequencyOffsetRule(apiEntries);
export type ApiCheckCreate = v.InferOutput<typeof ApiCheckCreateSchema>;
export const ApiCheckUpdateSchema = modelObject(updateEntries(apiEntries));
export type ApiCheckUpdate = v.InferOutput<typeof ApiCheckUpdateSchema>;
export const ApiCheckSchema = v.object(recordEntries(apiEntries, 'API'));
export type ApiCheck = v.InferOutput<typeof ApiCheckSchema>;
export const ApiCheckResponseSchema = v.object(responseEntries(apiEntries, 'API'));
export type ApiCheckResponse = v.InferOutput<typeof ApiCheckResponseSchema>;

const FQDN = /^(?=.{1,253}$)(?:(?!-)[a-z0-9-]{1,63}(?<!-)\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/i;


const browserDependencySchema = modelObject({
  path: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    maxChars(MAX_URL_LENGTH),
    v.check(isSafeRelativePath, 'must be a relative path without .. segments'),
  ),
  content: CodeSchema,
});
/** BrowserDependencySchema's type, by name (see `Same`). */
export interface BrowserDependencySchema extends Same<typeof browserDependencySchema> {}
export const BrowserDependencySchema: BrowserDependencySchema = browserDependencySchema;
export type BrowserDependency = v.InferOutput<typeof BrowserDependencySchema>;

const browserEntries = typeEntries({
  script: v.pipe(CodeSchema, v.check((s) => s.trim().length > 0, 'must not be empty')),
  scriptPath: ScriptPathSchema,
  dependencies: v.optional(v.nullable(v.array(BrowserDependencySchema)), null),
  sslCheckDomain: v.optional(
    v.nullable(v.pipe(v.string(), v.regex(FQDN, 'must be a fully qualified domain name without scheme or path'))),
    null,
  ),
  environmentVariables: v.optional(EnvironmentVariablesSchema, () => []),
});

export const BrowserCheckCreateSchema = modelObject(browserEntries);
export type BrowserCheckCreate = v.InferOutput<typeof BrowserCheckCreateSchema>;
export const BrowserCheckUpdateSchema = modelObject(updateEntries(browserEntries));
export type BrowserCheckUpdate = v.InferOutput<typeof BrowserCheckUpdateSchema>;
export const BrowserCheckSchema = v.object(recordEntries(browserEntries, 'BROWSER'));
export type BrowserCheck = v.InferOutput<typeof BrowserCheckSchema>;
export const BrowserCheckResponseSchema = v.object(responseEntries(browserEntries, 'BROWSER'));
export type BrowserCheckResponse = v.InferOutput<typeof BrowserCheckResponseSchema>;

export const HEARTBEAT_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export type HeartbeatUnit = (typeof HEARTBEAT_UNITS)[number];
export const HEARTBEAT_UNIT_SECONDS: Record<HeartbeatUnit, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };
const MIN_HEARTBEAT_PERIOD_SECONDS = 30;
const MAX_HEARTBEAT_SECONDS = 365 * 86400;

/** Seconds of an amount in a heartbeat unit. */
export function heartbeatSeconds(amount: number, unit: HeartbeatUnit): number {
  return amount * HEARTBEAT_UNIT_SECONDS[unit];
}

const heartbeatEntries = {
  period: integerAtLeast(1),
  periodUnit: oneOf(HEARTBEAT_UNITS),
  grace: integerAtLeast(0),
  graceUnit: oneOf(HEARTBEAT_UNITS),
};

const heartbeatCreateSchema = v.pipe(
  modelObject(heartbeatEntries),
  v.forward(
    v.partialCheck(
      [['period'], ['periodUnit']],
      (h) => {
        const seconds = heartbeatSeconds(h.period, h.periodUnit);
        return seconds >= MIN_HEARTBEAT_PERIOD_SECONDS && seconds <= MAX_HEARTBEAT_SECONDS;
      },
      'must be at least 30 seconds and at most 365 days',
    ),
    ['period'],
  ),
  v.forward(
    v.partialCheck(
      [['grace'], ['graceUnit']],
      (h) => heartbeatSeconds(h.grace, h.graceUnit) <= MAX_HEARTBEAT_SECONDS,
      'must be at most 365 days',
    ),
    ['grace'],
  ),
);
/** HeartbeatCreateSchema's type, by name (see `Same`). */
export interface HeartbeatCreateSchema extends Same<typeof heartbeatCreateSchema> {}
/** The heartbeat settings of a create body; the bounds name the field they concern. */
export const HeartbeatCreateSchema: HeartbeatCreateSchema = heartbeatCreateSchema;
export type HeartbeatCreate = v.InferOutput<typeof HeartbeatCreateSchema>;

const heartbeatRecordSchema = v.object({ ...heartbeatEntries, pingToken: v.string() });
/** HeartbeatRecordSchema's type, by name (see `Same`). */
export interface HeartbeatRecordSchema extends Same<typeof heartbeatRecordSchema> {}
/** Stored and answered heartbeat settings: the create fields plus the token pings present. */
export const HeartbeatRecordSchema: HeartbeatRecordSchema = heartbeatRecordSchema;
export type HeartbeatRecord = v.InferOutput<typeof HeartbeatRecordSchema>;

const heartbeatCreateEntries = typeEntries({ heartbeat: HeartbeatCreateSchema });
const heartbeatRecordEntries = typeEntries({ heartbeat: HeartbeatRecordSchema });

export const HeartbeatCheckCreateSchema = modelObject(heartbeatCreateEntries);
export type HeartbeatCheckCreate = v.InferOutput<typeof HeartbeatCheckCreateSchema>;
export const HeartbeatCheckUpdateSchema = modelObject(updateEntries(heartbeatCreateEntries));
export type HeartbeatCheckUpdate = v.InferOutput<typeof HeartbeatCheckUpdateSchema>;
export const HeartbeatCheckSchema = v.object(recordEntries(heartbeatRecordEntries, 'HEARTBEAT'));
export type HeartbeatCheck = v.InferOutput<typeof HeartbeatCheckSchema>;
export const HeartbeatCheckResponseSchema = v.object(responseEntries(heartbeatRecordEntries, 'HEARTBEAT'));
export type HeartbeatCheckResponse = v.InferOutput<typeof HeartbeatCheckResponseSchema>;

// The composite schemas' types are spelled out by reference to the per-type schemas: inferred, each
// would repeat their full types in core's declarations (40-55 KB apiece) for a host to check again.
export const CheckSchema: v.VariantSchema<
  'checkType',
  [
    typeof TcpCheckSchema, typeof ApiCheckSchema, typeof BrowserCheckSchema, typeof HeartbeatCheckSchema, typeof DnsCheckSchema, typeof UrlCheckSchema,
    typeof IcmpCheckSchema, typeof MultiStepCheckSchema, typeof PlaywrightCheckSchema,
  ],
  undefined
> = v.variant('checkType', [
  TcpCheckSchema, ApiCheckSchema, BrowserCheckSchema, HeartbeatCheckSchema, DnsCheckSchema, UrlCheckSchema, IcmpCheckSchema, MultiStepCheckSchema,
  PlaywrightCheckSchema,
]);
export type Check = v.InferOutput<typeof CheckSchema>;
export const CheckResponseSchema: v.VariantSchema<
  'checkType',
  [
    typeof TcpCheckResponseSchema,
    typeof ApiCheckResponseSchema,
    typeof BrowserCheckResponseSchema,
    typeof HeartbeatCheckResponseSchema,
    typeof DnsCheckResponseSchema,
    typeof UrlCheckResponseSchema,
    typeof IcmpCheckResponseSchema,
    typeof MultiStepCheckResponseSchema,
    typeof PlaywrightCheckResponseSchema,
  ],
  undefined
> = v.variant('checkType', [
  TcpCheckResponseSchema,
  ApiCheckResponseSchema,
  BrowserCheckResponseSchema,
  HeartbeatCheckResponseSchema,
  DnsCheckResponseSchema,
  UrlCheckResponseSchema,
  IcmpCheckResponseSchema,
  MultiStepCheckResponseSchema,
  PlaywrightCheckResponseSchema,
]);
export type CheckResponse = v.InferOutput<typeof CheckResponseSchema>;

/** Create body schema of each built-in check type. */
export const CheckCreateSchemas: {
  readonly TCP: typeof TcpCheckCreateSchema;
  readonly API: typeof ApiCheckCreateSchema;
  readonly BROWSER: typeof BrowserCheckCreateSchema;
  readonly HEARTBEAT: typeof HeartbeatCheckCreateSchema;
  readonly DNS: typeof DnsCheckCreateSchema;
  readonly URL: typeof UrlCheckCreateSchema;
  readonly ICMP: typeof IcmpCheckCreateSchema;
  readonly MULTI_STEP: typeof MultiStepCheckCreateSchema;
  readonly PLAYWRIGHT: typeof PlaywrightCheckCreateSchema;
} = {
  TCP: TcpCheckCreateSchema,
  API: ApiCheckCreateSchema,
  BROWSER: BrowserCheckCreateSchema,
  HEARTBEAT: HeartbeatCheckCreateSchema,
  DNS: DnsCheckCreateSchema,
  URL: UrlCheckCreateSchema,
  ICMP: IcmpCheckCreateSchema,
  MULTI_STEP: MultiStepCheckCreateSchema,
  PLAYWRIGHT: PlaywrightCheckCreateSchema,
} as const;
/** Update (PUT) body schema of each built-in check type. */
export const CheckUpdateSchemas: {
  readonly TCP: typeof TcpCheckUpdateSchema;
  readonly API: typeof ApiCheckUpdateSchema;
  readonly BROWSER: typeof BrowserCheckUpdateSchema;
  readonly HEARTBEAT: typeof HeartbeatCheckUpdateSchema;
  readonly DNS: typeof DnsCheckUpdateSchema;
  readonly URL: typeof UrlCheckUpdateSchema;
  readonly ICMP: typeof IcmpCheckUpdateSchema;
  readonly MULTI_STEP: typeof MultiStepCheckUpdateSchema;
  readonly PLAYWRIGHT: typeof PlaywrightCheckUpdateSchema;
} = {
  TCP: TcpCheckUpdateSchema,
  API: ApiCheckUpdateSchema,
  BROWSER: BrowserCheckUpdateSchema,
  HEARTBEAT: HeartbeatCheckUpdateSchema,
  DNS: DnsCheckUpdateSchema,
  URL: UrlCheckUpdateSchema,
  ICMP: IcmpCheckUpdateSchema,
  MULTI_STEP: MultiStepCheckUpdateSchema,
  PLAYWRIGHT: PlaywrightCheckUpdateSchema,
} as const;

/** The check types with environment variables of their own (a script reads them); secret ones are sealed at rest. */
export const SCRIPTED_CHECK_TYPES = ['BROWSER', 'MULTI_STEP', 'PLAYWRIGHT'] as const;

/** Whether a check of this type has environment variables of its own. */
export function hasOwnVariables<T extends { checkType: string }>(check: T): check is Extract<T, { checkType: (typeof SCRIPTED_CHECK_TYPES)[number] }> {
  return (SCRIPTED_CHECK_TYPES as readonly string[]).includes(check.checkType);
}

export function isBuiltinCheckType(checkType: string): checkType is BuiltinCheckType {
  return (BUILTIN_CHECK_TYPES as readonly string[]).includes(checkType);
}
