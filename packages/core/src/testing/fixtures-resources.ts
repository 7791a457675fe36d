import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { ClientCertificate } from '../model/client-certificate.js';
import { DashboardCreateSchema, type Dashboard } from '../model/dashboard.js';
import type { Incident, IncidentUpdateRecord } from '../model/incident.js';
import { MaintenanceWindowCreateSchema, type MaintenanceWindow } from '../model/maintenance-window.js';
import type { Snippet } from '../model/snippet.js';
import {
  StatusPageCreateSchema,
  type Service,
  type StatusPage,
  type StatusPageIncident,
  type StatusPageIncidentUpdate,
  type StatusPageSubscriber,
} from '../model/status-page.js';
import type { NewRecord } from '../ports/storage.js';
import { FIXTURE_TIME, nextSerial, stamps } from './fixtures-base.js';

/* Records of the resources around checks, as a store holds them: dashboards, maintenance windows,
   incidents, status pages with their services, incidents and subscribers, snippets and client
   certificates. */

export function dashboardFixture(overrides: Partial<NewRecord<Dashboard>> = {}): NewRecord<Dashboard> {
  const n = nextSerial();
  const body = v.parse(DashboardCreateSchema, { header: `Dashboard ${n}`, customUrl: `board-${n}` });
  return { ...body, customUrl: `board-${n}`, dashboardId: randomUUID(), keys: [], ...stamps(), ...overrides };
}

export function maintenanceWindowFixture(overrides: Partial<NewRecord<MaintenanceWindow>> = {}): NewRecord<MaintenanceWindow> {
  const body = v.parse(MaintenanceWindowCreateSchema, {
    name: `Window ${nextSerial()}`,
    startsAt: '2026-05-02T01:00:00.000Z',
    endsAt: '2026-05-02T03:00:00.000Z',
    repeatUnit: 'WEEK',
    repeatInterval: 1,
    tags: ['db'],
  });
  return { ...body, ...stamps(), ...overrides };
}

export function incidentFixture(dashboardId: number, overrides: Partial<NewRecord<Incident>> = {}): NewRecord<Incident> {
  return {
    id: randomUUID(),
    name: `Incident ${nextSerial()}`,
    impact: 'MINOR',
    dashboardId,
    startedAt: FIXTURE_TIME,
    stoppedAt: null,
    ...stamps(),
    ...overrides,
  };
}

export function incidentUpdateFixture(
  incidentId: string,
  overrides: Partial<NewRecord<IncidentUpdateRecord>> = {},
): NewRecord<IncidentUpdateRecord> {
  return {
    id: randomUUID(),
    incidentId,
    status: 'INVESTIGATING',
    description: `Looking into it (${nextSerial()})`,
    ...stamps(),
    ...overrides,
  };
}

export function statusPageFixture(overrides: Partial<NewRecord<StatusPage>> = {}): NewRecord<StatusPage> {
  const n = nextSerial();
  const { cards: _cards, ...body } = v.parse(StatusPageCreateSchema, { name: `Status ${n}`, url: `status-${n}` });
  return { ...body, id: randomUUID(), cards: [], ...stamps(), ...overrides };
}

export function serviceFixture(overrides: Partial<NewRecord<Service>> = {}): NewRecord<Service> {
  return { id: randomUUID(), name: `Service ${nextSerial()}`, ...stamps(), ...overrides };
}

export function statusPageIncidentFixture(overrides: Partial<NewRecord<StatusPageIncident>> = {}): NewRecord<StatusPageIncident> {
  return { id: randomUUID(), name: `Outage ${nextSerial()}`, serviceIds: [randomUUID()], ...stamps(), ...overrides };
}

export function statusPageSubscriberFixture(overrides: Partial<NewRecord<StatusPageSubscriber>> = {}): NewRecord<StatusPageSubscriber> {
  const n = nextSerial();
  return {
    id: randomUUID(),
    statusPageId: randomUUID(),
    email: `subscriber-${n}@example.com`,
    confirmed: false,
    tokenHash: randomUUID().replace(/-/g, '') + String(n).padStart(32, '0'),
    tokenSealed: `vgl1:sealed-${n}`,
    confirmationSentAt: null,
    confirmationsSent: 0,
    confirmedAt: null,
    ...stamps(),
    ...overrides,
  };
}

export function statusPageIncidentUpdateFixture(
  incidentId: string,
  overrides: Partial<NewRecord<StatusPageIncidentUpdate>> = {},
): NewRecord<StatusPageIncidentUpdate> {
  return {
    id: randomUUID(),
    incidentId,
    description: `Update ${nextSerial()}`,
    notifySubscribers: false,
    publicIncidentUpdateDate: null,
    ...stamps(),
    ...overrides,
  };
}

const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIBfixture\n-----END CERTIFICATE-----\n';

export function snippetFixture(overrides: Partial<NewRecord<Snippet>> = {}): NewRecord<Snippet> {
  return { name: `Snippet ${nextSerial()}`, script: 'request.headers["X-Snippet"] = "1";', ...stamps(), ...overrides };
}

export function clientCertificateFixture(overrides: Partial<NewRecord<ClientCertificate>> = {}): NewRecord<ClientCertificate> {
  return {
    id: randomUUID(),
    host: `api${nextSerial()}.example.com`,
    cert: PEM_CERT,
    ca: null,
    encryptedKey: 'v1:ciphertext-of-the-key',
    encryptedPassphrase: 'v1:ciphertext-of-the-passphrase',
    created_at: FIXTURE_TIME,
    ...overrides,
  };
}
