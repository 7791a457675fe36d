import { describe, expect, expectTypeOf, it } from 'vitest';
import * as core from '../src/index.js';
import * as internals from '../src/internals.js';
import { createVigil, ValidationError, type CheckCreateInput, type CheckUpdateInput } from '../src/index.js';
import { memoryStorage } from '../src/testing/index.js';

/**
 * Every runtime name of `@vigil/core`, sorted. Adding one to the root is a decision about the
 * public API: add it here too. Engine and service internals go to `@vigil/core/internals`.
 */
const ROOT_EXPORTS = [
  'ALERT_CHANNEL_CONFIG_SCHEMAS', 'ALERT_CHANNEL_TYPES', 'ALERT_TRANSPORTS', 'ALERT_TYPES',
  'API_ASSERTION_COMPARISONS', 'API_ASSERTION_SOURCES', 'API_BODY_TYPES', 'API_METRICS', 'API_METRIC_BASES',
  'API_PLAIN_METRICS', 'API_SCRIPT_PARAMETERS', 'ASSERTION_COMPARISONS', 'AUTHENTICATOR', 'AccountSchema',
  'AlertChannelCreateSchema', 'AlertChannelFlagsSchema', 'AlertChannelResponseSchema', 'AlertChannelSchema',
  'AlertChannelSubscriptionSchema', 'AlertChannelSubscriptionSummarySchema', 'AlertChannelSubscriptionsUpdateSchema',
  'AlertChannelTypeSchema', 'AlertChannelUpdateSchema', 'AlertChannelsSummarySchema', 'AlertSettingsSchema',
  'AlertSubscriptionSchema', 'AlertTypeSchema', 'AnalyticsResponseSchema', 'ApiAnalyticsQuerySchema',
  'ApiAssertionSchema', 'ApiCheckCreateSchema', 'ApiCheckDefaultsSchema', 'ApiCheckResponseSchema', 'ApiCheckSchema',
  'ApiCheckUpdateSchema', 'ApiKeyCreateSchema', 'ApiKeyResponseSchema', 'ApiKeySchema', 'ApiRequestSchema',
  'ApiUrlSchema', 'ApplyError', 'BUILTIN_CHECK_TYPES', 'BasicAuthSchema', 'BrowserCheckCreateSchema',
  'BrowserCheckResponseSchema', 'BrowserCheckSchema', 'BrowserCheckUpdateSchema', 'BrowserDependencySchema',
  'CERTIFICATE_PROBE', 'CHECK_SESSION_STATUSES', 'CHECK_TYPES', 'CHECK_TYPE_DEFINITIONS', 'CLOCK',
  'CertificatePemSchema', 'ChatAppConfigSchema', 'ChatConfigSchema', 'CheckCommonCreateSchema', 'CheckCreateSchemas',
  'CheckGroupCreateSchema', 'CheckGroupResponseSchema', 'CheckGroupSchema', 'CheckGroupUpdateSchema',
  'CheckResponseSchema', 'CheckResultResponseSchema', 'CheckResultSchema', 'CheckResultsQuerySchema', 'CheckSchema',
  'CheckSessionCancelSchema', 'CheckSessionResponseSchema', 'CheckSessionSchema', 'CheckSessionSequenceSchema',
  'CheckSessionStatusSchema', 'CheckSessionTriggerSchema', 'CheckStatusResponseSchema', 'CheckStatusSchema',
  'CheckTypeSchema', 'CheckUpdateSchemas', 'ClientCertificateCreateSchema', 'ClientCertificateResponseSchema',
  'ClientCertificateSchema', 'CompletionQuerySchema', 'ConflictError', 'ConstructValidationError',
  'CursorQuerySchema', 'DASHBOARD_WIDTHS', 'DEFAULT_ALERT_SETTINGS', 'DEFAULT_FREQUENCY', 'DEFAULT_PROJECT',
  'DEFAULT_THEMES', 'DNS_ASSERTION_SOURCES', 'DNS_METRICS', 'DNS_METRIC_BASES', 'DNS_PROTOCOLS', 'DNS_RCODES',
  'DNS_RECORD_TYPES', 'DOMAIN_NAME', 'DURATION_BUCKETS_SECONDS', 'DashboardCreateSchema', 'DashboardKeyRecordSchema',
  'DashboardKeyResponseSchema', 'DashboardResponseSchema', 'DashboardSchema', 'DashboardUpdateSchema',
  'DateTimeSchema', 'DeliveryLogQuerySchema', 'DnsAnalyticsQuerySchema', 'DnsAssertionSchema',
  'DnsCheckCreateSchema', 'DnsCheckResponseSchema', 'DnsCheckSchema', 'DnsCheckUpdateSchema', 'DnsRequestSchema',
  'ESCALATION_TYPES', 'EXIT_FAILURE', 'EXIT_OK', 'EXIT_USAGE', 'EmailConfigSchema', 'EnvironmentVariableSchema',
  'EnvironmentVariablesSchema', 'ErrorBodySchema', 'ErrorGroupListQuerySchema', 'ErrorGroupPatchSchema',
  'ErrorGroupResponseSchema', 'ErrorGroupSchema', 'FINAL_SESSION_STATUSES', 'FREQUENCIES', 'ForbiddenError',
  'FrequencySchema', 'GroupRetryStrategySchema', 'HEARTBEAT_UNITS', 'HEARTBEAT_UNIT_SECONDS', 'HTTP_METHODS',
  'HeartbeatAvailabilityQuerySchema', 'HeartbeatAvailabilitySchema', 'HeartbeatCheckCreateSchema',
  'HeartbeatCheckResponseSchema', 'HeartbeatCheckSchema', 'HeartbeatCheckUpdateSchema', 'HeartbeatCreateSchema',
  'HeartbeatRecordSchema', 'HttpHeaderSchema', 'ICMP_ASSERTION_COMPARISONS', 'ICMP_ASSERTION_SOURCES',
  'ICMP_LATENCY_PROPERTIES', 'ICMP_METRICS', 'ICMP_METRIC_BASES', 'ID_GENERATOR', 'INCIDENT_IMPACTS',
  'INCIDENT_UPDATE_STATUSES', 'IcmpAnalyticsQuerySchema', 'IcmpAssertionSchema', 'IcmpCheckCreateSchema',
  'IcmpCheckResponseSchema', 'IcmpCheckSchema', 'IcmpCheckUpdateSchema', 'IcmpRequestSchema', 'IncidentCreateSchema',
  'IncidentResponseSchema', 'IncidentSchema', 'IncidentUpdateCreateSchema', 'IncidentUpdateRecordSchema',
  'IncidentUpdateResponseSchema', 'IncidentUpdateSchema', 'InvalidTransitionError', 'JOB_KINDS', 'KeyValueSchema',
  'LOCATED_JOB_KINDS', 'LOCATIONS', 'LOGGER', 'LocationSchema', 'LogicalIdSchema', 'MAX_ANALYTICS_STEPS',
  'MAX_API_URL_LENGTH', 'MAX_ENVIRONMENT_VARIABLES', 'MAX_SUITE_CHARACTERS', 'MAX_SUITE_FILES',
  'MAX_SUITE_TIMEOUT_MS', 'METRICS', 'METRIC_SUFFIXES', 'MINUTES_FAILING_THRESHOLDS', 'MULTI_STEP_METRICS',
  'MULTI_STEP_METRIC_BASES', 'MaintenanceWindowCreateSchema', 'MaintenanceWindowResponseSchema',
  'MaintenanceWindowSchema', 'MaintenanceWindowUpdateSchema', 'ManagedResourceSchema',
  'MultiStepAnalyticsQuerySchema', 'MultiStepCheckCreateSchema', 'MultiStepCheckResponseSchema',
  'MultiStepCheckSchema', 'MultiStepCheckUpdateSchema', 'NUMERIC_COMPARISONS', 'NonEmptyStringSchema',
  'NotFoundError', 'NumericIdSchema', 'OPEN_TARGET_POLICY', 'PAGINATION_RATES', 'PAGING_B_PRIORITIES',
  'PAGING_B_REGIONS', 'PUBLIC_ONLY_TARGET_POLICY', 'PageQuerySchema', 'PagingAConfigSchema', 'PagingBConfigSchema',
  'PayloadTooLargeError', 'PhoneConfigSchema', 'PlaywrightAnalyticsQuerySchema', 'PlaywrightCheckCreateSchema',
  'PlaywrightCheckResponseSchema', 'PlaywrightCheckSchema', 'PlaywrightCheckUpdateSchema', 'PositiveIntegerSchema',
  'PrivateKeyPemSchema', 'ProjectNameSchema', 'ProxyRun', 'PwtMetadataSchema', 'QUICK_RANGES', 'QueryBooleanSchema',
  'REFRESH_RATES', 'REMINDER_INTERVALS', 'REPEAT_UNITS', 'REPORTING_QUICK_RANGES', 'RESERVED_CHECK_SLUGS',
  'RESOURCE_KINDS', 'RESULT_TYPES', 'RETRY_TYPES', 'RUNNERS', 'RUNTIME_IDS', 'RUN_SOURCES', 'RateLimitedError',
  'RegexSandbox', 'ReportEntrySchema', 'ReportingQuerySchema', 'ResourceKindSchema', 'ResultTypeSchema',
  'RetryStrategySchema', 'RunArtifacts', 'RunSourceSchema', 'RuntimeIdSchema', 'SCRUBBED', 'SECRET_BOX',
  'SECRET_ENV_PREFIX', 'STORAGE', 'SUBSCRIBER_MAILER', 'ServiceCreateSchema', 'ServiceListQuerySchema',
  'ServiceResponseSchema', 'ServiceSchema', 'ServiceUpdateSchema', 'SnippetCreateSchema', 'SnippetResponseSchema',
  'SnippetSchema', 'SnippetUpdateSchema', 'StatusPageCardCreateSchema', 'StatusPageCardSchema',
  'StatusPageCreateSchema', 'StatusPageIncidentCreateSchema', 'StatusPageIncidentEntrySchema',
  'StatusPageIncidentListQuerySchema', 'StatusPageIncidentSchema', 'StatusPageIncidentUpdateCreateSchema',
  'StatusPageIncidentUpdateSchema', 'StatusPageResponseSchema', 'StatusPageSchema', 'StatusPageSubscribeSchema',
  'StatusPageSubscriberListQuerySchema', 'StatusPageSubscriberResponseSchema', 'StatusPageSubscriberSchema',
  'StatusPageUpdateSchema', 'SubscriberEmailSchema', 'SuiteFilesSchema', 'TCP_ASSERTION_SOURCES', 'TCP_FREQUENCIES',
  'TCP_METRICS', 'TCP_METRIC_BASES', 'THEME_COLOR_FIELDS', 'TargetProxy', 'TcpAnalyticsQuerySchema',
  'TcpAssertionSchema', 'TcpCheckCreateSchema', 'TcpCheckResponseSchema', 'TcpCheckSchema', 'TcpCheckUpdateSchema',
  'TcpFrequencySchema', 'TcpRequestSchema', 'TestSessionErrorGroupResponseSchema', 'TestSessionErrorGroupSchema',
  'ThemeColorsSchema', 'TimestampSchema', 'TriggerIncidentSchema', 'UNLIMITED_REMINDERS', 'URL_METHODS',
  'UnauthorizedError', 'UnavailableError', 'UrlCheckCreateSchema', 'UrlCheckResponseSchema', 'UrlCheckSchema',
  'UrlCheckUpdateSchema', 'UrlRequestSchema', 'UuidSchema', 'VIGIL', 'VIGIL_OPTIONS', 'ValidationError',
  'VigilError', 'WEBHOOK_METHODS', 'WITHHELD_SCRIPT_MODULES', 'WebhookConfigSchema', 'WebhookKeyValueSchema',
  'aesGcmSecretBox', 'apiScriptSource', 'apiScriptSyntaxError', 'applyShouldFail', 'asNumber', 'asText',
  'classifyAddress', 'closeOnSignals', 'compareNumber', 'compareValue', 'consoleLogger', 'createToken',
  'createVigil', 'credentialSecrets', 'cutText', 'defineCheckType', 'defineTransport', 'directoryArtifacts',
  'dnsAssertionProblem', 'embeddedIpv4', 'endWithHost', 'fillVariables', 'formatIpAddress', 'formatPlan', 'hasCode', 'incidentClosedMs',
  'integerAtLeast', 'integerBetween', 'isConstruct', 'isCredentialHeader', 'isDegradedRun', 'isEmptyValue',
  'isFinalSessionStatus', 'isJsonPath', 'isOverMaxResponseTime', 'isPrivateLocation', 'isRelativeApiUrl',
  'isSuiteConfigFile', 'isSuitePath', 'isSuiteTestFile', 'isValidationError', 'isVigilError', 'lookupChecked',
  'maintenanceWindowEndMs',
  'modelObject', 'noopMetrics', 'oneOf', 'outsideRequest', 'parse', 'parseCidr', 'parseIpAddress', 'parseIpv4',
  'parseIpv6', 'parseSecretKey', 'percentileCont', 'permissionFlag', 'policyOf', 'positiveOption',
  'probeCertificate', 'quoteText', 'randomIdGenerator', 'readJsonPath', 'reasonPhrase', 'redactingLogger',
  'registerVigil', 'requestSignal', 'resolve', 'resolveAll', 'runChecked', 'runCli', 'runForRequest', 'runResult',
  'scriptProcessFlags', 'scrubDeep', 'scrubSecrets', 'silentLogger', 'slotIdDueAt', 'slotResultId', 'statusMatches',
  'systemClock', 'systemLookupAll', 'takesTarget', 'targetPolicy', 'targetRefusalMessage', 'toValidationIssues',
];

describe('the public surface of @vigil/core', () => {
  it('exports exactly the listed runtime names', () => {
    expect(Object.keys(core).sort()).toEqual(ROOT_EXPORTS);
  });

  it('keeps the engine, the services and the scheduling rules off the root, under @vigil/core/internals', () => {
    const inside = ['MinHeap', 'RunPipeline', 'slotIndex', 'Engine', 'AlertDispatcher', 'CheckService', 'ServiceCatalog', 'nextRunAt', 'SERVICE_DEPS', 'RetentionJob', 'evaluateRun', 'plannedEntries'];
    for (const name of inside) {
      expect(name in core, name).toBe(false);
      expect(typeof (internals as Record<string, unknown>)[name], name).not.toBe('undefined');
    }
  });
});

describe('typed service inputs', () => {
  const vigil = () => createVigil({ storage: memoryStorage(), secretKey: 'ab'.repeat(32) });

  it('types a built-in check type\'s create body by its schema: a misspelt field does not compile, nor parse', async () => {
    const v = vigil();
    const account = (await v.accounts.ensure()).id;
    const created = await v.checks.create(account, 'TCP', { name: 'db', request: { hostname: 'db.internal', port: 5432 }, frequency: 5 });
    expect(created).toMatchObject({ checkType: 'TCP', request: { hostname: 'db.internal', port: 5432 } });
    // @ts-expect-error `requst` is no field of a TCP check (and `request` is missing)
    await expect(v.checks.create(account, 'TCP', { name: 'db', requst: { hostname: 'db.internal', port: 5432 } })).rejects.toThrow(ValidationError);
    // @ts-expect-error an update typed as a TCP check's takes only its fields
    await expect(v.checks.update(account, created.id, { name: 'db', requst: {} }, { checkType: 'TCP' })).resolves.toMatchObject({ name: 'db' });
    await v.close();
  });

  it('leaves a plugin\'s type, or one known only at run time, to the parse', () => {
    expectTypeOf<CheckCreateInput<'SMTP'>>().toBeUnknown();
    expectTypeOf<CheckCreateInput<string>>().toBeUnknown();
    expectTypeOf<CheckUpdateInput<string>>().toBeUnknown();
    expectTypeOf<CheckCreateInput<'API'>>().toHaveProperty('request');
    // A value of a set is typed as its primitive (checked by the parse), and arrays may be readonly.
    expectTypeOf<{ name: string; request: { hostname: string; port: number }; frequency: number; tags: readonly string[] }>()
      .toMatchTypeOf<CheckCreateInput<'TCP'>>();
  });
});
