import * as v from 'valibot';
import { frequencyOffsetError } from '../rules/frequency-offset.js';
import {
  DEFAULT_FREQUENCY,
  FrequencySchema,
  LocationSchema,
  MAX_URL_LENGTH,
  maxChars,
  NameSchema,
  RuntimeIdSchema,
  TagsSchema,
  TimestampSchema,
} from './primitives.js';
import {
  AlertChannelSubscriptionSchema,
  AlertSettingsSchema,
  RetryStrategySchema,
  TriggerIncidentSchema,
  integerAtLeast,
  integerBetween,
  modelObject,
  type ModelObject,
} from './shared.js';

// What every check type's model is made of: the common fields, the fields a stored check and a
// response add, the alert channel summary of a response, and the frequency-offset rule of the
// types that run more often than once a minute.

const PrivateLocationsSchema = v.nullable(v.array(NameSchema));

/** Whether a path stays inside the folder it is relative to: not absolute, no `..` segment. */
export function isSafeRelativePath(path: string): boolean {
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) return false;
  return path.split(/[\\/]/).every((segment) => segment !== '..');
}

/** Where a scripted check's code lives in the project that defines it, for checks as code; null when none. */
export const ScriptPathSchema = v.optional(
  v.nullable(v.pipe(v.string(), maxChars(MAX_URL_LENGTH), v.check(isSafeRelativePath, 'must be a relative path without .. segments'))),
  null,
);

/** The spec's "Check (common fields, browser and TCP)", with its defaults; frequency is per type. */
export const checkCommonEntries = {
  name: NameSchema,
  activated: v.optional(v.boolean(), true),
  muted: v.optional(v.boolean(), false),
  doubleCheck: v.optional(v.boolean(), true),
  shouldFail: v.optional(v.boolean(), false),
  locations: v.optional(v.nullable(v.array(LocationSchema)), () => []),
  tags: v.optional(TagsSchema, () => []),
  alertSettings: v.optional(AlertSettingsSchema, {}),
  useGlobalAlertSettings: v.optional(v.boolean(), true),
  groupId: v.optional(v.nullable(integerAtLeast(1)), null),
  groupOrder: v.optional(v.nullable(integerAtLeast(0)), null),
  runtimeId: v.optional(v.nullable(RuntimeIdSchema), null),
  alertChannelSubscriptions: v.optional(v.array(AlertChannelSubscriptionSchema), () => []),
  retryStrategy: v.optional(v.nullable(RetryStrategySchema), null),
  triggerIncident: v.optional(v.nullable(TriggerIncidentSchema), null),
  runParallel: v.optional(v.boolean(), false),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters'))), null),
  frequency: v.optional(FrequencySchema, DEFAULT_FREQUENCY),
  privateLocations: v.optional(PrivateLocationsSchema, () => []),
};

/** The common fields alone, for check types a plugin adds (its runner validates the rest). */
export const CheckCommonCreateSchema = modelObject(checkCommonEntries);
export type CheckCommonCreate = v.InferOutput<typeof CheckCommonCreateSchema>;

/** The fields a stored check adds to its body: id, accountId and the time stamps. */
export const checkRecordEntries = {
  id: v.string(),
  accountId: v.string(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};

/** The fields a check response adds to its body (no accountId; checkType and alertChannels come per type). */
export const checkResponseEntries = {
  id: v.string(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};

const keyValueLockedSchema = v.object({ key: v.string(), value: v.string(), locked: v.boolean() });

/** The spec's `alertChannels` of a check response: the channels the check notifies, by kind. */
export const AlertChannelsSummarySchema = v.object({
  email: v.array(v.object({ address: v.string() })),
  webhook: v.array(
    v.object({
      url: v.string(),
      name: v.string(),
      method: v.string(),
      headers: v.array(keyValueLockedSchema),
      queryParameters: v.array(keyValueLockedSchema),
    }),
  ),
  chat: v.array(v.object({ url: v.string() })),
  sms: v.array(v.object({ number: v.string(), name: v.string() })),
});
export type AlertChannelsSummary = v.InferOutput<typeof AlertChannelsSummarySchema>;

/** A response-time bound of 0..5000 ms (the spec's, for TCP checks), null for none. */
export const responseTimeSchema = (fallback: number) => v.optional(v.nullable(integerBetween(0, 5000)), fallback);

function offsetProblem(input: { frequency?: number; frequencyOffset?: number | null }): string | null {
  const frequency = input.frequency ?? DEFAULT_FREQUENCY;
  const offset = input.frequencyOffset ?? null;
  if (offset === null) return frequency === 0 ? 'is required when frequency is 0 (10, 20 or 30)' : null;
  return frequencyOffsetError(frequency, offset);
}

type OffsetEntries = v.ObjectEntries & { frequency: v.GenericSchema<unknown, number>; frequencyOffset: v.GenericSchema<unknown, number | null> };

/** A create schema with the spec's frequencyOffset rules ("TCP checks; also API checks"), reported on frequencyOffset. */
export function withFrequencyOffsetRule<const TEntries extends OffsetEntries>(
  entries: TEntries,
): v.SchemaWithPipe<readonly [ModelObject<TEntries>, v.GenericPipeAction<v.InferOutput<ModelObject<TEntries>>>]> {
  return v.pipe(
    modelObject(entries),
    v.forward(
      v.partialCheck(
        [['frequency'], ['frequencyOffset']] as never,
        (input) => offsetProblem(input as Parameters<typeof offsetProblem>[0]) === null,
        (issue) => offsetProblem(issue.input as Parameters<typeof offsetProblem>[0]) ?? 'is invalid',
      ),
      ['frequencyOffset'] as never,
    ),
  );
}

/** The common entries, by name (an interface): a type's declarations name them instead of repeating them. */
export interface CheckCommonEntries extends CommonEntriesShape {}
type CommonEntriesShape = typeof checkCommonEntries;
export type CheckRecordEntries = typeof checkRecordEntries;
export type CheckResponseEntries = typeof checkResponseEntries;

/** A check type's entries: the common ones (those it sets itself replaced) and its own. */
export function typeEntries<const TOwn extends v.ObjectEntries>(own: TOwn): Omit<CheckCommonEntries, keyof TOwn> & TOwn {
  return { ...checkCommonEntries, ...own } as Omit<CheckCommonEntries, keyof TOwn> & TOwn;
}

/** A stored check's entries: its type's, the record's, and its checkType. */
export function recordEntries<const TEntries extends v.ObjectEntries, const TType extends string>(
  entries: TEntries,
  checkType: TType,
): TEntries & CheckRecordEntries & { checkType: v.LiteralSchema<TType, undefined> } {
  return { ...entries, ...checkRecordEntries, checkType: v.literal(checkType) };
}

/** A check response's entries: its type's, the response's, its checkType and the alert channel summary. */
export function responseEntries<const TEntries extends v.ObjectEntries, const TType extends string>(
  entries: TEntries,
  checkType: TType,
): TEntries & CheckResponseEntries & { checkType: v.LiteralSchema<TType, undefined>; alertChannels: typeof AlertChannelsSummarySchema } {
  return { ...entries, ...checkResponseEntries, checkType: v.literal(checkType), alertChannels: AlertChannelsSummarySchema };
}
