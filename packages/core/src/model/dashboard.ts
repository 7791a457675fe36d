import * as v from 'valibot';
import { LongTextSchema, NameSchema, TagsSchema, TimestampSchema } from './primitives.js';
import { integerBetween, modelObject, oneOf, updateEntries } from './shared.js';
import { HostNameSchema, HttpUrlSchema, SubdomainSchema } from './urls.js';

export const DASHBOARD_WIDTHS = ['FULL', '960PX'] as const;
export const REFRESH_RATES = [60, 300, 600] as const;
export const PAGINATION_RATES = [30, 60, 300] as const;

const dashboardEntries = {
  header: NameSchema,
  // Optional: the service derives one from the dashboardId when absent.
  customUrl: v.optional(SubdomainSchema),
  customDomain: v.optional(v.nullable(v.pipe(HostNameSchema, v.includes('.', 'must be a domain name with a dot'))), null),
  logo: v.optional(v.nullable(HttpUrlSchema), null),
  favicon: v.optional(v.nullable(HttpUrlSchema), null),
  link: v.optional(v.nullable(HttpUrlSchema), null),
  description: v.optional(v.nullable(LongTextSchema), null),
  width: v.optional(oneOf(DASHBOARD_WIDTHS), 'FULL'),
  refreshRate: v.optional(oneOf(REFRESH_RATES), 60),
  paginate: v.optional(v.boolean(), true),
  paginationRate: v.optional(oneOf(PAGINATION_RATES), 60),
  checksPerPage: v.optional(v.nullable(integerBetween(1, 20)), 15),
  useTagsAndOperator: v.optional(v.nullable(v.boolean()), false),
  hideTags: v.optional(v.boolean(), false),
  enableIncidents: v.optional(v.boolean(), false),
  expandChecks: v.optional(v.boolean(), false),
  tags: v.optional(TagsSchema, () => []),
  showHeader: v.optional(v.boolean(), true),
  showCheckRunLinks: v.optional(v.boolean(), false),
  showGroupNames: v.optional(v.boolean(), true),
  customCSS: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(50_000, 'must be at most 50000 characters'))), ''),
  isPrivate: v.optional(v.boolean(), false),
  showP95: v.optional(v.boolean(), true),
  showP99: v.optional(v.boolean(), true),
};

export const DashboardCreateSchema = modelObject(dashboardEntries);
export type DashboardCreate = v.InferOutput<typeof DashboardCreateSchema>;
export const DashboardUpdateSchema = modelObject(updateEntries(dashboardEntries));
export type DashboardUpdate = v.InferOutput<typeof DashboardUpdateSchema>;

/** A private dashboard's access key as stored: sealed by the SecretBox. */
export const DashboardKeyRecordSchema = v.object({
  id: v.string(),
  encryptedKey: v.string(),
  maskedKey: v.string(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
});
export type DashboardKeyRecord = v.InferOutput<typeof DashboardKeyRecordSchema>;

export const DashboardKeyResponseSchema = v.object({
  id: v.string(),
  rawKey: v.string(),
  maskedKey: v.string(),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
});
export type DashboardKeyResponse = v.InferOutput<typeof DashboardKeyResponseSchema>;

const storedEntries = { ...dashboardEntries, customUrl: v.string() };

export const DashboardSchema = v.object({
  ...storedEntries,
  id: v.number(),
  dashboardId: v.string(),
  accountId: v.string(),
  keys: v.array(DashboardKeyRecordSchema),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
});
export type Dashboard = v.InferOutput<typeof DashboardSchema>;

export const DashboardResponseSchema = v.object({
  ...storedEntries,
  header: v.nullable(v.string()),
  id: v.number(),
  dashboardId: v.string(),
  keys: v.array(DashboardKeyResponseSchema),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
});
export type DashboardResponse = v.InferOutput<typeof DashboardResponseSchema>;
