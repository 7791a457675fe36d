// The routes of what runs produce: error groups, results, statuses, reporting, analytics and
// check sessions.
import * as v from 'valibot';
import {
  AnalyticsResponseSchema,
  ApiAnalyticsQuerySchema,
  CheckResultResponseSchema,
  CheckResultsQuerySchema,
  CheckSessionCancelSchema,
  CheckSessionResponseSchema,
  CheckSessionTriggerSchema,
  CheckStatusResponseSchema,
  CompletionQuerySchema,
  DnsAnalyticsQuerySchema,
  IcmpAnalyticsQuerySchema,
  MultiStepAnalyticsQuerySchema,
  PlaywrightAnalyticsQuerySchema,
  ErrorGroupListQuerySchema,
  ErrorGroupPatchSchema,
  ErrorGroupResponseSchema,
  ReportEntrySchema,
  ReportingQuerySchema,
  TcpAnalyticsQuerySchema,
  TestSessionErrorGroupResponseSchema,
  NotFoundError,
} from '@vigil/core';
import { JsonText, named, Reply, type RouteDef } from './route-def.js';

/** What `/v1/error-groups/{id}` answers: a check's group, or a test project's in its own shape. */
const AnyErrorGroupSchema = named('AnyErrorGroup', v.union([ErrorGroupResponseSchema, TestSessionErrorGroupResponseSchema]));

export const errorGroupRoutes: RouteDef[] = [
  {
    method: 'get', path: '/v1/error-groups/checks/:checkId', operationId: 'listCheckErrorGroups', summary: 'List the error groups of a check', tag: 'Error groups',
    params: { checkId: 'string' }, query: ErrorGroupListQuerySchema, response: { kind: 'array', schema: named('ErrorGroup', ErrorGroupResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.errorGroups.listByCheck(accountId, params.checkId, query),
  },
  {
    method: 'get', path: '/v1/error-groups/:id', operationId: 'getErrorGroup', summary: 'Get an error group of a check or a test project', tag: 'Error groups',
    params: { id: 'string' }, response: { kind: 'object', schema: AnyErrorGroupSchema },
    handle: ({ vigil, accountId, params }) => vigil.errorGroups.get(accountId, params.id),
  },
  {
    method: 'patch', path: '/v1/error-groups/:id', operationId: 'updateErrorGroup', summary: 'Archive or unarchive an error group of a check or a test project', tag: 'Error groups',
    params: { id: 'string' }, body: named('ErrorGroupPatch', ErrorGroupPatchSchema), response: { kind: 'object', schema: AnyErrorGroupSchema },
    handle: ({ vigil, accountId, params, body }) => vigil.errorGroups.patch(accountId, params.id, body),
  },
  {
    method: 'get', path: '/v1/test-session-error-groups/projects/:projectId', operationId: 'listTestSessionErrorGroups',
    summary: 'List the test-session error groups of a project', tag: 'Error groups',
    params: { projectId: 'string' }, response: { kind: 'array', schema: named('TestSessionErrorGroup', TestSessionErrorGroupResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.errorGroups.listByProject(accountId, params.projectId),
  },
];

/** What a result answers when the store keeps it compact (the knex store's scheduled TCP and API runs). */
const COMPACT_RESULTS = 'A result answers what is stored. A store may keep a passing scheduled run compact: it reads with every field of '
  + 'the shape, `details` and `errorMessage` null and `name` the check\'s latest. Failed, degraded and errored runs, retried attempts, '
  + 'and one passing run per check, location and hour keep their full detail.';

export const resultRoutes: RouteDef[] = [
  {
    method: 'get', path: '/v1/check-results/:checkId', operationId: 'listCheckResults', summary: 'List the results of a check, newest first', tag: 'Check results',
    description: COMPACT_RESULTS,
    params: { checkId: 'string' }, query: CheckResultsQuerySchema, response: { kind: 'page', schema: named('CheckResult', CheckResultResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.checkResults.list(accountId, params.checkId, query),
  },
  {
    method: 'get', path: '/v1/check-results/:checkId/:checkResultId', operationId: 'getCheckResult', summary: 'Get one result of a check', tag: 'Check results',
    description: COMPACT_RESULTS,
    params: { checkId: 'string', checkResultId: 'string' }, response: { kind: 'object', schema: named('CheckResult', CheckResultResponseSchema) },
    handle: async ({ vigil, accountId, params }) => {
      const result = await vigil.checkResults.get(accountId, params.checkResultId, params.checkId);
      // A result reached through another check's path reads as missing.
      if (result.checkId !== params.checkId) throw new NotFoundError('Check result not found');
      return result;
    },
  },
  {
    method: 'get', path: '/v1/check-statuses', operationId: 'listCheckStatuses', summary: 'The current status of every check', tag: 'Check statuses',
    response: { kind: 'array', schema: named('CheckStatus', CheckStatusResponseSchema) },
    // Every check's status at once (thousands of them): written once by the service.
    handle: async ({ vigil, accountId }) => new JsonText(await vigil.checkStatuses.listJsonBytes(accountId)),
  },
  {
    method: 'get', path: '/v1/check-statuses/:checkId', operationId: 'getCheckStatus', summary: 'The current status of a check', tag: 'Check statuses',
    params: { checkId: 'string' }, response: { kind: 'object', schema: named('CheckStatus', CheckStatusResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.checkStatuses.get(accountId, params.checkId),
  },
  {
    method: 'get', path: '/v1/reporting', operationId: 'getReporting', summary: 'Availability and response times per check over a window', tag: 'Reporting',
    query: ReportingQuerySchema, response: { kind: 'array', schema: named('ReportEntry', ReportEntrySchema) },
    handle: ({ vigil, accountId, query }) => vigil.reporting.report(accountId, query),
  },
  {
    method: 'get', path: '/v1/analytics/api-checks/:id', operationId: 'getApiCheckAnalytics', summary: 'Metrics of an API check', tag: 'Analytics',
    params: { id: 'string' }, query: ApiAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'api', params.id, query),
  },
  {
    method: 'get', path: '/v1/analytics/tcp-checks/:id', operationId: 'getTcpCheckAnalytics', summary: 'Metrics of a TCP check', tag: 'Analytics',
    params: { id: 'string' }, query: TcpAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'tcp', params.id, query),
  },
  {
    method: 'get', path: '/v1/analytics/dns-checks/:id', operationId: 'getDnsCheckAnalytics', summary: 'Metrics of a DNS check', tag: 'Analytics',
    params: { id: 'string' }, query: DnsAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'dns', params.id, query),
  },
  {
    method: 'get', path: '/v1/analytics/url-checks/:id', operationId: 'getUrlCheckAnalytics', summary: 'Metrics of a URL check', tag: 'Analytics',
    params: { id: 'string' }, query: ApiAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'url', params.id, query),
  },
  {
    method: 'get', path: '/v1/analytics/icmp-checks/:id', operationId: 'getIcmpCheckAnalytics', summary: 'Metrics of an ICMP check', tag: 'Analytics',
    params: { id: 'string' }, query: IcmpAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'icmp', params.id, query),
  },
  {
    method: 'get', path: '/v1/analytics/multistep-checks/:id', operationId: 'getMultiStepCheckAnalytics', summary: 'Metrics of a multi-step check', tag: 'Analytics',
    params: { id: 'string' }, query: MultiStepAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'multistep', params.id, query),
  },
  {
    method: 'get', path: '/v1/analytics/playwright-checks/:id', operationId: 'getPlaywrightCheckAnalytics', summary: 'Metrics of a Playwright check suite', tag: 'Analytics',
    params: { id: 'string' }, query: PlaywrightAnalyticsQuerySchema, response: { kind: 'object', schema: named('AnalyticsResponse', AnalyticsResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.analytics.query(accountId, 'playwright', params.id, query),
  },
];

const SessionListSchema = v.object({ sessions: v.array(CheckSessionResponseSchema) });

export const sessionRoutes: RouteDef[] = [
  {
    method: 'post', path: '/v1/check-sessions/trigger', operationId: 'triggerCheckSessions',
    summary: 'Start one session per matching check (404 when none match)', tag: 'Check sessions',
    body: named('CheckSessionTrigger', CheckSessionTriggerSchema), status: 201,
    response: { kind: 'object', schema: named('CheckSessionList', SessionListSchema) },
    handle: ({ vigil, accountId, body }) => vigil.checkSessions.trigger(accountId, body ?? {}),
  },
  {
    method: 'get', path: '/v1/check-sessions/:checkSessionId', operationId: 'getCheckSession', summary: 'Get a check session', tag: 'Check sessions',
    params: { checkSessionId: 'uuid' }, response: { kind: 'object', schema: named('CheckSession', CheckSessionResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.checkSessions.get(accountId, params.checkSessionId),
  },
  {
    method: 'get', path: '/v1/check-sessions/:checkSessionId/completion', operationId: 'awaitCheckSession',
    summary: 'Wait up to maxWaitSeconds for a session to end: 200 with the session, 408 while it runs', tag: 'Check sessions',
    params: { checkSessionId: 'uuid' }, query: CompletionQuerySchema, extraStatuses: [408], longPoll: true,
    response: { kind: 'object', schema: named('CheckSession', CheckSessionResponseSchema) },
    handle: async ({ vigil, accountId, params, query, signal }) => {
      const { done, session } = await vigil.checkSessions.completion(accountId, params.checkSessionId, query, signal);
      if (done) return session;
      return new Reply(408, {
        statusCode: 408,
        error: 'Request Timeout',
        message: `Check session ${session.checkSessionId} has not finished (status ${session.status}); poll again`,
      });
    },
  },
  {
    method: 'post', path: '/v1/check-sessions/:checkSessionId/cancel', operationId: 'cancelCheckSession',
    summary: 'Cancel the listed (or all) running sequences of a session', tag: 'Check sessions',
    params: { checkSessionId: 'uuid' }, body: named('CheckSessionCancel', CheckSessionCancelSchema), status: 202,
    response: { kind: 'object', schema: named('CheckSession', CheckSessionResponseSchema) },
    handle: ({ vigil, accountId, params, body }) => vigil.checkSessions.cancel(accountId, params.checkSessionId, body ?? {}),
  },
];
