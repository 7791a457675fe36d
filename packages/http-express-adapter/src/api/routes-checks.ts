// The routes of checks (of every type, a plugin's included) and of check groups.
import * as v from 'valibot';
import {
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
  DnsCheckCreateSchema,
  DnsCheckResponseSchema,
  DnsCheckUpdateSchema,
  IcmpCheckCreateSchema,
  IcmpCheckResponseSchema,
  IcmpCheckUpdateSchema,
  MultiStepCheckCreateSchema,
  MultiStepCheckResponseSchema,
  MultiStepCheckUpdateSchema,
  PlaywrightCheckCreateSchema,
  PlaywrightCheckResponseSchema,
  PlaywrightCheckUpdateSchema,
  HeartbeatAvailabilityQuerySchema,
  HeartbeatAvailabilitySchema,
  HeartbeatCheckCreateSchema,
  HeartbeatCheckResponseSchema,
  HeartbeatCheckUpdateSchema,
  PageQuerySchema,
  TcpCheckCreateSchema,
  TcpCheckResponseSchema,
  TcpCheckUpdateSchema,
  UrlCheckCreateSchema,
  UrlCheckResponseSchema,
  UrlCheckUpdateSchema,
  type CheckTypeDefinition,
} from '@vigil/core';
import { named, AssignQuerySchema, assign, article, type RouteDef } from './route-def.js';

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
  { slug: 'dns', type: 'DNS', key: 'Dns', label: 'DNS', create: DnsCheckCreateSchema, update: DnsCheckUpdateSchema, response: DnsCheckResponseSchema },
  { slug: 'url', type: 'URL', key: 'Url', label: 'URL', create: UrlCheckCreateSchema, update: UrlCheckUpdateSchema, response: UrlCheckResponseSchema },
  { slug: 'icmp', type: 'ICMP', key: 'Icmp', label: 'ICMP', create: IcmpCheckCreateSchema, update: IcmpCheckUpdateSchema, response: IcmpCheckResponseSchema },
  {
    slug: 'multistep', type: 'MULTI_STEP', key: 'MultiStep', label: 'multi-step',
    create: MultiStepCheckCreateSchema, update: MultiStepCheckUpdateSchema, response: MultiStepCheckResponseSchema,
  },
  {
    slug: 'playwright', type: 'PLAYWRIGHT', key: 'Playwright', label: 'Playwright',
    create: PlaywrightCheckCreateSchema, update: PlaywrightCheckUpdateSchema, response: PlaywrightCheckResponseSchema,
  },
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

/**
 * POST /v1/checks/agentic: AGENTIC is in the spec's check-type enum, but Vigil builds no AGENTIC
 * checks in; until a plugin serves the type (its routes replace this one), creating one answers a
 * 400 that says no runner for it is installed and how a plugin adds one.
 */
export const unservedAgentic: RouteDef = {
  method: 'post', path: '/v1/checks/agentic', operationId: 'createAgenticCheck', summary: 'Create an AGENTIC check (served by a plugin only)', tag: 'Checks',
  status: 201, response: { kind: 'object', schema: named('Check', CheckResponseSchema) },
  handle: ({ vigil, accountId, body }) => vigil.checks.create(accountId, 'AGENTIC', body as never),
};

export const checkRoutes: RouteDef[] = [
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
  unservedAgentic,
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

export const groupRoutes: RouteDef[] = [
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
