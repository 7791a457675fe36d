import type { Account, ApiKey } from '../model/account.js';
import { maintenanceWindowEndMs } from '../rules/maintenance.js';
import type { AlertChannel, AlertSubscription } from '../model/alert-channel.js';
import type { CheckGroup } from '../model/check-group.js';
import type { CheckResult } from '../model/check-result.js';
import type { CheckSession } from '../model/check-session.js';
import type { CheckStatus } from '../model/check-status.js';
import type { Check } from '../model/check.js';
import type { ClientCertificate } from '../model/client-certificate.js';
import type { Dashboard } from '../model/dashboard.js';
import type { ErrorGroup, TestSessionErrorGroup } from '../model/error-group.js';
import type { Incident, IncidentUpdateRecord } from '../model/incident.js';
import type { MaintenanceWindow } from '../model/maintenance-window.js';
import type { ManagedResource } from '../model/managed-resource.js';
import type { Snippet } from '../model/snippet.js';
import type { Service, StatusPage, StatusPageIncident, StatusPageIncidentUpdate, StatusPageSubscriber } from '../model/status-page.js';
import type { ClientCertificateRepository, DeliveryAttempt, OutboxMessage, VigilStorage } from '../ports/storage.js';
import { dashboardRepository, incidentRepository, serviceRepository, statusPageIncidentRepository, statusPageRepository, statusPageSubscriberRepository } from './memory-pages.js';
import { outbox, scheduleStore, type ScheduleRow } from './memory-queues.js';
import {
  accountRepository,
  alertSubscriptionRepository,
  apiKeyRepository,
  checkRepository,
  repository,
} from './memory-resources.js';
import { managedResourceRepository } from './memory-managed.js';
import { checkResultRepository } from './memory-results.js';
import {
  alertStateRepository,
  checkSessionRepository,
  checkStatusRepository,
  errorGroupRepository,
  heartbeatRepository,
  testSessionErrorGroupRepository,
  type AlertStateRow,
  type HeartbeatPingRow,
} from './memory-runs.js';
import { MemoryTable } from './memory-table.js';
import type { RawReader, RawTable } from './raw-tables.js';

export interface MemoryStorageOptions {
  /** The store's name, e.g. to tell two stores apart in logs. */
  name?: string;
}

/** The row type each logical table holds. */
interface MemoryRows {
  accounts: Account;
  api_keys: ApiKey;
  checks: Check;
  check_groups: CheckGroup;
  alert_channels: AlertChannel;
  alert_subscriptions: AlertSubscription;
  dashboards: Dashboard;
  maintenance_windows: MaintenanceWindow;
  incidents: Incident;
  incident_updates: IncidentUpdateRecord;
  status_pages: StatusPage;
  services: Service;
  status_page_incidents: StatusPageIncident;
  status_page_incident_updates: StatusPageIncidentUpdate;
  status_page_subscribers: StatusPageSubscriber;
  client_certificates: ClientCertificate;
  snippets: Snippet;
  managed_resources: ManagedResource;
  error_groups: ErrorGroup;
  test_session_error_groups: TestSessionErrorGroup;
  check_sessions: CheckSession;
  check_statuses: CheckStatus;
  check_results: CheckResult;
  alert_states: AlertStateRow;
  heartbeat_pings: HeartbeatPingRow;
  schedule: ScheduleRow;
  outbox: OutboxMessage;
  delivery_attempts: DeliveryAttempt;
}

type MemoryTables = { [K in RawTable]: MemoryTable<MemoryRows[K]> };

function createTables(): MemoryTables {
  const table = <K extends RawTable>(name: K) => new MemoryTable<MemoryRows[K]>(name);
  return {
    accounts: table('accounts'),
    api_keys: table('api_keys'),
    checks: table('checks'),
    check_groups: table('check_groups'),
    alert_channels: table('alert_channels'),
    alert_subscriptions: table('alert_subscriptions'),
    dashboards: table('dashboards'),
    maintenance_windows: table('maintenance_windows'),
    incidents: table('incidents'),
    incident_updates: table('incident_updates'),
    status_pages: table('status_pages'),
    services: table('services'),
    status_page_incidents: table('status_page_incidents'),
    status_page_incident_updates: table('status_page_incident_updates'),
    status_page_subscribers: table('status_page_subscribers'),
    client_certificates: table('client_certificates'),
    snippets: table('snippets'),
    managed_resources: table('managed_resources'),
    error_groups: table('error_groups'),
    test_session_error_groups: table('test_session_error_groups'),
    check_sessions: table('check_sessions'),
    check_statuses: table('check_statuses'),
    check_results: table('check_results'),
    alert_states: table('alert_states'),
    heartbeat_pings: table('heartbeat_pings'),
    schedule: table('schedule'),
    outbox: table('outbox'),
    delivery_attempts: table('delivery_attempts'),
  };
}

function clientCertificateRepository(table: MemoryTable<ClientCertificate>): ClientCertificateRepository {
  const { insert, get, list, delete: remove } = repository<ClientCertificate, string>(table);
  return {
    insert, get, list, delete: remove,
    listByHosts: async (accountId, hosts) => table.ofAccount(accountId, (c) => hosts.includes(c.host)),
  };
}

/**
 * A VigilStorage that keeps everything in this process's memory: for tests, examples and a
 * single process that may lose its data. Every value is copied on the way in and out.
 */
export function memoryStorage(options: MemoryStorageOptions = {}): VigilStorage & { raw: RawReader } {
  const t = createTables();
  return {
    name: options.name ?? 'memory',
    capabilities: { multiProcess: false, nativePercentiles: false },
    accounts: accountRepository(t.accounts),
    apiKeys: apiKeyRepository(t.api_keys),
    checks: checkRepository(t.checks),
    checkGroups: {
      ...repository<CheckGroup, number>(t.check_groups),
      listAll: async (accountId) => t.check_groups.ofAccount(accountId),
      findAnywhere: async (id) => {
        const row = t.check_groups.peek(id);
        return row ? structuredClone(row) : null;
      },
    },
    alertChannels: {
      ...repository<AlertChannel, number>(t.alert_channels),
      listAll: async (accountId) => t.alert_channels.ofAccount(accountId),
    },
    alertSubscriptions: alertSubscriptionRepository(t.alert_subscriptions),
    dashboards: dashboardRepository(t.dashboards),
    maintenanceWindows: {
      ...repository<MaintenanceWindow, number>(t.maintenance_windows),
      listAll: async (accountId) => t.maintenance_windows.ofAccount(accountId),
      listInForce: async (accountId, at) => t.maintenance_windows.ofAccount(accountId, (w) => (maintenanceWindowEndMs(w) ?? Infinity) > at.getTime()),
    },
    incidents: incidentRepository(t.incidents, t.incident_updates),
    statusPages: statusPageRepository(t.status_pages),
    services: serviceRepository(t.services),
    statusPageIncidents: statusPageIncidentRepository(t.status_page_incidents, t.status_page_incident_updates),
    statusPageSubscribers: statusPageSubscriberRepository(t.status_page_subscribers),
    clientCertificates: clientCertificateRepository(t.client_certificates),
    snippets: repository<Snippet, number>(t.snippets),
    managedResources: managedResourceRepository(t.managed_resources),
    errorGroups: errorGroupRepository(t.error_groups),
    testSessionErrorGroups: testSessionErrorGroupRepository(t.test_session_error_groups),
    checkSessions: checkSessionRepository(t.check_sessions),
    checkStatuses: checkStatusRepository(t.check_statuses),
    checkResults: checkResultRepository(t.check_results),
    alertStates: alertStateRepository(t.alert_states, t.outbox),
    heartbeats: heartbeatRepository(t.heartbeat_pings),
    schedule: scheduleStore(t.schedule),
    outbox: outbox(t.outbox, t.delivery_attempts),
    async migrate() {},
    async close() {},
    raw: {
      async dump(table) {
        return t[table].dump();
      },
    },
  };
}
