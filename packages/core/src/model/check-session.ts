import * as v from 'valibot';
import { MAX_TAGS, MAX_TAG_LENGTH, NameSchema, NonEmptyStringSchema, TimestampSchema, UuidSchema, maxChars, queryInteger } from './primitives.js';
import { CheckResultResponseSchema, RunSourceSchema } from './check-result.js';
import { modelObject, oneOf } from './shared.js';

export const CHECK_SESSION_STATUSES = [
  'STARTED', 'PROGRESS', 'PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED',
] as const;
export type CheckSessionStatus = (typeof CHECK_SESSION_STATUSES)[number];
export const CheckSessionStatusSchema = oneOf(CHECK_SESSION_STATUSES);

/** Statuses a session (or sequence) never leaves. */
export const FINAL_SESSION_STATUSES = ['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'] as const;

export function isFinalSessionStatus(status: string): boolean {
  return (FINAL_SESSION_STATUSES as readonly string[]).includes(status);
}

const LabelSchema = NameSchema;
// A tag, or a tag with a leading `!` that negates it.
const MatchTagSchema = v.pipe(NonEmptyStringSchema, maxChars(MAX_TAG_LENGTH + 1));
const tooMany = `must hold at most ${MAX_TAGS} entries`;

/**
 * Body of POST /v1/check-sessions/trigger. matchTags: the outer array is OR, each inner array AND,
 * and a tag with a leading `!` negates.
 */
export const CheckSessionTriggerSchema = modelObject({
  target: v.optional(
    modelObject({
      checkId: v.optional(v.pipe(v.array(UuidSchema), v.minLength(1, 'must hold at least one check id'), v.maxLength(1000, 'must hold at most 1000 check ids'))),
      matchTags: v.optional(
        v.pipe(
          v.array(v.pipe(v.array(MatchTagSchema), v.minLength(1, 'must hold at least one tag'), v.maxLength(MAX_TAGS, tooMany))),
          v.maxLength(MAX_TAGS, tooMany),
        ),
      ),
    }),
  ),
  projectId: v.optional(LabelSchema),
  environment: v.optional(LabelSchema),
});
export type CheckSessionTrigger = v.InferOutput<typeof CheckSessionTriggerSchema>;

/** Body of POST /v1/check-sessions/{id}/cancel; no sequenceId cancels every in-progress sequence. */
export const CheckSessionCancelSchema = modelObject({
  sequenceId: v.optional(v.pipe(v.array(UuidSchema), v.minLength(1, 'must hold at least one sequence id'))),
});
export type CheckSessionCancel = v.InferOutput<typeof CheckSessionCancelSchema>;

/** Query of GET /v1/check-sessions/{id}/completion. */
export const CompletionQuerySchema = v.object({ maxWaitSeconds: queryInteger(1, 30, 30) });
export type CompletionQuery = v.InferOutput<typeof CompletionQuerySchema>;

/** One run location of a session. */
export const CheckSessionSequenceSchema = v.object({
  sequenceId: UuidSchema,
  runLocation: v.string(),
  status: CheckSessionStatusSchema,
});
export type CheckSessionSequence = v.InferOutput<typeof CheckSessionSequenceSchema>;

const sessionEntries = {
  checkSessionId: UuidSchema,
  checkId: v.string(),
  checkType: v.string(),
  name: v.string(),
  status: CheckSessionStatusSchema,
  startedAt: TimestampSchema,
  stoppedAt: v.nullable(TimestampSchema),
  /** Milliseconds from start to stop. */
  timeElapsed: v.nullable(v.number()),
  runLocations: v.array(v.string()),
  runSource: RunSourceSchema,
  projectId: v.nullable(v.string()),
  environment: v.nullable(v.string()),
  sequences: v.array(CheckSessionSequenceSchema),
};

export const CheckSessionSchema = v.object({ ...sessionEntries, accountId: v.string() });
export type CheckSession = v.InferOutput<typeof CheckSessionSchema>;

export const CheckSessionResponseSchema = v.object({
  ...sessionEntries,
  results: v.array(CheckResultResponseSchema),
});
export type CheckSessionResponse = v.InferOutput<typeof CheckSessionResponseSchema>;
