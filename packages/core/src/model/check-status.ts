import * as v from 'valibot';
import { TimestampSchema } from './primitives.js';

const statusEntries = {
  name: v.string(),
  checkId: v.string(),
  /** Currently failing. */
  hasFailures: v.boolean(),
  /** Failing because of an internal error of Vigil, not of the target. */
  hasErrors: v.boolean(),
  isDegraded: v.boolean(),
  longestRun: v.nullable(v.number()),
  shortestRun: v.nullable(v.number()),
  lastRunLocation: v.nullable(v.string()),
  lastCheckRunId: v.nullable(v.string()),
  sslDaysRemaining: v.nullable(v.number()),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};

export const CheckStatusSchema = v.object({ ...statusEntries, accountId: v.string() });
export type CheckStatus = v.InferOutput<typeof CheckStatusSchema>;

export const CheckStatusResponseSchema = v.object(statusEntries);
export type CheckStatusResponse = v.InferOutput<typeof CheckStatusResponseSchema>;
