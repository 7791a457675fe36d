import * as v from 'valibot';
import { TimestampSchema } from './primitives.js';
import { oneOf } from './shared.js';

/**
 * The resources that checks as code manages, in the order `apply` creates them: what a resource
 * refers to comes before it (a check names its group and alert channels), so deletes run backwards.
 */
export const RESOURCE_KINDS = ['AlertChannel', 'CheckGroup', 'Check', 'MaintenanceWindow', 'Dashboard'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];
export const ResourceKindSchema = oneOf(RESOURCE_KINDS);

/** A logical id: what a construct is called in code, stable across renames of the resource. */
export const LogicalIdSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$/, 'must start with a letter or digit and hold only letters, digits and _ . : @ / -'),
);

/** The code base a set of constructs comes from; logical ids are unique within it. */
export const ProjectNameSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100, 'must be at most 100 characters'),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$/, 'must start with a letter or digit and hold only letters, digits and _ . : @ / -'),
);

export const DEFAULT_PROJECT = 'default';

/**
 * The record that a resource was made by code: which construct (project, kind, logical id) made
 * which resource. Kept beside the resource rather than in it, so the API's shapes stay the spec's
 * and a resource made by hand (no such record) is never touched by `apply`.
 */
export const ManagedResourceSchema = v.object({
  accountId: v.string(),
  project: v.string(),
  kind: ResourceKindSchema,
  logicalId: v.string(),
  /** The resource's id; a numeric id as its decimal text. */
  resourceId: v.string(),
  /** The fields the construct set when it was last applied: a field dropped from it goes back to its default. */
  fields: v.array(v.string()),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
});
export type ManagedResource = v.InferOutput<typeof ManagedResourceSchema>;
