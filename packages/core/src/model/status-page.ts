import * as v from 'valibot';
import {
  CursorQuerySchema,
  DateTimeSchema,
  MAX_LONG_TEXT_LENGTH,
  MAX_NAME_LENGTH,
  NameSchema,
  QueryBooleanSchema,
  TimestampSchema,
  maxChars,
  nameSchema,
} from './primitives.js';
import { INCIDENT_UPDATE_STATUSES } from './incident.js';
import { modelObject, oneOf, updateEntries } from './shared.js';
import { HostNameSchema, HttpUrlSchema, SubdomainSchema } from './urls.js';

export const THEME_COLOR_FIELDS = [
  'bodyBackgroundColor', 'headerBackgroundColor', 'headerFontColor', 'titleFontColor', 'bodyFontColor',
  'bodyFontColorMuted', 'navigationFontColor', 'linkFontColor', 'cardBackgroundColor', 'borderColor',
  'primaryButtonBackgroundColor', 'primaryButtonFontColor',
] as const;
export const DEFAULT_THEMES = ['LIGHT', 'DARK', 'AUTO'] as const;

/** The most characters of a theme colour: room for any hex, rgb()/rgba() or hsl()/hsla() value. */
export const MAX_COLOR_LENGTH = 64;
// Colours end up inside CSS, so only colour syntax is accepted: nothing that can close a rule. The
// arguments of rgb()/hsl() are one character class, so that a long value is matched in linear time.
const CSS_COLOR = /^(#[0-9a-f]{3,4}|#[0-9a-f]{6}|#[0-9a-f]{8}|(rgb|rgba|hsl|hsla)\([0-9.%\s,/+-]+\)|[a-z]{3,20})$/i;
const ColorSchema = v.pipe(
  v.string(),
  maxChars(MAX_COLOR_LENGTH),
  v.regex(CSS_COLOR, 'must be a CSS colour (#rgb, #rrggbb, rgb(), hsl() or a name)'),
);

const ThemeSchema = modelObject(
  Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, v.optional(ColorSchema)])) as Record<
    (typeof THEME_COLOR_FIELDS)[number],
    v.OptionalSchema<typeof ColorSchema, undefined>
  >,
);
export const ThemeColorsSchema = modelObject({
  light: v.optional(ThemeSchema, {}),
  dark: v.optional(ThemeSchema, {}),
});
export type ThemeColors = v.InferOutput<typeof ThemeColorsSchema>;

/** Ids of services: at most 100, each at most 255 characters. */
const IdListSchema = v.pipe(v.array(v.pipe(v.string(), maxChars(MAX_NAME_LENGTH))), v.maxLength(100, 'must hold at most 100 ids'));

export const StatusPageCardCreateSchema = modelObject({
  name: NameSchema,
  serviceIds: v.optional(IdListSchema, () => []),
});

// A status page answers at /s/{id or url}: a url shaped like an id could stand in for another page.
const PageUrlSchema = v.pipe(
  SubdomainSchema,
  v.check((u) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(u), 'must not have the form of an id (a UUID)'),
);

const pageEntries = {
  name: NameSchema,
  url: PageUrlSchema,
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters'))), null),
  customDomain: v.optional(v.nullable(HostNameSchema), null),
  themeColors: v.optional(ThemeColorsSchema, {}),
  logo: v.optional(v.nullable(HttpUrlSchema), null),
  redirectTo: v.optional(v.nullable(HttpUrlSchema), null),
  favicon: v.optional(v.nullable(HttpUrlSchema), null),
  defaultTheme: v.optional(oneOf(DEFAULT_THEMES), 'AUTO'),
  cards: v.optional(v.pipe(v.array(StatusPageCardCreateSchema), v.maxLength(100, 'must hold at most 100 cards')), () => []),
  whiteLabel: v.optional(v.boolean(), false),
  isPrivate: v.optional(v.boolean(), false),
};

export const StatusPageCreateSchema = modelObject(pageEntries);
export type StatusPageCreate = v.InferOutput<typeof StatusPageCreateSchema>;
export const StatusPageUpdateSchema = modelObject(updateEntries(pageEntries));
export type StatusPageUpdate = v.InferOutput<typeof StatusPageUpdateSchema>;

const stamps = { created_at: TimestampSchema, updated_at: v.nullable(TimestampSchema) };

export const StatusPageCardSchema = v.object({ id: v.string(), name: v.string(), serviceIds: v.array(v.string()), ...stamps });
export type StatusPageCard = v.InferOutput<typeof StatusPageCardSchema>;

export const StatusPageSchema = v.object({
  ...pageEntries,
  cards: v.array(StatusPageCardSchema),
  id: v.string(),
  accountId: v.string(),
  ...stamps,
});
export type StatusPage = v.InferOutput<typeof StatusPageSchema>;

export const ServiceCreateSchema = modelObject({
  name: nameSchema(200),
});
export type ServiceCreate = v.InferOutput<typeof ServiceCreateSchema>;
export const ServiceUpdateSchema = ServiceCreateSchema;
export const ServiceSchema = v.object({ id: v.string(), accountId: v.string(), name: v.string(), ...stamps });
export type Service = v.InferOutput<typeof ServiceSchema>;
/** The spec's Service: it shows accountId. */
export const ServiceResponseSchema = ServiceSchema;
export type ServiceResponse = v.InferOutput<typeof ServiceResponseSchema>;
export const ServiceListQuerySchema = v.object({
  ...CursorQuerySchema.entries,
  paginated: v.optional(QueryBooleanSchema, true),
});
export type ServiceListQuery = v.InferOutput<typeof ServiceListQuerySchema>;

export const StatusPageResponseSchema = v.object({
  ...pageEntries,
  id: v.string(),
  cards: v.array(v.object({ id: v.string(), name: v.string(), services: v.array(ServiceResponseSchema), ...stamps })),
  ...stamps,
});
export type StatusPageResponse = v.InferOutput<typeof StatusPageResponseSchema>;

export const StatusPageIncidentUpdateCreateSchema = modelObject({
  description: nameSchema(MAX_LONG_TEXT_LENGTH),
  /**
   * Where the incident stands (docs/decisions.md's incident-update statuses). Absent: INVESTIGATING on
   * the first update, the incident's current status on a later one. RESOLVED closes the incident.
   */
  status: v.optional(oneOf(INCIDENT_UPDATE_STATUSES)),
  notifySubscribers: v.optional(v.boolean(), false),
  publicIncidentUpdateDate: v.optional(DateTimeSchema),
});
export type StatusPageIncidentUpdateCreate = v.InferOutput<typeof StatusPageIncidentUpdateCreateSchema>;

export const StatusPageIncidentCreateSchema = modelObject({
  name: NameSchema,
  serviceIds: v.pipe(IdListSchema, v.minLength(1, 'must name at least one service')),
  incidentUpdate: StatusPageIncidentUpdateCreateSchema,
});
export type StatusPageIncidentCreate = v.InferOutput<typeof StatusPageIncidentCreateSchema>;

export const StatusPageIncidentSchema = v.object({
  id: v.string(),
  accountId: v.string(),
  name: v.string(),
  serviceIds: v.array(v.string()),
  /** The status of the newest update (rows stored before statuses existed read as INVESTIGATING). */
  status: v.optional(oneOf(INCIDENT_UPDATE_STATUSES)),
  /** When an update RESOLVED it; null while it is open. */
  stoppedAt: v.optional(v.nullable(TimestampSchema)),
  ...stamps,
});
export type StatusPageIncident = v.InferOutput<typeof StatusPageIncidentSchema>;

/**
 * When a status page incident closed, in ms: when it was resolved, or null while it is open (or
 * resolved with no time of resolution). A status page shows the incidents closed within its days.
 */
export const incidentClosedMs = (incident: Pick<StatusPageIncident, 'status' | 'stoppedAt'>): number | null =>
  (incident.status ?? 'INVESTIGATING') === 'RESOLVED' && incident.stoppedAt ? Date.parse(incident.stoppedAt) : null;

export const StatusPageIncidentUpdateSchema = v.object({
  id: v.string(),
  accountId: v.string(),
  incidentId: v.string(),
  description: v.string(),
  status: v.optional(oneOf(INCIDENT_UPDATE_STATUSES)),
  notifySubscribers: v.boolean(),
  publicIncidentUpdateDate: v.nullable(TimestampSchema),
  ...stamps,
});
export type StatusPageIncidentUpdate = v.InferOutput<typeof StatusPageIncidentUpdateSchema>;

/** The spec's status-page incident entry (read only). */
export const StatusPageIncidentEntrySchema = v.object({
  name: v.string(),
  id: v.string(),
  services: v.array(ServiceResponseSchema),
  incidentUpdates: v.array(
    v.object({
      description: v.string(),
      id: v.string(),
      status: oneOf(INCIDENT_UPDATE_STATUSES),
      created_at: TimestampSchema,
      publicIncidentUpdateDate: TimestampSchema,
      notifySubscribers: v.boolean(),
    }),
  ),
  /** The status of the newest update; RESOLVED once the incident is over. */
  status: oneOf(INCIDENT_UPDATE_STATUSES),
  /** When it was resolved, or null while it is open. */
  stoppedAt: v.nullable(TimestampSchema),
  created_at: TimestampSchema,
  /** Milliseconds from its start to its resolution, or to now while it is open. */
  duration: v.number(),
  updated_at: v.nullable(TimestampSchema),
});
export type StatusPageIncidentEntry = v.InferOutput<typeof StatusPageIncidentEntrySchema>;
export const StatusPageIncidentListQuerySchema = CursorQuerySchema;

/** A subscription form's email address: trimmed, lower-cased, at most 254 characters. */
export const SubscriberEmailSchema = v.pipe(
  v.string('must be an email address'),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.email('must be a valid email address'),
);

export const StatusPageSubscribeSchema = v.object({ email: SubscriberEmailSchema });

/**
 * Somebody who asked for a status page's incident updates by email. They are sent updates only
 * once they confirmed the address (a link in the first email); the same token, kept here only as
 * its hash, unsubscribes them.
 */
export const StatusPageSubscriberSchema = v.object({
  id: v.string(),
  accountId: v.string(),
  statusPageId: v.string(),
  email: v.string(),
  confirmed: v.boolean(),
  /** SHA-256 (hex) of the token in the subscriber's links, to find them by. */
  tokenHash: v.string(),
  /** The token itself, sealed by the secret box, for the links of the emails still to come. */
  tokenSealed: v.string(),
  /** When the last confirmation email was asked for. */
  confirmationSentAt: v.nullable(TimestampSchema),
  /** How many confirmation emails the address was sent for this page (at most 3). */
  confirmationsSent: v.number(),
  confirmedAt: v.nullable(TimestampSchema),
  ...stamps,
});
export type StatusPageSubscriber = v.InferOutput<typeof StatusPageSubscriberSchema>;

/** A subscriber as the API shows it to the page's account: no token. */
export const StatusPageSubscriberResponseSchema = v.omit(StatusPageSubscriberSchema, ['accountId', 'tokenHash', 'tokenSealed']);
export type StatusPageSubscriberResponse = v.InferOutput<typeof StatusPageSubscriberResponseSchema>;

export const StatusPageSubscriberListQuerySchema = CursorQuerySchema;
