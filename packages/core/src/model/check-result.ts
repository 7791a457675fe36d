import * as v from 'valibot';
import { DateTimeSchema, PageQuerySchema, TimestampSchema, UuidSchema } from './primitives.js';
import { oneOf } from './shared.js';

/** What started a run; a browser script sees it as VIGIL_RUN_SOURCE. */
export const RUN_SOURCES = ['SCHEDULER', 'SCHEDULE_NOW', 'TRIGGER_API', 'TEST'] as const;
export const RunSourceSchema = oneOf(RUN_SOURCES);

/** FINAL is the outcome of a run; ATTEMPT a try that a retry followed. */
export const RESULT_TYPES = ['FINAL', 'ATTEMPT'] as const;
export const ResultTypeSchema = oneOf(RESULT_TYPES);

const resultEntries = {
  id: UuidSchema,
  checkId: v.string(),
  // A string rather than the spec's enum: plugins add check types.
  checkType: v.string(),
  name: v.string(),
  runLocation: v.string(),
  startedAt: TimestampSchema,
  stoppedAt: TimestampSchema,
  created_at: TimestampSchema,
  /** Milliseconds. */
  responseTime: v.pipe(v.number(), v.minValue(0)),
  hasFailures: v.boolean(),
  hasErrors: v.boolean(),
  isDegraded: v.boolean(),
  overMaxResponseTime: v.boolean(),
  attempts: v.pipe(v.number(), v.integer(), v.minValue(1)),
  resultType: ResultTypeSchema,
  runSource: RunSourceSchema,
  checkSessionId: v.nullable(v.string()),
  sequenceId: v.nullable(v.string()),
  errorMessage: v.nullable(v.string()),
  /** Milliseconds per phase (TCP: dns, connection, data, total). */
  phases: v.record(v.string(), v.number()),
  statusCode: v.nullable(v.number()),
  sslDaysRemaining: v.nullable(v.number()),
  /** Runner-specific: logs, assertion outcomes, web vitals, ... */
  details: v.nullable(v.record(v.string(), v.unknown())),
};

export const CheckResultSchema = v.object({ ...resultEntries, accountId: v.string() });
export type CheckResult = v.InferOutput<typeof CheckResultSchema>;

export const CheckResultResponseSchema = v.object(resultEntries);
export type CheckResultResponse = v.InferOutput<typeof CheckResultResponseSchema>;

/** Query of GET /v1/check-results/{checkId}: a page, optionally narrowed to a window and a type. */
export const CheckResultsQuerySchema = v.pipe(
  v.object({
    ...PageQuerySchema.entries,
    from: v.optional(DateTimeSchema),
    to: v.optional(DateTimeSchema),
    resultType: v.optional(ResultTypeSchema),
  }),
  v.forward(
    v.partialCheck(
      [['from'], ['to']],
      (q) => q.from === undefined || q.to === undefined || q.from <= q.to,
      'must not be before from',
    ),
    ['to'],
  ),
);
export type CheckResultsQuery = v.InferOutput<typeof CheckResultsQuerySchema>;
