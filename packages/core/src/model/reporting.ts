import * as v from 'valibot';
import { NonEmptyStringSchema, QueryBooleanSchema } from './primitives.js';
import { oneOf } from './shared.js';
import { queryList, WindowBoundSchema } from './time-window.js';

/** Exactly as the spec spells them for reporting (last24Hrs, unlike analytics' last24Hours). */
export const REPORTING_QUICK_RANGES = ['last24Hrs', 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as const;

export const ReportingQuerySchema = v.object({
  from: v.optional(WindowBoundSchema),
  to: v.optional(WindowBoundSchema),
  quickRange: v.optional(oneOf(REPORTING_QUICK_RANGES), 'last24Hrs'),
  filterByTags: v.optional(queryList(NonEmptyStringSchema)),
  deactivated: v.optional(QueryBooleanSchema),
});
export type ReportingQuery = v.InferOutput<typeof ReportingQuerySchema>;

export const ReportEntrySchema = v.object({
  name: v.string(),
  checkId: v.string(),
  checkType: v.string(),
  deactivated: v.optional(v.boolean(), false),
  tags: v.array(v.string()),
  aggregate: v.object({ successRatio: v.number(), avg: v.number(), p95: v.number(), p99: v.number() }),
});
export type ReportEntry = v.InferOutput<typeof ReportEntrySchema>;
