import * as v from 'valibot';
import { PageQuerySchema, TimestampSchema } from './primitives.js';
import { modelObject } from './shared.js';

const groupEntries = {
  id: v.string(),
  errorHash: v.string(),
  rawErrorMessage: v.nullable(v.string()),
  cleanedErrorMessage: v.string(),
  firstSeen: TimestampSchema,
  lastSeen: TimestampSchema,
  archivedUntilNextEvent: v.boolean(),
  /** Vigil's own: archived with archiveForEver, so a new occurrence does not unarchive it. */
  archivedForever: v.boolean(),
  rootCauseAnalyses: v.optional(v.array(v.record(v.string(), v.unknown())), () => []),
};

export const ErrorGroupSchema = v.object({ ...groupEntries, checkId: v.string(), accountId: v.string() });
export type ErrorGroup = v.InferOutput<typeof ErrorGroupSchema>;
export const ErrorGroupResponseSchema = v.object({ ...groupEntries, checkId: v.string() });
export type ErrorGroupResponse = v.InferOutput<typeof ErrorGroupResponseSchema>;

export const ErrorGroupPatchSchema = v.pipe(
  modelObject({
    archiveForEver: v.optional(v.boolean()),
    archivedUntilNextEvent: v.optional(v.boolean()),
  }),
  v.check(
    (b) => b.archiveForEver !== undefined || b.archivedUntilNextEvent !== undefined,
    'must set archiveForEver or archivedUntilNextEvent',
  ),
);
export type ErrorGroupPatch = v.InferOutput<typeof ErrorGroupPatchSchema>;
export const ErrorGroupListQuerySchema = PageQuerySchema;

export const PwtMetadataSchema = v.object({
  projectName: v.string(),
  testFile: v.string(),
  testTitle: v.string(),
  suitePath: v.array(v.string()),
});
export type PwtMetadata = v.InferOutput<typeof PwtMetadataSchema>;

const testSessionEntries = {
  ...groupEntries,
  projectId: v.nullable(v.string()),
  environments: v.nullable(v.array(v.string())),
  pwtMetadata: v.nullable(v.array(PwtMetadataSchema)),
};

export const TestSessionErrorGroupSchema = v.object({ ...testSessionEntries, accountId: v.string() });
export type TestSessionErrorGroup = v.InferOutput<typeof TestSessionErrorGroupSchema>;
export const TestSessionErrorGroupResponseSchema = v.object(testSessionEntries);
export type TestSessionErrorGroupResponse = v.InferOutput<typeof TestSessionErrorGroupResponseSchema>;
