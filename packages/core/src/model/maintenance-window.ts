import * as v from 'valibot';
import { DateTimeSchema, TagsSchema, TimestampSchema, nameSchema } from './primitives.js';
import { integerBetween, modelObject, oneOf, updateEntries } from './shared.js';

export const REPEAT_UNITS = ['DAY', 'WEEK', 'MONTH'] as const;
export type RepeatUnit = (typeof REPEAT_UNITS)[number];

/** True for an IANA time zone name this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const windowEntries = {
  // The API states this maximum.
  name: nameSchema(200),
  startsAt: DateTimeSchema,
  endsAt: DateTimeSchema,
  repeatUnit: oneOf(REPEAT_UNITS),
  tags: v.optional(TagsSchema, () => []),
  // Null with a repeatUnit means every single unit (an interval of 1).
  repeatInterval: v.optional(v.nullable(integerBetween(1, 365)), null),
  repeatEndsAt: v.optional(v.nullable(DateTimeSchema), null),
  pauseAllChecks: v.optional(v.boolean(), false),
  silenceAlertsTags: v.optional(TagsSchema, () => []),
  silenceAllAlerts: v.optional(v.boolean(), false),
  timezone: v.optional(v.pipe(v.string(), v.maxLength(64, 'must be at most 64 characters'), v.check(isTimeZone, 'must be an IANA time zone such as Europe/Berlin')), 'UTC'),
};

export const MaintenanceWindowCreateSchema = v.pipe(
  modelObject(windowEntries),
  v.forward(
    v.partialCheck([['startsAt'], ['endsAt']], (w) => w.endsAt > w.startsAt, 'must be after startsAt'),
    ['endsAt'],
  ),
  v.forward(
    v.partialCheck(
      [['startsAt'], ['repeatEndsAt']],
      (w) => w.repeatEndsAt === null || w.repeatEndsAt === undefined || w.repeatEndsAt >= w.startsAt,
      'must not be before startsAt',
    ),
    ['repeatEndsAt'],
  ),
);
export type MaintenanceWindowCreate = v.InferOutput<typeof MaintenanceWindowCreateSchema>;

/** PUT /v1/maintenance-windows/{id}: the spec requires name, startsAt, endsAt and repeatUnit. */
export const MaintenanceWindowUpdateSchema = modelObject({
  ...updateEntries(windowEntries),
  name: windowEntries.name,
  startsAt: windowEntries.startsAt,
  endsAt: windowEntries.endsAt,
  repeatUnit: windowEntries.repeatUnit,
});
export type MaintenanceWindowUpdate = v.InferOutput<typeof MaintenanceWindowUpdateSchema>;

const stampEntries = { created_at: TimestampSchema, updated_at: v.nullable(TimestampSchema) };

export const MaintenanceWindowSchema = v.object({ ...windowEntries, id: v.number(), accountId: v.string(), ...stampEntries });
export type MaintenanceWindow = v.InferOutput<typeof MaintenanceWindowSchema>;
export const MaintenanceWindowResponseSchema = v.object({ ...windowEntries, id: v.number(), ...stampEntries });
export type MaintenanceWindowResponse = v.InferOutput<typeof MaintenanceWindowResponseSchema>;
