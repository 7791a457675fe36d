import 'reflect-metadata';

// The public surface of @vigil/core: every runtime name is listed here on purpose, and
// test/public-surface.test.ts holds the same list, so a new export is a deliberate act. The engine,
// the application services and the rules they apply are reached through `createVigil` (or
// `@vigil/core/internals`, for Vigil's own tests and tools), not imported from here.

// ---- For a host: build a Vigil, configure it, run it from the command line -------------------

export { createVigil, registerVigil, type Vigil, VIGIL, VIGIL_OPTIONS, type VigilOptions } from './container.js';
export { closeOnSignals, type Closable, type CloseOnSignalsOptions } from './lifecycle.js';
export { type CliConfig, type CliOptions, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, runCli } from './cli/run-cli.js';
export { formatPlan, type FormatPlanOptions } from './cli/format-plan.js';
export { isConstruct, type Construct } from './constructs/construct.js';
// The options and answers of what `Vigil` exposes (the classes stay behind `Vigil`).
export { type DispatcherOptions, type EngineOptions } from './engine/index.js';
export { type AssignOptions, type CheckCreateInput, type CheckUpdateInput } from './services/checks.js';
export { type ServiceDeps } from './services/deps.js';
export {
  type BadgeView, type DashboardView, type PublicCheck, type PublicCheckHour, type PublicCheckState, type PublicDashboard,
  type PublicIncident, type PublicIncidentUpdate, type PublicPageOptions, type PublicService, type PublicStatusPage,
  type ServiceState, type StatusPageView,
} from './services/public-pages.js';
export { type StatusPageSubscriptionOptions } from './services/status-page-subscribers.js';
export {
  ApplyError, type ApplyOptions, type ApplyPlan, type ApplyProgress, type PlanAction, type PlanChange, type PlanEntry,
} from './services/apply.js';
export { type ConstructIssue, ConstructValidationError } from './services/apply-constructs.js';

// ---- Errors: what services throw and the HTTP adapter answers --------------------------------
export {
  ConflictError, ForbiddenError, hasCode, InvalidTransitionError, isValidationError, isVigilError, NotFoundError,
  PayloadTooLargeError, RateLimitedError, reasonPhrase, UnauthorizedError, UnavailableError, ValidationError,
  type ValidationIssue, type ValidationSource, VigilError, type VigilErrorCode,
} from './errors.js';

// ---- Ports: the interfaces a host or plugin implements, their tokens and default implementations
// (a plugin registers on the token; `resolve`/`resolveAll` read them from the container).
export { createToken, type PluginRegistry, resolve, resolveAll, type Token } from './ports/token.js';
export { type Cancel, type Clock, CLOCK } from './ports/clock.js';
export { type Logger, LOGGER, type LogMeta } from './ports/logger.js';
export {
  type CounterMetric, type GaugeMetric, type GaugeSpec, type HistogramMetric, type HistogramSpec,
  type MetricLabels, type Metrics, METRICS, type MetricSpec,
} from './ports/metrics.js';
export { ID_GENERATOR, type IdGenerator } from './ports/id-generator.js';
export { SECRET_BOX, type SecretBox } from './ports/secret-box.js';
export { type AuthContext, type Authenticator, AUTHENTICATOR, type AuthRequest } from './ports/authenticator.js';
export {
  type AssertionOutcome, CHECK_TYPE_DEFINITIONS, type FailureKind, type RunJob, type Runner, RUNNERS, type RunResult,
  type RunSnippet, type RunSource, type SnippetLookup,
} from './ports/runner.js';
export {
  ALERT_TRANSPORTS, type AlertMessage, type AlertTransport, type DefinedTransport, type DeliveryContext,
  type DeliveryReceipt, type TransportChannel, type TransportDefinition,
} from './ports/alert-transport.js';
// The ports' default implementations: the system clock, loggers, no-op metrics, random ids, the AES-GCM secret box.
export { systemClock } from './defaults/clock.js';
export { consoleLogger, redactingLogger, silentLogger } from './defaults/logger.js';
export { DURATION_BUCKETS_SECONDS, noopMetrics } from './defaults/metrics.js';
export { randomIdGenerator } from './defaults/id-generator.js';
export { aesGcmSecretBox, parseSecretKey } from './defaults/secret-box.js';
export { defineTransport } from './transport-kit/define-transport.js';
export { CERTIFICATE_PROBE, type CertificateProbe, type CertificateProbeOptions } from './ports/certificate-probe.js';
export { SUBSCRIBER_MAILER, type SubscriberMail, type SubscriberMailer } from './ports/subscriber-mailer.js';
export { type ClientCertificateLookup, type OpenedCertificate } from './ports/client-certificates.js';
export {
  type AccountRepository, type AggregateFunction, type AggregateMeasure, type AlertChannelRepository, type AlertStateRepository,
  type AlertSubscriptionRepository, type ApiKeyRepository, type CheckGroupRepository, type CheckRepository,
  type CheckResultRepository, type CheckSessionRepository, type CheckStatusDocument, type CheckStatusRepository, type CheckSummary,
  type ClientCertificateRepository, type DashboardRepository, type DeliveryAttempt, type ErrorGroupRepository,
  type HeartbeatPing, type HeartbeatRepository, type IncidentRepository, type JobKind, type ListOptions,
  type MaintenanceWindowRepository, type ManagedResourceRepository, type NewOutboxMessage, type NewRecord,
  type Outbox, type OutboxLease, type OutboxMessage, type PruneOutcome, type Repository, type ResultAggregateQuery, type ResultAggregateRow,
  type ResultListQuery, type ResultStatusFilter, type ScheduledJob, type ScheduleEntry, type ScheduleStore,
  type ServedLocations, type ServiceRepository, type SnippetRepository, type StatusPageIncidentRepository,
  type StatusPageRepository, type StatusPageSubscriberRepository, STORAGE, type StorageCapabilities, type StoredRecord,
  type TestSessionErrorGroupRepository, type VigilStorage,
} from './ports/storage.js';
export { JOB_KINDS, LOCATED_JOB_KINDS } from './model/schedule-entry.js';

// ---- The model: request, response and record schemas (valibot) and their types, the values a
// field may take, and the schema helpers a plugin builds its own bodies with.
export { parse, toValidationIssues } from './model/parse.js';
export {
  CHECK_TYPES, type CheckType, CheckTypeSchema, type CursorPage, type CursorQuery, CursorQuerySchema, DateTimeSchema,
  DEFAULT_FREQUENCY, ErrorBodySchema, FREQUENCIES, FrequencySchema, type Location, LOCATIONS, LocationSchema,
  NonEmptyStringSchema, NumericIdSchema, type Page, type PageQuery, PageQuerySchema, PositiveIntegerSchema, QueryBooleanSchema,
  RUNTIME_IDS, type RuntimeId, RuntimeIdSchema, TCP_FREQUENCIES, TcpFrequencySchema, TimestampSchema, UuidSchema,
} from './model/primitives.js';
// The names of schema types that core's declarations hold, so that a dependent's declarations can name them too.
// NameSchema, TagSchema, TagsSchema, HeaderKeySchema, HostNameSchema, HttpUrlSchema and SubdomainSchema are
// exported here as types only: the schemas themselves are not part of core's API.
export type { BoundedStringSchema, NameSchema, QueryIntegerSchema, TagSchema, TagsSchema } from './model/primitives.js';
export type { HostNameSchema, HttpUrlSchema, SubdomainSchema } from './model/urls.js';
export type {
  EntriesOf, HeaderKeySchema, IntegerAtLeastSchema, IntegerBetweenSchema, ModelObject, UpdateEntries,
} from './model/shared.js';
export type { CheckCommonEntries } from './model/check-common.js';
export type { CheckGroupEntries, CheckGroupRecordEntries, CheckGroupResponseEntries } from './model/check-group.js';
export type {
  AlertChannelConfigSchemas, AlertChannelFlagEntries, AlertChannelOption, AlertChannelRecordEntries, AlertChannelResponseEntries,
} from './model/alert-channel.js';
export {
  type AlertChannelSubscription, AlertChannelSubscriptionSchema, type AlertSettings, AlertSettingsSchema,
  API_ASSERTION_COMPARISONS, API_ASSERTION_SOURCES, type ApiAssertion, ApiAssertionSchema, type ApiCheckDefaults,
  ApiCheckDefaultsSchema, ASSERTION_COMPARISONS, type BasicAuth, BasicAuthSchema, DEFAULT_ALERT_SETTINGS,
  type EnvironmentVariable, EnvironmentVariableSchema, EnvironmentVariablesSchema, ESCALATION_TYPES, type GroupRetryStrategy,
  GroupRetryStrategySchema, integerAtLeast, integerBetween, type KeyValue, KeyValueSchema, MAX_ENVIRONMENT_VARIABLES,
  MINUTES_FAILING_THRESHOLDS, modelObject, oneOf, REMINDER_INTERVALS, RETRY_TYPES, type RetryStrategy, RetryStrategySchema,
  SECRET_ENV_PREFIX, TCP_ASSERTION_SOURCES, type TcpAssertion, TcpAssertionSchema, type TriggerIncident, TriggerIncidentSchema,
  UNLIMITED_REMINDERS, type WebhookKeyValue, WebhookKeyValueSchema,
} from './model/shared.js';
export {
  API_BODY_TYPES, type ApiBodyType, type ApiRequest, ApiRequestSchema, ApiUrlSchema, HTTP_METHODS, HttpHeaderSchema,
  type HttpMethod, MAX_API_URL_LENGTH,
} from './model/api-request.js';
export {
  type AlertChannelsSummary, AlertChannelsSummarySchema, type ApiCheck, type ApiCheckCreate, ApiCheckCreateSchema,
  type ApiCheckResponse, ApiCheckResponseSchema, ApiCheckSchema, type ApiCheckUpdate, ApiCheckUpdateSchema, type BrowserCheck,
  type BrowserCheckCreate, BrowserCheckCreateSchema, type BrowserCheckResponse, BrowserCheckResponseSchema, BrowserCheckSchema,
  type BrowserCheckUpdate, BrowserCheckUpdateSchema, type BrowserDependency, BrowserDependencySchema, BUILTIN_CHECK_TYPES,
  type BuiltinCheckType, type Check, type CheckCommonCreate, CheckCommonCreateSchema, CheckCreateSchemas, type CheckResponse,
  CheckResponseSchema, CheckSchema, CheckUpdateSchemas, HEARTBEAT_UNIT_SECONDS, HEARTBEAT_UNITS, type HeartbeatCheck,
  type HeartbeatCheckCreate, HeartbeatCheckCreateSchema, type HeartbeatCheckResponse, HeartbeatCheckResponseSchema,
  HeartbeatCheckSchema, type HeartbeatCheckUpdate, HeartbeatCheckUpdateSchema, type HeartbeatCreate, HeartbeatCreateSchema,
  type HeartbeatRecord, HeartbeatRecordSchema, type HeartbeatUnit, type TcpCheck, type TcpCheckCreate, TcpCheckCreateSchema,
  type TcpCheckResponse, TcpCheckResponseSchema, TcpCheckSchema, type TcpCheckUpdate, TcpCheckUpdateSchema, type TcpRequest,
  TcpRequestSchema,
} from './model/check.js';
export {
  type CheckOf, type CheckTypeBody, type CheckTypeDefinition, type CheckTypeEntries, type CheckTypeOptions, defineCheckType,
  type PluginCheck, RESERVED_CHECK_SLUGS,
} from './model/check-type.js';
export {
  DNS_ASSERTION_SOURCES, DNS_PROTOCOLS, DNS_RCODES, DNS_RECORD_TYPES, type DnsAssertion, DnsAssertionSchema, dnsAssertionProblem,
  type DnsAssertionSource, type DnsCheck, type DnsCheckCreate, DnsCheckCreateSchema, type DnsCheckResponse, DnsCheckResponseSchema,
  DnsCheckSchema, type DnsCheckUpdate, DnsCheckUpdateSchema, type DnsProtocol, type DnsRcode, type DnsRecordType, type DnsRequest,
  DnsRequestSchema, DOMAIN_NAME,
} from './model/check-dns.js';
export {
  statusMatches, URL_METHODS, type UrlCheck, type UrlCheckCreate, UrlCheckCreateSchema, type UrlCheckResponse, UrlCheckResponseSchema,
  UrlCheckSchema, type UrlCheckUpdate, UrlCheckUpdateSchema, type UrlMethod, type UrlRequest, UrlRequestSchema,
} from './model/check-url.js';
export {
  ICMP_ASSERTION_COMPARISONS, ICMP_ASSERTION_SOURCES, ICMP_LATENCY_PROPERTIES, type IcmpAssertion, IcmpAssertionSchema,
  type IcmpAssertionSource, type IcmpCheck, type IcmpCheckCreate, IcmpCheckCreateSchema, type IcmpCheckResponse,
  IcmpCheckResponseSchema, IcmpCheckSchema, type IcmpCheckUpdate, IcmpCheckUpdateSchema, type IcmpLatencyProperty,
  type IcmpRequest, IcmpRequestSchema,
} from './model/check-icmp.js';
export {
  type MultiStepCheck, type MultiStepCheckCreate, MultiStepCheckCreateSchema, type MultiStepCheckResponse, MultiStepCheckResponseSchema,
  MultiStepCheckSchema, type MultiStepCheckUpdate, MultiStepCheckUpdateSchema,
} from './model/check-multistep.js';
export {
  isSuiteConfigFile, isSuitePath, isSuiteTestFile, MAX_SUITE_CHARACTERS, MAX_SUITE_FILES, MAX_SUITE_TIMEOUT_MS, type PlaywrightCheck,
  type PlaywrightCheckCreate, PlaywrightCheckCreateSchema, type PlaywrightCheckResponse, PlaywrightCheckResponseSchema, PlaywrightCheckSchema,
  type PlaywrightCheckUpdate, PlaywrightCheckUpdateSchema, type SuiteFiles, SuiteFilesSchema,
} from './model/check-playwright.js';
export {
  type CheckGroup, type CheckGroupCreate, CheckGroupCreateSchema, type CheckGroupResponse, CheckGroupResponseSchema,
  CheckGroupSchema, type CheckGroupUpdate, CheckGroupUpdateSchema,
} from './model/check-group.js';
export {
  ALERT_CHANNEL_CONFIG_SCHEMAS, ALERT_CHANNEL_TYPES, ALERT_TYPES, type AlertChannel, type AlertChannelCreate,
  AlertChannelCreateSchema, type AlertChannelFlags, AlertChannelFlagsSchema, type AlertChannelResponse,
  AlertChannelResponseSchema, AlertChannelSchema, AlertChannelSubscriptionSummarySchema, type AlertChannelSubscriptionsUpdate,
  AlertChannelSubscriptionsUpdateSchema, type AlertChannelType, AlertChannelTypeSchema, type AlertChannelUpdate,
  AlertChannelUpdateSchema, type AlertSubscription, AlertSubscriptionSchema, type AlertType, AlertTypeSchema,
  ChatAppConfigSchema, ChatConfigSchema, EmailConfigSchema, PAGING_B_PRIORITIES, PAGING_B_REGIONS, PagingAConfigSchema,
  PagingBConfigSchema, PhoneConfigSchema, WEBHOOK_METHODS, type WebhookConfig, WebhookConfigSchema,
} from './model/alert-channel.js';
export {
  type CheckResult, type CheckResultResponse, CheckResultResponseSchema, CheckResultSchema, type CheckResultsQuery,
  CheckResultsQuerySchema, RESULT_TYPES, ResultTypeSchema, RUN_SOURCES, RunSourceSchema,
} from './model/check-result.js';
export {
  type CheckStatus, type CheckStatusResponse, CheckStatusResponseSchema, CheckStatusSchema,
} from './model/check-status.js';
export {
  CHECK_SESSION_STATUSES, type CheckSession, type CheckSessionCancel, CheckSessionCancelSchema, type CheckSessionResponse,
  CheckSessionResponseSchema, CheckSessionSchema, type CheckSessionSequence, CheckSessionSequenceSchema,
  type CheckSessionStatus, CheckSessionStatusSchema, type CheckSessionTrigger, CheckSessionTriggerSchema, type CompletionQuery,
  CompletionQuerySchema, FINAL_SESSION_STATUSES, isFinalSessionStatus,
} from './model/check-session.js';
export {
  type Account, AccountSchema, type ApiKey, type ApiKeyCreate, ApiKeyCreateSchema, type ApiKeyResponse, ApiKeyResponseSchema,
  ApiKeySchema,
} from './model/account.js';
export {
  type MaintenanceWindow, type MaintenanceWindowCreate, MaintenanceWindowCreateSchema, type MaintenanceWindowResponse,
  MaintenanceWindowResponseSchema, MaintenanceWindowSchema, type MaintenanceWindowUpdate, MaintenanceWindowUpdateSchema,
  REPEAT_UNITS, type RepeatUnit,
} from './model/maintenance-window.js';
export { type MaintenanceEffect, maintenanceWindowEndMs, type MaintenanceTarget } from './rules/maintenance.js';
export {
  type Dashboard, DASHBOARD_WIDTHS, type DashboardCreate, DashboardCreateSchema, type DashboardKeyRecord,
  DashboardKeyRecordSchema, type DashboardKeyResponse, DashboardKeyResponseSchema, type DashboardResponse,
  DashboardResponseSchema, DashboardSchema, type DashboardUpdate, DashboardUpdateSchema, PAGINATION_RATES, REFRESH_RATES,
} from './model/dashboard.js';
export {
  type Incident, INCIDENT_IMPACTS, INCIDENT_UPDATE_STATUSES, type IncidentCreate, IncidentCreateSchema, type IncidentResponse,
  IncidentResponseSchema, IncidentSchema, type IncidentUpdate, type IncidentUpdateCreate, IncidentUpdateCreateSchema,
  type IncidentUpdateRecord, IncidentUpdateRecordSchema, type IncidentUpdateResponse, IncidentUpdateResponseSchema,
  IncidentUpdateSchema, type IncidentUpdateStatus,
} from './model/incident.js';
export {
  DEFAULT_THEMES, incidentClosedMs, type Service, type ServiceCreate, ServiceCreateSchema, type ServiceListQuery, ServiceListQuerySchema,
  type ServiceResponse, ServiceResponseSchema, ServiceSchema, ServiceUpdateSchema, type StatusPage, type StatusPageCard,
  StatusPageCardCreateSchema, StatusPageCardSchema, type StatusPageCreate, StatusPageCreateSchema, type StatusPageIncident,
  type StatusPageIncidentCreate, StatusPageIncidentCreateSchema, type StatusPageIncidentEntry, StatusPageIncidentEntrySchema,
  StatusPageIncidentListQuerySchema, StatusPageIncidentSchema, type StatusPageIncidentUpdate,
  type StatusPageIncidentUpdateCreate, StatusPageIncidentUpdateCreateSchema, StatusPageIncidentUpdateSchema,
  type StatusPageResponse, StatusPageResponseSchema, StatusPageSchema, type StatusPageSubscriber,
  StatusPageSubscriberListQuerySchema, type StatusPageSubscriberResponse, StatusPageSubscriberResponseSchema,
  StatusPageSubscriberSchema, StatusPageSubscribeSchema, type StatusPageUpdate, StatusPageUpdateSchema, SubscriberEmailSchema,
  THEME_COLOR_FIELDS, type ThemeColors, ThemeColorsSchema,
} from './model/status-page.js';
export {
  CertificatePemSchema, type ClientCertificate, type ClientCertificateCreate, ClientCertificateCreateSchema,
  type ClientCertificateResponse, ClientCertificateResponseSchema, ClientCertificateSchema, PrivateKeyPemSchema,
} from './model/client-certificate.js';
export {
  type ErrorGroup, ErrorGroupListQuerySchema, type ErrorGroupPatch, ErrorGroupPatchSchema, type ErrorGroupResponse,
  ErrorGroupResponseSchema, ErrorGroupSchema, type PwtMetadata, PwtMetadataSchema, type TestSessionErrorGroup,
  type TestSessionErrorGroupResponse, TestSessionErrorGroupResponseSchema, TestSessionErrorGroupSchema,
} from './model/error-group.js';
export {
  type AnalyticsQuery, type AnalyticsResponse, AnalyticsResponseSchema, API_METRIC_BASES, API_METRICS, API_PLAIN_METRICS,
  ApiAnalyticsQuerySchema, METRIC_SUFFIXES, type MetricUnit, QUICK_RANGES, TCP_METRIC_BASES, TCP_METRICS,
  TcpAnalyticsQuerySchema, DNS_METRIC_BASES, DNS_METRICS, DnsAnalyticsQuerySchema, ICMP_METRIC_BASES, ICMP_METRICS, IcmpAnalyticsQuerySchema,
  MAX_ANALYTICS_STEPS, MULTI_STEP_METRIC_BASES, MULTI_STEP_METRICS, MultiStepAnalyticsQuerySchema, PlaywrightAnalyticsQuerySchema,
} from './model/analytics.js';
export {
  type Snippet, type SnippetCreate, SnippetCreateSchema, type SnippetResponse, SnippetResponseSchema, SnippetSchema,
  type SnippetUpdate, SnippetUpdateSchema,
} from './model/snippet.js';
export {
  type ReportEntry, ReportEntrySchema, REPORTING_QUICK_RANGES, type ReportingQuery, ReportingQuerySchema,
} from './model/reporting.js';
export {
  type HeartbeatAvailability, type HeartbeatAvailabilityQuery, HeartbeatAvailabilityQuerySchema, HeartbeatAvailabilitySchema,
} from './model/heartbeat-availability.js';
export {
  DEFAULT_PROJECT, LogicalIdSchema, type ManagedResource, ManagedResourceSchema, ProjectNameSchema, RESOURCE_KINDS,
  type ResourceKind, ResourceKindSchema,
} from './model/managed-resource.js';
export { type CheckAlert, DeliveryLogQuerySchema } from './services/alert-channels.js';
export { type ResponseTimePoint, type ResponseTimeQuery, type ResponseTimeSeries } from './services/analytics.js';

// ---- For a plugin author -----------------------------------------------------------------------
// The runner kit (its index is itself an explicit list): run results and the frame of a `run`, the
// target policy, regex sandbox, JSON paths, `{{KEY}}` placeholders, script isolation.
export * from './runner-kit/index.js';
// Scrubbing secrets out of what a runner answers, and the rules a runner applies to its verdict.
export { SCRUBBED, scrubDeep, scrubSecrets } from './runner-kit/scrub.js';
export { isDegradedRun, isOverMaxResponseTime, type ResponseTimeLimits } from './rules/response-time.js';
export { type RetryFailureKind, type RetryStrategyInput } from './rules/retry.js';
export { isRelativeApiUrl } from './model/urls.js';
// The request a store works for (a read route's), so that it can give up once the client has gone.
export { outsideRequest, requestSignal, runForRequest } from './request/request-scope.js';
// What a storage adapter computes as core does: result ids of a slot, percentiles, private locations.
export { slotIdDueAt, slotResultId } from './engine/index.js';
export { percentileCont } from './rules/result-aggregates.js';
export { isPrivateLocation } from './rules/schedule.js';
export { type AlertState } from './rules/alerting.js';

