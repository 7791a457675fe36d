import * as v from 'valibot';
import {
  AlertChannelCreateSchema,
  AlertChannelResponseSchema,
  AlertChannelSubscriptionsUpdateSchema,
  AlertChannelUpdateSchema,
  AnalyticsResponseSchema,
  ApiAnalyticsQuerySchema,
  ApiCheckCreateSchema,
  ApiCheckResponseSchema,
  ApiCheckUpdateSchema,
  BrowserCheckCreateSchema,
  BrowserCheckResponseSchema,
  BrowserCheckUpdateSchema,
  CheckGroupCreateSchema,
  CheckGroupResponseSchema,
  CheckGroupUpdateSchema,
  CheckResponseSchema,
  CheckResultResponseSchema,
  CheckResultsQuerySchema,
  CheckSessionCancelSchema,
  CheckSessionResponseSchema,
  CheckSessionTriggerSchema,
  CheckStatusResponseSchema,
  ClientCertificateCreateSchema,
  ClientCertificateResponseSchema,
  CompletionQuerySchema,
  DashboardCreateSchema,
  DeliveryLogQuerySchema,
  DashboardResponseSchema,
  DashboardUpdateSchema,
  ErrorGroupListQuerySchema,
  ErrorGroupPatchSchema,
  ErrorGroupResponseSchema,
  HeartbeatAvailabilityQuerySchema,
  HeartbeatAvailabilitySchema,
  HeartbeatCheckCreateSchema,
  HeartbeatCheckResponseSchema,
  HeartbeatCheckUpdateSchema,
  IncidentCreateSchema,
  IncidentResponseSchema,
  IncidentUpdateCreateSchema,
  IncidentUpdateSchema,
  MaintenanceWindowCreateSchema,
  MaintenanceWindowResponseSchema,
  MaintenanceWindowUpdateSchema,
  PageQuerySchema,
  QueryBooleanSchema,
  ReportEntrySchema,
  ReportingQuerySchema,
  ServiceCreateSchema,
  ServiceListQuerySchema,
  ServiceResponseSchema,
  ServiceUpdateSchema,
  SnippetCreateSchema,
  SnippetResponseSchema,
  SnippetUpdateSchema,
  StatusPageCreateSchema,
  StatusPageIncidentCreateSchema,
  StatusPageIncidentEntrySchema,
  StatusPageIncidentListQuerySchema,
  StatusPageIncidentUpdateCreateSchema,
  StatusPageResponseSchema,
  StatusPageSubscriberListQuerySchema,
  StatusPageSubscriberResponseSchema,
  StatusPageUpdateSchema,
  TcpAnalyticsQuerySchema,
  TcpCheckCreateSchema,
  TcpCheckResponseSchema,
  TcpCheckUpdateSchema,
  TestSessionErrorGroupResponseSchema,
  NotFoundError,
  parse,
  type CheckTypeDefinition,
  type Page,
  type Vigil,
} from '@vigil/core';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A schema with the name it carries in the OpenAPI document's components. */
export interface NamedSchema {
  name: string;
  schema: v.GenericSchema;
}

const named = (name: string, schema: v.GenericSchema): NamedSchema => ({ name, schema });

const DeliveryAttemptSchema = v.object({
  outboxId: v.string(),
  alertChannelId: v.number(),
  at: v.string(),
  ok: v.boolean(),
  detail: v.nullable(v.string()),
});

/** What a handler receives: the authenticated account and the request's raw parts. */
export interface RouteInput {
  vigil: Vigil;
  accountId: string;
  params: Record<string, string>;
  query: unknown;
  body: unknown;
  /** Aborted when the client goes away (long polls stop early). */
  signal: AbortSignal;
}

/** A reply other than 200 with a JSON body. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
  ) {}
}

export type ResponseKind = 'object' | 'array' | 'page' | 'cursor' | 'empty';

export interface RouteDef {
  method: HttpMethod;
  /** Express path syntax (`/v1/checks/:id`); the OpenAPI path is derived from it. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Path parameters and their OpenAPI type. */
  params?: Record<string, 'string' | 'integer' | 'uuid'>;
  query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.GenericSchema;
  body?: NamedSchema;
  /** Success status (200 unless given). */
  status?: number;
  response: { kind: ResponseKind; schema?: NamedSchema };
  /** The handler waits for something (the completion poll): it gets a signal that aborts when the client hangs up. */
  longPoll?: boolean;
  /** Other documented statuses beside the common errors (e.g. 408 of the completion poll). */
  extraStatuses?: number[];
  handle(input: RouteInput): Promise<unknown>;
}

const AssignQuerySchema = v.object({ autoAssignAlerts: v.optional(QueryBooleanSchema, true) });
const assign = (query: unknown) => parse(AssignQuerySchema, query ?? {}, 'query');

/** What the routes of one check type are made from: its path segment, names and schemas. */
interface TypedCheck {
  slug: string;
  type: string;
  /** Operation ids and schema names: `createTcpCheck`, `TcpCheckCreate`. */
  key: string;
  label: string;
  create: v.GenericSchema;
  update: v.GenericSchema;
  response: v.GenericSchema;
}

const CHECK_TYPES: readonly TypedCheck[] = [
  { slug: 'tcp', type: 'TCP', key: 'Tcp', label: 'TCP', create: TcpCheckCreateSchema, update: TcpCheckUpdateSchema, response: TcpCheckResponseSchema },
  { slug: 'api', type: 'API', key: 'Api', label: 'API', create: ApiCheckCreateSchema, update: ApiCheckUpdateSchema, response: ApiCheckResponseSchema },
  { slug: 'browser', type: 'BROWSER', key: 'Browser', label: 'browser', create: BrowserCheckCreateSchema, update: BrowserCheckUpdateSchema, response: BrowserCheckResponseSchema },
  { slug: 'heartbeat', type: 'HEARTBEAT', key: 'Heartbeat', label: 'heartbeat', create: HeartbeatCheckCreateSchema, update: HeartbeatCheckUpdateSchema, response: HeartbeatCheckResponseSchema },
];

/** POST /v1/checks/{slug} and GET|PUT|DELETE /v1/checks/{slug}/{id} of one check type. */
function typedCheckRoutes({ slug, type, key, label, create, update, response }: TypedCheck): RouteDef[] {
  return [
    {
      method: 'post', path: `/v1/checks/${slug}`, operationId: `create${key}Check`, summary: `Create ${article(label)} ${label} check`, tag: 'Checks',
      query: AssignQuerySchema, body: named(`${key}CheckCreate`, create), status: 201,
      response: { kind: 'object', schema: named(`${key}Check`, response) },
      handle: ({ vigil, accountId, query, body }) => vigil.checks.create(accountId, type, body, assign(query)),
    },
    {
      method: 'get', path: `/v1/checks/${slug}/:id`, operationId: `get${key}Check`, summary: `Get ${article(label)} ${label} check`, tag: 'Checks',
      params: { id: 'string' }, response: { kind: 'object', schema: named(`${key}Check`, response) },
      handle: ({ vigil, accountId, params }) => vigil.checks.get(accountId, params.id, type),
    },
    {
      method: 'put', path: `/v1/checks/${slug}/:id`, operationId: `update${key}Check`, summary: `Update ${article(label)} ${label} check`, tag: 'Checks',
      params: { id: 'string' }, query: AssignQuerySchema, body: named(`${key}CheckUpdate`, update),
      response: { kind: 'object', schema: named(`${key}Check`, response) },
      handle: ({ vigil, accountId, params, query, body }) =>
        vigil.checks.update(accountId, params.id, body, { ...assign(query), checkType: type }),
    },
    {
      method: 'delete', path: `/v1/checks/${slug}/:id`, operationId: `delete${key}Check`, summary: `Delete ${article(label)} ${label} check`, tag: 'Checks',
      params: { id: 'string' }, status: 204, response: { kind: 'empty' },
      handle: async ({ vigil, accountId, params }) => {
        await vigil.checks.get(accountId, params.id, type);
        await vigil.checks.delete(accountId, params.id);
      },
    },
  ];
}

/** The routes of a check type a plugin added (`defineCheckType`), the same four a built-in type has. */
export function checkTypeRoutes(definition: CheckTypeDefinition): RouteDef[] {
  const key = definition.checkType.toLowerCase().split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  return typedCheckRoutes({
    slug: definition.slug, type: definition.checkType, key, label: definition.label,
    create: definition.createSchema, update: definition.updateSchema, response: definition.responseSchema,
  });
}

const checkRoutes: RouteDef[] = [
  {
    method: 'get', path: '/v1/checks', operationId: 'listChecks', summary: 'List checks', tag: 'Checks',
    query: PageQuerySchema, response: { kind: 'page', schema: named('Check', CheckResponseSchema) },
    handle: ({ vigil, accountId, query }) => vigil.checks.list(accountId, query),
  },
  {
    method: 'get', path: '/v1/checks/:id', operationId: 'getCheck', summary: 'Get a check', tag: 'Checks',
    params: { id: 'string' }, response: { kind: 'object', schema: named('Check', CheckResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.checks.get(accountId, params.id),
  },
  {
    method: 'delete', path: '/v1/checks/:id', operationId: 'deleteCheck', summary: 'Delete a check', tag: 'Checks',
    params: { id: 'string' }, status: 204, response: { kind: 'empty' },
    handle: ({ vigil, accountId, params }) => vigil.checks.delete(accountId, params.id),
  },
  ...CHECK_TYPES.flatMap(typedCheckRoutes),
  {
    method: 'get', path: '/v1/checks/heartbeats/:checkId/availability', operationId: 'getHeartbeatAvailability',
    summary: 'Availability of a heartbeat check', tag: 'Checks',
    params: { checkId: 'string' }, query: HeartbeatAvailabilityQuerySchema,
    response: { kind: 'object', schema: named('HeartbeatAvailability', HeartbeatAvailabilitySchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.heartbeats.availability(accountId, params.checkId, query),
  },
];

const groupReads = (version: 'v1' | 'v2'): RouteDef[] => [
  {
    method: 'get', path: `/${version}/check-groups`, operationId: `listCheckGroups${version.toUpperCase()}`, summary: 'List check groups', tag: 'Check groups',
    query: PageQuerySchema, response: { kind: 'page', schema: named('CheckGroup', CheckGroupResponseSchema) },
    handle: ({ vigil, accountId, query }) => vigil.checkGroups.list(accountId, query),
  },
  {
    method: 'get', path: `/${version}/check-groups/:id`, operationId: `getCheckGroup${version.toUpperCase()}`, summary: 'Get a check group', tag: 'Check groups',
    params: { id: 'integer' }, response: { kind: 'object', schema: named('CheckGroup', CheckGroupResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.checkGroups.get(accountId, params.id),
  },
  {
    method: 'get', path: `/${version}/check-groups/:id/checks`, operationId: `listCheckGroupChecks${version.toUpperCase()}`,
    summary: 'List the checks of a group', tag: 'Check groups',
    params: { id: 'integer' }, query: PageQuerySchema, response: { kind: 'page', schema: named('Check', CheckResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.checkGroups.listChecks(accountId, params.id, query),
  },
];

const groupRoutes: RouteDef[] = [
  ...groupReads('v1'),
  ...groupReads('v2'),
  {
    method: 'post', path: '/v2/check-groups', operationId: 'createCheckGroup', summary: 'Create a check group', tag: 'Check groups',
    query: AssignQuerySchema, body: named('CheckGroupCreate', CheckGroupCreateSchema), status: 201,
    response: { kind: 'object', schema: named('CheckGroup', CheckGroupResponseSchema) },
    handle: ({ vigil, accountId, query, body }) => vigil.checkGroups.create(accountId, body, assign(query)),
  },
  {
    method: 'put', path: '/v2/check-groups/:id', operationId: 'updateCheckGroup', summary: 'Update a check group', tag: 'Check groups',
    params: { id: 'integer' }, query: AssignQuerySchema, body: named('CheckGroupUpdate', CheckGroupUpdateSchema),
    response: { kind: 'object', schema: named('CheckGroup', CheckGroupResponseSchema) },
    handle: ({ vigil, accountId, params, query, body }) => vigil.checkGroups.update(accountId, params.id, body, assign(query)),
  },
  {
    method: 'delete', path: '/v2/check-groups/:id', operationId: 'deleteCheckGroup', summary: 'Delete a check group (409 while it has checks)', tag: 'Check groups',
    params: { id: 'integer' }, status: 204, response: { kind: 'empty' }, extraStatuses: [409],
    handle: ({ vigil, accountId, params }) => vigil.checkGroups.delete(accountId, params.id),
  },
];

/** Plain CRUD of a resource with a numeric id. */
function crud(options: {
  base: string;
  tag: string;
  noun: string;
  plural: string;
  create: NamedSchema;
  update?: NamedSchema;
  response: NamedSchema;
  service: (vigil: Vigil) => {
    list(accountId: string, query: unknown): Promise<Page<unknown>>;
    get(accountId: string, id: unknown): Promise<unknown>;
    create(accountId: string, body: unknown): Promise<unknown>;
    update?(accountId: string, id: unknown, body: unknown): Promise<unknown>;
    delete(accountId: string, id: unknown): Promise<void>;
  };
  idType?: 'integer' | 'string';
  /** The path parameter's name, as the spec spells it. */
  idParam?: string;
}): RouteDef[] {
  const { base, tag, noun, plural, service } = options;
  const idType = options.idType ?? 'integer';
  const id = options.idParam ?? 'id';
  const Noun = noun.replace(/(^|\s)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
  const Plural = plural.replace(/(^|\s)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
  const routes: RouteDef[] = [
    {
      method: 'get', path: base, operationId: `list${Plural}`, summary: `List ${plural}`, tag,
      query: PageQuerySchema, response: { kind: 'page', schema: options.response },
      handle: ({ vigil, accountId, query }) => service(vigil).list(accountId, query),
    },
    {
      method: 'get', path: `${base}/:${id}`, operationId: `get${Noun}`, summary: `Get ${article(noun)} ${noun}`, tag,
      params: { [id]: idType }, response: { kind: 'object', schema: options.response },
      handle: ({ vigil, accountId, params }) => service(vigil).get(accountId, params[id]),
    },
    {
      method: 'post', path: base, operationId: `create${Noun}`, summary: `Create ${article(noun)} ${noun}`, tag,
      body: options.create, status: 201, response: { kind: 'object', schema: options.response },
      handle: ({ vigil, accountId, body }) => service(vigil).create(accountId, body),
    },
    {
      method: 'delete', path: `${base}/:${id}`, operationId: `delete${Noun}`, summary: `Delete ${article(noun)} ${noun}`, tag,
      params: { [id]: idType }, status: 204, response: { kind: 'empty' },
      handle: ({ vigil, accountId, params }) => service(vigil).delete(accountId, params[id]),
    },
  ];
  if (options.update) {
    routes.push({
      method: 'put', path: `${base}/:${id}`, operationId: `update${Noun}`, summary: `Update ${article(noun)} ${noun}`, tag,
      params: { [id]: idType }, body: options.update, response: { kind: 'object', schema: options.response },
      handle: ({ vigil, accountId, params, body }) => service(vigil).update!(accountId, params[id], body),
    });
  }
  return routes;
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a';
}

const channelRoutes: RouteDef[] = [
  ...crud({
    base: '/v1/alert-channels', tag: 'Alert channels', noun: 'alert channel', plural: 'alert channels',
    create: named('AlertChannelCreate', AlertChannelCreateSchema), update: named('AlertChannelUpdate', AlertChannelUpdateSchema),
    response: named('AlertChannel', AlertChannelResponseSchema), service: (vigil) => vigil.alertChannels,
  }),
  {
    method: 'put', path: '/v1/alert-channels/:id/subscriptions', operationId: 'updateAlertChannelSubscriptions',
    summary: 'Replace the subscriptions of an alert channel', tag: 'Alert channels',
    params: { id: 'integer' }, body: named('AlertChannelSubscriptionsUpdate', AlertChannelSubscriptionsUpdateSchema),
    response: { kind: 'object', schema: named('AlertChannel', AlertChannelResponseSchema) },
    handle: ({ vigil, accountId, params, body }) => vigil.alertChannels.updateSubscriptions(accountId, params.id, body),
  },
  {
    method: 'get', path: '/v1/alert-channels/:id/deliveries', operationId: 'listAlertChannelDeliveries',
    summary: 'The delivery log of an alert channel, newest first', tag: 'Alert channels',
    params: { id: 'integer' }, query: DeliveryLogQuerySchema,
    response: { kind: 'array', schema: named('DeliveryAttempt', DeliveryAttemptSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.alertChannels.deliveries(accountId, params.id, query),
  },
];

const dashboardRoutes: RouteDef[] = [
  ...crud({
    base: '/v1/dashboards', tag: 'Dashboards', noun: 'dashboard', plural: 'dashboards',
    create: named('DashboardCreate', DashboardCreateSchema), update: named('DashboardUpdate', DashboardUpdateSchema),
    response: named('Dashboard', DashboardResponseSchema), service: (vigil) => vigil.dashboards,
  }),
  {
    method: 'post', path: '/v1/dashboards/:id/keys', operationId: 'createDashboardKey', summary: 'Add an access key to a private dashboard',
    tag: 'Dashboards', params: { id: 'integer' }, status: 201,
    response: { kind: 'object', schema: named('Dashboard', DashboardResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.dashboards.createKey(accountId, params.id),
  },
  {
    method: 'delete', path: '/v1/dashboards/:id/keys/:keyId', operationId: 'deleteDashboardKey', summary: 'Remove an access key of a dashboard',
    tag: 'Dashboards', params: { id: 'integer', keyId: 'string' }, status: 204, response: { kind: 'empty' },
    handle: async ({ vigil, accountId, params }) => {
      await vigil.dashboards.deleteKey(accountId, params.id, params.keyId);
    },
  },
];

const maintenanceRoutes = crud({
  base: '/v1/maintenance-windows', tag: 'Maintenance windows', noun: 'maintenance window', plural: 'maintenance windows',
  create: named('MaintenanceWindowCreate', MaintenanceWindowCreateSchema), update: named('MaintenanceWindowUpdate', MaintenanceWindowUpdateSchema),
  response: named('MaintenanceWindow', MaintenanceWindowResponseSchema), service: (vigil) => vigil.maintenanceWindows,
});

const incidentRoutes: RouteDef[] = [
  ...crud({
    base: '/v1/incidents', tag: 'Incidents', noun: 'incident', plural: 'incidents', idType: 'string',
    create: named('IncidentCreate', IncidentCreateSchema), update: named('IncidentUpdate', IncidentUpdateSchema),
    response: named('Incident', IncidentResponseSchema), service: (vigil) => vigil.incidents,
  }),
  {
    method: 'post', path: '/v1/incidents/:id/updates', operationId: 'createIncidentUpdate', summary: 'Add an update to an incident',
    tag: 'Incidents', params: { id: 'string' }, body: named('IncidentUpdateCreate', IncidentUpdateCreateSchema), status: 201,
    response: { kind: 'object', schema: named('Incident', IncidentResponseSchema) },
    handle: ({ vigil, accountId, params, body }) => vigil.incidents.addUpdate(accountId, params.id, body),
  },
];

// The literal status-page paths come before `/v1/status-pages/:id`.
const statusPageRoutes: RouteDef[] = [
  {
    method: 'get', path: '/v1/status-pages/services', operationId: 'listStatusPageServices', summary: 'List services', tag: 'Status pages',
    query: ServiceListQuerySchema, response: { kind: 'cursor', schema: named('Service', ServiceResponseSchema) },
    handle: ({ vigil, accountId, query }) => vigil.services.list(accountId, query),
  },
  {
    method: 'post', path: '/v1/status-pages/services', operationId: 'createStatusPageService', summary: 'Create a service', tag: 'Status pages',
    body: named('ServiceCreate', ServiceCreateSchema), status: 201, response: { kind: 'object', schema: named('Service', ServiceResponseSchema) },
    handle: ({ vigil, accountId, body }) => vigil.services.create(accountId, body),
  },
  {
    method: 'get', path: '/v1/status-pages/services/:id', operationId: 'getStatusPageService', summary: 'Get a service', tag: 'Status pages',
    params: { id: 'string' }, response: { kind: 'object', schema: named('Service', ServiceResponseSchema) },
    handle: ({ vigil, accountId, params }) => vigil.services.get(accountId, params.id),
  },
  {
    method: 'put', path: '/v1/status-pages/services/:id', operationId: 'updateStatusPageService', summary: 'Update a service', tag: 'Status pages',
    params: { id: 'string' }, body: named('ServiceUpdate', ServiceUpdateSchema), response: { kind: 'object', schema: named('Service', ServiceResponseSchema) },
    handle: ({ vigil, accountId, params, body }) => vigil.services.update(accountId, params.id, body),
  },
  {
    method: 'delete', path: '/v1/status-pages/services/:id', operationId: 'deleteStatusPageService', summary: 'Delete a service', tag: 'Status pages',
    params: { id: 'string' }, status: 204, response: { kind: 'empty' },
    handle: ({ vigil, accountId, params }) => vigil.services.delete(accountId, params.id),
  },
  {
    method: 'get', path: '/v1/status-pages/incidents', operationId: 'listStatusPageIncidents', summary: 'List status-page incidents', tag: 'Status pages',
    query: StatusPageIncidentListQuerySchema, response: { kind: 'cursor', schema: named('StatusPageIncident', StatusPageIncidentEntrySchema) },
    handle: ({ vigil, accountId, query }) => vigil.statusPageIncidents.list(accountId, query),
  },
  {
    method: 'post', path: '/v1/status-pages/incidents', operationId: 'createStatusPageIncident', summary: 'Create a status-page incident', tag: 'Status pages',
    body: named('StatusPageIncidentCreate', StatusPageIncidentCreateSchema), status: 201,
    response: { kind: 'object', schema: named('StatusPageIncident', StatusPageIncidentEntrySchema) },
    handle: ({ vigil, accountId, body }) => vigil.statusPageIncidents.create(accountId, body),
  },
  {
    method: 'post', path: '/v1/status-pages/incidents/:id/updates', operationId: 'createStatusPageIncidentUpdate',
    summary: 'Add an update to a status-page incident', tag: 'Status pages',
    params: { id: 'string' }, body: named('StatusPageIncidentUpdateCreate', StatusPageIncidentUpdateCreateSchema), status: 201,
    response: { kind: 'object', schema: named('StatusPageIncident', StatusPageIncidentEntrySchema) },
    handle: ({ vigil, accountId, params, body }) => vigil.statusPageIncidents.addUpdate(accountId, params.id, body),
  },
  {
    method: 'get', path: '/v1/status-pages/:statusPageId/subscribers', operationId: 'listStatusPageSubscribers',
    summary: 'List the email subscribers of a status page (Vigil)', tag: 'Status pages',
    params: { statusPageId: 'string' }, query: StatusPageSubscriberListQuerySchema,
    response: { kind: 'cursor', schema: named('StatusPageSubscriber', StatusPageSubscriberResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.statusPageSubscribers.list(accountId, params.statusPageId, query),
  },
  {
    method: 'delete', path: '/v1/status-pages/:statusPageId/subscribers/:subscriberId', operationId: 'deleteStatusPageSubscriber',
    summary: 'Remove an email subscriber of a status page (Vigil)', tag: 'Status pages',
    params: { statusPageId: 'string', subscriberId: 'string' }, status: 204, response: { kind: 'empty' },
    handle: ({ vigil, accountId, params }) => vigil.statusPageSubscribers.remove(accountId, params.statusPageId, params.subscriberId),
  },
  ...crud({
    base: '/v1/status-pages', tag: 'Status pages', noun: 'status page', plural: 'status pages', idType: 'string',
    create: named('StatusPageCreate', StatusPageCreateSchema), update: named('StatusPageUpdate', StatusPageUpdateSchema),
    response: named('StatusPage', StatusPageResponseSchema), service: (vigil) => vigil.statusPages,
    idParam: 'statusPageId',
  }),
];

const certificateRoutes = crud({
  base: '/v1/client-certificates', tag: 'Client certificates', noun: 'client certificate', plural: 'client certificates', idType: 'string',
  create: named('ClientCertificateCreate', ClientCertificateCreateSchema),
  response: named('ClientCertificate', ClientCertificateResponseSchema), service: (vigil) => vigil.clientCertificates,
});

const snippetRoutes = crud({
  base: '/v1/snippets', tag: 'Snippets', noun: 'snippet', plural: 'snippets',
  create: named('SnippetCreate', SnippetCreateSchema), update: named('SnippetUpdate', SnippetUpdateSchema),
  response: named('Snippet', SnippetResponseSchema), service: (vigil) => vigil.snippets,
});

/** What `/v1/error-groups/{id}` answers: a check's group, or a test project's in its own shape. */
const AnyErrorGroupSchema = named('AnyErrorGroup', v.union([ErrorGroupResponseSchema, TestSessionErrorGroupResponseSchema]));

const errorGroupRoutes: RouteDef[] = [
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

const resultRoutes: RouteDef[] = [
  {
    method: 'get', path: '/v1/check-results/:checkId', operationId: 'listCheckResults', summary: 'List the results of a check, newest first', tag: 'Check results',
    params: { checkId: 'string' }, query: CheckResultsQuerySchema, response: { kind: 'page', schema: named('CheckResult', CheckResultResponseSchema) },
    handle: ({ vigil, accountId, params, query }) => vigil.checkResults.list(accountId, params.checkId, query),
  },
  {
    method: 'get', path: '/v1/check-results/:checkId/:checkResultId', operationId: 'getCheckResult', summary: 'Get one result of a check', tag: 'Check results',
    params: { checkId: 'string', checkResultId: 'string' }, response: { kind: 'object', schema: named('CheckResult', CheckResultResponseSchema) },
    handle: async ({ vigil, accountId, params }) => {
      const result = await vigil.checkResults.get(accountId, params.checkResultId);
      // A result reached through another check's path reads as missing.
      if (result.checkId !== params.checkId) throw new NotFoundError('Check result not found');
      return result;
    },
  },
  {
    method: 'get', path: '/v1/check-statuses', operationId: 'listCheckStatuses', summary: 'The current status of every check', tag: 'Check statuses',
    response: { kind: 'array', schema: named('CheckStatus', CheckStatusResponseSchema) },
    handle: ({ vigil, accountId }) => vigil.checkStatuses.list(accountId),
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
];

const SessionListSchema = v.object({ sessions: v.array(CheckSessionResponseSchema) });

const sessionRoutes: RouteDef[] = [
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

/** Every authenticated operation of the public API, in the order Express matches them. */
export const API_ROUTES: readonly RouteDef[] = [
  ...checkRoutes,
  ...groupRoutes,
  ...channelRoutes,
  ...dashboardRoutes,
  ...maintenanceRoutes,
  ...incidentRoutes,
  ...statusPageRoutes,
  ...certificateRoutes,
  ...snippetRoutes,
  ...errorGroupRoutes,
  ...resultRoutes,
  ...sessionRoutes,
];

/**
 * Every operation, with the routes of the check types plugins added (`vigil.checks.pluginCheckTypes`)
 * after the built-in check routes.
 */
export function apiRoutes(checkTypes: readonly CheckTypeDefinition[] = []): readonly RouteDef[] {
  if (checkTypes.length === 0) return API_ROUTES;
  return [...API_ROUTES.slice(0, checkRoutes.length), ...checkTypes.flatMap(checkTypeRoutes), ...API_ROUTES.slice(checkRoutes.length)];
}
