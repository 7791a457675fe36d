import * as v from 'valibot';
import {
  ALERT_CHANNEL_TYPES, AlertChannelCreateSchema, AlertChannelFlagsSchema, AlertChannelSubscriptionsUpdateSchema, AlertChannelUpdateSchema,
  CheckGroupCreateSchema, CheckGroupUpdateSchema, DashboardCreateSchema, DashboardUpdateSchema, MaintenanceWindowCreateSchema,
  MaintenanceWindowUpdateSchema, NotFoundError, ServiceCreateSchema, ServiceUpdateSchema, StatusPageCreateSchema, StatusPageIncidentCreateSchema,
  StatusPageIncidentUpdateCreateSchema, StatusPageUpdateSchema, ValidationError, type AlertChannelResponse, type DeliveryReceipt,
  type StatusPageIncidentEntry, type StatusPageResponse, type Vigil,
} from '@vigil/core';
import type { FormOptions } from './fields.js';
import type { FormResource, ResourceId } from './resource-types.js';
import { checkResources } from './resources-checks.js';

export { heartbeatPingPath, installedCheckTypes } from './resources-checks.js';
export type { FormResource, ResourceId } from './resource-types.js';

const same = (record: unknown) => record;

/** The create schema of a built-in channel type: its option of the API's `type` variant. */
function builtinChannelSchema(type: string): v.GenericSchema {
  const option = AlertChannelCreateSchema.options.find((o) => o.entries.type.literal === type);
  return option as unknown as v.GenericSchema;
}

function channelResource(type: string, createSchema: v.GenericSchema, secretFields: readonly string[]): FormResource {
  const formOptions: FormOptions = {
    kinds: Object.fromEntries(secretFields.map((f) => [`config.${f}`, 'password' as const])),
    help: { sslExpiryThreshold: 'Days before a certificate expires that the SSL alert is sent.' },
  };
  return {
    key: `alert-channel-${type.toLowerCase().replace(/_/g, '-')}`,
    label: `${type.replace(/_/g, ' ').toLowerCase().replace(/^\w/, (c) => c.toUpperCase())} alert channel`,
    group: 'alert-channel',
    type,
    createSchema,
    updateSchema: AlertChannelUpdateSchema,
    formOptions,
    values: same,
    list: async (vigil, accountId, query) => {
      const page = await vigil.alertChannels.list(accountId, query ?? {});
      return { items: page.items.filter((c) => c.type === type) };
    },
    get: async (vigil, accountId, id) => {
      const channel = await vigil.alertChannels.get(accountId, id);
      // As a typed check route does: a channel of another type is not found under this key.
      if (channel.type !== type) throw new NotFoundError('Alert channel not found');
      return channel;
    },
    create: (vigil, accountId, body) => vigil.alertChannels.create(accountId, body),
    update: (vigil, accountId, id, body) => vigil.alertChannels.update(accountId, id, body),
    delete: async (vigil, accountId, id) => {
      const channel = await vigil.alertChannels.get(accountId, id);
      if (channel.type !== type) throw new NotFoundError('Alert channel not found');
      await vigil.alertChannels.delete(accountId, id);
    },
  };
}

/** Every built-in channel type, and the types of the plugins' transports. */
function channelResources(vigil: Vigil): FormResource[] {
  const builtin = ALERT_CHANNEL_TYPES.map((t) => channelResource(t, builtinChannelSchema(t), []));
  const plugins = [...vigil.deps.transports.values()]
    .filter((t) => !(ALERT_CHANNEL_TYPES as readonly string[]).includes(t.channelType))
    .map((t) => channelResource(
      t.channelType,
      v.object({ type: v.literal(t.channelType), config: t.configSchema, ...AlertChannelFlagsSchema.entries }),
      t.secretFields ?? [],
    ));
  return [...builtin, ...plugins];
}

/** Sends an alert channel a test alert now, through its transport; rejects with what the transport reported. */
export function sendTestAlert(vigil: Vigil, accountId: string, channelId: ResourceId): Promise<DeliveryReceipt> {
  return vigil.alertChannels.sendTest(accountId, channelId);
}

const SubscriptionsFormSchema = v.object({ subscriptions: AlertChannelSubscriptionsUpdateSchema });

/** A channel's checks and groups, edited as one list (the API's PUT of the whole list); keyed by the channel's id. */
const alertSubscriptions: FormResource = {
  key: 'alert-subscriptions',
  label: 'Alert subscriptions',
  group: 'alert-subscriptions',
  createSchema: SubscriptionsFormSchema,
  updateSchema: SubscriptionsFormSchema,
  formOptions: {
    help: { subscriptions: 'The checks and groups the channel alerts for: [{"checkId": "…"}, {"groupId": 1, "activated": false}].' },
  },
  values: (record) => ({
    subscriptions: (record as AlertChannelResponse).subscriptions.map((s) => ({
      ...(s.checkId !== null ? { checkId: s.checkId } : {}), ...(s.groupId !== null ? { groupId: s.groupId } : {}), activated: s.activated,
    })),
  }),
  list: (vigil, accountId, query) => vigil.alertChannels.list(accountId, query ?? {}),
  get: (vigil, accountId, id) => vigil.alertChannels.get(accountId, id),
  update: async (vigil, accountId, id, body) => {
    try {
      return await vigil.alertChannels.updateSubscriptions(accountId, id, (body as { subscriptions?: unknown }).subscriptions ?? []);
    } catch (err) {
      // The service names items of the list it was given; the form holds that list as `subscriptions`.
      if (err instanceof ValidationError) {
        throw new ValidationError(err.issues.map((i) => ({ ...i, path: i.path ? `subscriptions.${i.path}` : 'subscriptions' })));
      }
      throw err;
    }
  },
};

type Service = {
  create(accountId: string, body: unknown): Promise<unknown>;
  update(accountId: string, id: unknown, body: unknown): Promise<unknown>;
  get(accountId: string, id: unknown): Promise<unknown>;
  list(accountId: string, query: unknown): Promise<{ items: unknown[]; total: number }>;
  delete(accountId: string, id: unknown): Promise<void>;
};

function plain(
  key: string,
  label: string,
  group: FormResource['group'],
  schemas: { createSchema: v.GenericSchema; updateSchema: v.GenericSchema },
  service: (vigil: Vigil) => Service,
  extra: Partial<FormResource> = {},
): FormResource {
  return {
    key, label, group, ...schemas, formOptions: {}, values: same,
    list: (vigil, accountId, query) => service(vigil).list(accountId, query ?? {}),
    get: (vigil, accountId, id) => service(vigil).get(accountId, id),
    create: (vigil, accountId, body) => service(vigil).create(accountId, body),
    update: (vigil, accountId, id, body) => service(vigil).update(accountId, id, body),
    delete: (vigil, accountId, id) => service(vigil).delete(accountId, id),
    ...extra,
  };
}

const checkGroups = plain('check-group', 'Check group', 'check-group', { createSchema: CheckGroupCreateSchema, updateSchema: CheckGroupUpdateSchema }, (x) => x.checkGroups, {
  formOptions: { kinds: { browserCheckDefaults: 'code', localSetupScript: 'code', localTearDownScript: 'code' } },
});
const maintenanceWindows = plain(
  'maintenance-window', 'Maintenance window', 'maintenance-window',
  { createSchema: MaintenanceWindowCreateSchema, updateSchema: MaintenanceWindowUpdateSchema }, (x) => x.maintenanceWindows,
  { formOptions: { help: { tags: 'Checks with one of these tags are paused (with pauseAllChecks: every check).', timezone: 'An IANA time zone such as Europe/Berlin.' } } },
);
const dashboards = plain('dashboard', 'Dashboard', 'dashboard', { createSchema: DashboardCreateSchema, updateSchema: DashboardUpdateSchema }, (x) => x.dashboards, {
  formOptions: { kinds: { customCSS: 'code' }, help: { customUrl: 'Left empty, one is made from the dashboard\'s id.' } },
});
const statusPages = plain('status-page', 'Status page', 'status-page', { createSchema: StatusPageCreateSchema, updateSchema: StatusPageUpdateSchema }, (x) => x.statusPages, {
  formOptions: { help: { cards: 'JSON: [{"name": "API", "serviceIds": ["…"]}]' } },
  // The response's cards carry their services; the form's cards name them by id, as a body does.
  values: (record) => {
    const page = record as StatusPageResponse;
    return { ...page, cards: page.cards.map((c) => ({ name: c.name, serviceIds: c.services.map((s) => s.id) })) };
  },
});

/** The services a status page's cards and incidents name. */
const statusPageServices: FormResource = {
  ...plain('status-page-service', 'Status page service', 'status-page-service', { createSchema: ServiceCreateSchema, updateSchema: ServiceUpdateSchema }, (x) => x.services as unknown as Service),
  list: async (vigil, accountId, query) => ({ items: (await vigil.services.list(accountId, { paginated: 'false', ...(query as object) })).entries }),
};

/**
 * Incidents of status pages: created with their first update, then given further updates
 * (`addStatusPageIncidentUpdate`, form schema StatusPageIncidentUpdateCreateSchema); the API
 * neither edits nor deletes them.
 */
const statusPageIncidents: FormResource = {
  key: 'status-page-incident',
  label: 'Status page incident',
  group: 'status-page-incident',
  createSchema: StatusPageIncidentCreateSchema,
  formOptions: { help: { serviceIds: 'The ids of the affected services.' } },
  values: same,
  list: async (vigil, accountId, query) => ({ items: (await vigil.statusPageIncidents.list(accountId, query ?? {})).entries }),
  get: (vigil, accountId, id) => vigil.statusPageIncidents.get(accountId, id),
  create: (vigil, accountId, body) => vigil.statusPageIncidents.create(accountId, body),
};

/** The form of an incident's next update. */
export const StatusPageIncidentUpdateFormSchema = StatusPageIncidentUpdateCreateSchema;

export function addStatusPageIncidentUpdate(vigil: Vigil, accountId: string, incidentId: ResourceId, body: unknown): Promise<StatusPageIncidentEntry> {
  return vigil.statusPageIncidents.addUpdate(accountId, incidentId, body);
}

/** Everything the console edits in this Vigil: its installed check types and channel types included. */
export function formResources(vigil: Vigil): FormResource[] {
  return [
    ...checkResources(vigil),
    checkGroups,
    ...channelResources(vigil),
    alertSubscriptions,
    maintenanceWindows,
    dashboards,
    statusPages,
    statusPageServices,
    statusPageIncidents,
  ];
}

/** The resource of a key, or undefined. */
export function findFormResource(vigil: Vigil, key: string): FormResource | undefined {
  return formResources(vigil).find((r) => r.key === key);
}
