import * as v from 'valibot';
import { DateTimeSchema, MAX_LONG_TEXT_LENGTH, NameSchema, TimestampSchema, nameSchema } from './primitives.js';
import { integerAtLeast, modelObject, oneOf } from './shared.js';

export const INCIDENT_IMPACTS = ['MAINTENANCE', 'MAJOR', 'MINOR'] as const;
export const INCIDENT_UPDATE_STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE'] as const;
export type IncidentUpdateStatus = (typeof INCIDENT_UPDATE_STATUSES)[number];

export const IncidentUpdateCreateSchema = modelObject({
  status: oneOf(INCIDENT_UPDATE_STATUSES),
  description: nameSchema(MAX_LONG_TEXT_LENGTH),
});
export type IncidentUpdateCreate = v.InferOutput<typeof IncidentUpdateCreateSchema>;

export const IncidentCreateSchema = modelObject({
  name: NameSchema,
  impact: v.optional(oneOf(INCIDENT_IMPACTS), 'MINOR'),
  dashboardId: integerAtLeast(1),
  incidentUpdates: v.pipe(
    v.array(IncidentUpdateCreateSchema),
    v.length(1, 'must hold exactly one update on create'),
  ),
  startedAt: v.optional(v.nullable(DateTimeSchema)),
  stoppedAt: v.optional(v.nullable(DateTimeSchema)),
});
export type IncidentCreate = v.InferOutput<typeof IncidentCreateSchema>;

/** PUT of an incident: its own fields; updates are added through their own route. */
export const IncidentUpdateSchema = modelObject({
  name: v.optional(NameSchema),
  impact: v.optional(oneOf(INCIDENT_IMPACTS)),
  startedAt: v.optional(v.nullable(DateTimeSchema)),
  stoppedAt: v.optional(v.nullable(DateTimeSchema)),
});
export type IncidentUpdate = v.InferOutput<typeof IncidentUpdateSchema>;

const incidentEntries = {
  id: v.string(),
  name: v.string(),
  impact: oneOf(INCIDENT_IMPACTS),
  dashboardId: v.number(),
  startedAt: v.nullable(TimestampSchema),
  stoppedAt: v.nullable(TimestampSchema),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};

export const IncidentSchema = v.object({ ...incidentEntries, accountId: v.string() });
export type Incident = v.InferOutput<typeof IncidentSchema>;

const updateRecordEntries = {
  id: v.string(),
  incidentId: v.string(),
  status: oneOf(INCIDENT_UPDATE_STATUSES),
  description: v.string(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};

export const IncidentUpdateRecordSchema = v.object({ ...updateRecordEntries, accountId: v.string() });
export type IncidentUpdateRecord = v.InferOutput<typeof IncidentUpdateRecordSchema>;
export const IncidentUpdateResponseSchema = v.object(updateRecordEntries);
export type IncidentUpdateResponse = v.InferOutput<typeof IncidentUpdateResponseSchema>;

export const IncidentResponseSchema = v.object({
  ...incidentEntries,
  incidentUpdates: v.pipe(v.array(IncidentUpdateResponseSchema), v.minLength(1)),
});
export type IncidentResponse = v.InferOutput<typeof IncidentResponseSchema>;
