// The routes of the resources an account configures: alert channels, dashboards, maintenance
// windows, incidents, status pages, client certificates and snippets.
import * as v from 'valibot';
import {
  AlertChannelCreateSchema,
  AlertChannelResponseSchema,
  AlertChannelSubscriptionsUpdateSchema,
  AlertChannelUpdateSchema,
  ClientCertificateCreateSchema,
  ClientCertificateResponseSchema,
  DashboardCreateSchema,
  DeliveryLogQuerySchema,
  DashboardResponseSchema,
  DashboardUpdateSchema,
  IncidentCreateSchema,
  IncidentResponseSchema,
  IncidentUpdateCreateSchema,
  IncidentUpdateSchema,
  MaintenanceWindowCreateSchema,
  MaintenanceWindowResponseSchema,
  MaintenanceWindowUpdateSchema,
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
  type Vigil,
} from '@vigil/core';
import { named, crud, type RouteDef } from './route-def.js';

const DeliveryAttemptSchema = v.object({
  outboxId: v.string(),
  alertChannelId: v.number(),
  at: v.string(),
  ok: v.boolean(),
  detail: v.nullable(v.string()),
});

export const channelRoutes: RouteDef[] = [
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

export const dashboardRoutes: RouteDef[] = [
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

export const maintenanceRoutes = crud({
  base: '/v1/maintenance-windows', tag: 'Maintenance windows', noun: 'maintenance window', plural: 'maintenance windows',
  create: named('MaintenanceWindowCreate', MaintenanceWindowCreateSchema), update: named('MaintenanceWindowUpdate', MaintenanceWindowUpdateSchema),
  response: named('MaintenanceWindow', MaintenanceWindowResponseSchema), service: (vigil) => vigil.maintenanceWindows,
});

export const incidentRoutes: RouteDef[] = [
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
export const statusPageRoutes: RouteDef[] = [
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

export const certificateRoutes = crud({
  base: '/v1/client-certificates', tag: 'Client certificates', noun: 'client certificate', plural: 'client certificates', idType: 'string',
  create: named('ClientCertificateCreate', ClientCertificateCreateSchema),
  response: named('ClientCertificate', ClientCertificateResponseSchema), service: (vigil) => vigil.clientCertificates,
});

export const snippetRoutes = crud({
  base: '/v1/snippets', tag: 'Snippets', noun: 'snippet', plural: 'snippets',
  create: named('SnippetCreate', SnippetCreateSchema), update: named('SnippetUpdate', SnippetUpdateSchema),
  response: named('Snippet', SnippetResponseSchema), service: (vigil) => vigil.snippets,
});
