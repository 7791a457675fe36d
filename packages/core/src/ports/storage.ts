/*
 * The storage contract: every repository a store implements (VigilStorage). The repositories of
 * what runs produce and of the schedule are written in storage-results.ts and storage-schedule.ts
 * and re-exported here with the shared record types, so a storage plugin imports the whole
 * contract from this one file; the conformance suite covers it repository by repository.
 */
import type { Account, ApiKey } from '../model/account.js';
import type { AlertChannel, AlertSubscription } from '../model/alert-channel.js';
import type { CheckGroup } from '../model/check-group.js';
import type { Check } from '../model/check.js';
import type { ClientCertificate } from '../model/client-certificate.js';
import type { Dashboard } from '../model/dashboard.js';
import type { ErrorGroup, TestSessionErrorGroup } from '../model/error-group.js';
import type { Incident, IncidentUpdateRecord } from '../model/incident.js';
import type { MaintenanceWindow } from '../model/maintenance-window.js';
import type { ManagedResource, ResourceKind } from '../model/managed-resource.js';
import type { OutboxPayload } from '../model/outbox-payload.js';
import type { Snippet } from '../model/snippet.js';
import type { CursorPage, Page } from '../model/primitives.js';
import type {
  Service,
  StatusPage,
  StatusPageIncident,
  StatusPageIncidentUpdate,
  StatusPageSubscriber,
} from '../model/status-page.js';
import type { AlertState } from '../rules/alerting.js';
import type { ListOptions, NewRecord, Repository, StoredRecord } from './repository.js';
import type { CheckResultRepository, CheckSessionRepository, CheckStatusRepository, HeartbeatRepository } from './storage-results.js';
import type { ScheduleStore } from './storage-schedule.js';
import { createToken } from './token.js';

export type { ListOptions, NewRecord, Repository, StoredRecord } from './repository.js';
export type {
  CheckResultRepository,
  CheckSessionRepository,
  CheckStatusDocument,
  CheckStatusRepository,
  HeartbeatPing,
  HeartbeatRepository,
  PruneOutcome,
  ResultListQuery,
} from './storage-results.js';
export type { ScheduledJob, ScheduleStore, ServedLocations } from './storage-schedule.js';
export type {
  AggregateFunction,
  AggregateMeasure,
  ResultAggregateQuery,
  ResultAggregateRow,
  ResultStatusFilter,
} from '../model/result-aggregate.js';
export type { JobKind, ScheduleEntry } from '../model/schedule-entry.js';

export interface AccountRepository {
  insert(account: Account): Promise<Account>;
  get(accountId: string): Promise<Account | null>;
  update(account: Account): Promise<Account>;
  /** Every account id, for work that spans accounts (scheduling, retention). */
  listIds(): Promise<string[]>;
}

export interface ApiKeyRepository {
  insert(key: ApiKey): Promise<ApiKey>;
  /** Keys with this prefix, across accounts (the caller compares hashes in constant time). */
  findByPrefix(prefix: string): Promise<ApiKey[]>;
  list(accountId: string): Promise<ApiKey[]>;
  /** Sets revokedAt (a second revoke keeps the first time); false when not in this account. */
  revoke(accountId: string, id: string, at: string): Promise<boolean>;
  touch(id: string, at: string): Promise<void>;
}

/** What lists of many checks need of each (check statuses). */
export interface CheckSummary {
  id: string;
  name: string;
  checkType: string;
  created_at: string;
}

export interface CheckRepository extends Repository<Check, string> {
  listByGroup(accountId: string, groupId: number): Promise<Check[]>;
  listByIds(accountId: string, ids: string[]): Promise<Check[]>;
  /** All checks of an account (sessions, statuses, reporting). */
  listAll(accountId: string): Promise<Check[]>;
  /** Id, name, type and creation time of every check of an account, in creation order, without reading whole documents. */
  listSummaries(accountId: string): Promise<CheckSummary[]>;
  /** Checks of every account in ascending id order, those after `afterId`, a page at a time. */
  scan(afterId: string | null, limit: number): Promise<Check[]>;
  /** The heartbeat check that owns a ping token, in whatever account. */
  findByPingToken(token: string): Promise<Check | null>;
  /** The check with this id in whatever account (public badges address a check by its id alone). */
  findAnywhere(id: string): Promise<Check | null>;
}

export interface CheckGroupRepository extends Repository<CheckGroup, number> {
  listAll(accountId: string): Promise<CheckGroup[]>;
  /** The group with this id in whatever account (public badges). */
  findAnywhere(id: number): Promise<CheckGroup | null>;
}

export interface AlertChannelRepository extends Repository<AlertChannel, number> {
  listAll(accountId: string): Promise<AlertChannel[]>;
}

/** Links of alert channels to checks and groups. */
export interface AlertSubscriptionRepository {
  insert(accountId: string, subscription: NewRecord<AlertSubscription>): Promise<AlertSubscription>;
  listByChannel(accountId: string, alertChannelId: number): Promise<AlertSubscription[]>;
  listByCheck(accountId: string, checkId: string): Promise<AlertSubscription[]>;
  listByGroup(accountId: string, groupId: number): Promise<AlertSubscription[]>;
  listAll(accountId: string): Promise<AlertSubscription[]>;
  /** Replaces every subscription of a channel. */
  replaceForChannel(
    accountId: string,
    alertChannelId: number,
    subscriptions: NewRecord<AlertSubscription>[],
  ): Promise<AlertSubscription[]>;
  /** Replaces the subscriptions of a check (or a group) to the given channels. */
  replaceForTarget(
    accountId: string,
    target: { checkId: string } | { groupId: number },
    subscriptions: NewRecord<AlertSubscription>[],
  ): Promise<AlertSubscription[]>;
  deleteByChannel(accountId: string, alertChannelId: number): Promise<number>;
  deleteByTarget(accountId: string, target: { checkId: string } | { groupId: number }): Promise<number>;
}

export interface DashboardRepository extends Repository<Dashboard, number> {
  /** customUrl is unique across all accounts. */
  findByCustomUrl(customUrl: string): Promise<Dashboard | null>;
  findByCustomDomain(customDomain: string): Promise<Dashboard | null>;
}

export interface MaintenanceWindowRepository extends Repository<MaintenanceWindow, number> {
  listAll(accountId: string): Promise<MaintenanceWindow[]>;
  /**
   * Optional: the account's windows that may be in force at `at` or later, in creation order:
   * every window but those whose repeats ended by then (`maintenanceWindowEndMs` at or before
   * `at`). Every run reads them; without it, a run reads every window the account ever had.
   */
  listInForce?(accountId: string, at: Date): Promise<MaintenanceWindow[]>;
}

/** Deleting an incident deletes its updates. */
export interface IncidentRepository extends Repository<Incident, string> {
  listByDashboard(accountId: string, dashboardId: number): Promise<Incident[]>;
  /**
   * Optional: the dashboard's incidents not stopped before `since` (those with no stoppedAt, or
   * stopped at or after it), in the order of `listByDashboard`: what a public dashboard shows.
   * Without it, a dashboard's view reads every incident the dashboard ever had.
   */
  listCurrentByDashboard?(accountId: string, dashboardId: number, since: Date): Promise<Incident[]>;
  /** NotFoundError when the incident is not in this account. */
  insertUpdate(accountId: string, update: NewRecord<IncidentUpdateRecord>): Promise<IncidentUpdateRecord>;
  /** Updates of an incident, oldest first. */
  listUpdates(accountId: string, incidentId: string): Promise<IncidentUpdateRecord[]>;
}

export interface StatusPageRepository extends Repository<StatusPage, string> {
  /** url is unique across all accounts. */
  findByUrl(url: string): Promise<StatusPage | null>;
  /** The status page with this id in whatever account (its public page). */
  findAnywhere(id: string): Promise<StatusPage | null>;
}

export interface ServiceRepository extends Repository<Service, string> {
  /** Services in creation order from the one after `afterId` (none when `afterId` is unknown). */
  listAfter(accountId: string, afterId: string | null, limit: number): Promise<Service[]>;
  listByIds(accountId: string, ids: string[]): Promise<Service[]>;
}

export interface StatusPageIncidentRepository extends Repository<StatusPageIncident, string> {
  /** Incidents newest first, from the one after `afterId` (none when `afterId` is unknown). */
  listAfter(accountId: string, afterId: string | null, limit: number): Promise<StatusPageIncident[]>;
  /**
   * Optional: the incidents a status page shows, newest first as `listAfter` gives them: those
   * open, and those closed (`incidentClosedMs`) at or after `since`. Without it, a status page
   * reads every incident of the account.
   */
  listCurrent?(accountId: string, since: Date): Promise<StatusPageIncident[]>;
  /** NotFoundError when the incident is not in this account. Deleting an incident deletes its updates. */
  insertUpdate(accountId: string, update: NewRecord<StatusPageIncidentUpdate>): Promise<StatusPageIncidentUpdate>;
  listUpdates(accountId: string, incidentId: string): Promise<StatusPageIncidentUpdate[]>;
}

/** The people who asked a status page for its incident updates by email. */
export interface StatusPageSubscriberRepository extends Repository<StatusPageSubscriber, string> {
  /**
   * A page's subscribers ordered by id, from the first id after `afterId` (from the start when
   * null): a cursor that holds when the row it names was deleted meanwhile.
   */
  listByPage(accountId: string, statusPageId: string, afterId: string | null, limit: number): Promise<StatusPageSubscriber[]>;
  /** How many subscribers a page has, confirmed or not. */
  countByPage(accountId: string, statusPageId: string): Promise<number>;
  findByEmail(accountId: string, statusPageId: string, email: string): Promise<StatusPageSubscriber | null>;
  /** The subscriber whose token hashes to `tokenHash`, in whatever account (a link in an email). */
  findByTokenHash(tokenHash: string): Promise<StatusPageSubscriber | null>;
  /**
   * How many unconfirmed subscriptions of `email`, on any page of any account, were sent a
   * confirmation at or after `sentSince` (a cap on the emails one address can be sent).
   */
  countPendingByEmail(email: string, sentSince: string): Promise<number>;
  /** How many of an account's unconfirmed subscriptions were sent a confirmation at or after `sentSince`. */
  countPendingByAccount(accountId: string, sentSince: string): Promise<number>;
  /** Deletes a page's unconfirmed subscribers last sent a confirmation before `sentBefore`; answers how many. */
  deletePending(accountId: string, statusPageId: string, sentBefore: string): Promise<number>;
  /** Removes every subscriber of a page; answers how many. */
  deleteByPage(accountId: string, statusPageId: string): Promise<number>;
}

export type SnippetRepository = Repository<Snippet, number>;

/**
 * Which resources code made (checks as code): one row per (account, project, kind, logical id).
 * Resources without a row were made by hand and are never changed or deleted by `apply`.
 */
export interface ManagedResourceRepository {
  /** The rows of one project of an account, in the order they were first stored. */
  list(accountId: string, project: string): Promise<ManagedResource[]>;
  /** Stores the row of its (project, kind, logicalId), replacing the one there was (which keeps its place in the order). */
  put(accountId: string, row: StoredRecord<ManagedResource>): Promise<ManagedResource>;
  delete(accountId: string, project: string, kind: ResourceKind, logicalId: string): Promise<boolean>;
}

export interface ClientCertificateRepository {
  insert(accountId: string, record: NewRecord<ClientCertificate>): Promise<ClientCertificate>;
  get(accountId: string, id: string): Promise<ClientCertificate | null>;
  list(accountId: string, options?: ListOptions): Promise<Page<ClientCertificate>>;
  delete(accountId: string, id: string): Promise<boolean>;
  /**
   * Optional: the account's certificates whose host is one of `hosts` (as stored, lower case), in
   * creation order. An HTTPS run looks its target's host up; without it, the run reads every
   * certificate of the account.
   */
  listByHosts?(accountId: string, hosts: readonly string[]): Promise<ClientCertificate[]>;
}

export interface ErrorGroupRepository extends Repository<ErrorGroup, string> {
  findByHash(accountId: string, checkId: string, errorHash: string): Promise<ErrorGroup | null>;
  listByCheck(accountId: string, checkId: string, options: ListOptions): Promise<Page<ErrorGroup>>;
}

export interface TestSessionErrorGroupRepository extends Repository<TestSessionErrorGroup, string> {
  findByHash(accountId: string, projectId: string | null, errorHash: string): Promise<TestSessionErrorGroup | null>;
  listByProject(accountId: string, projectId: string): Promise<TestSessionErrorGroup[]>;
}

export interface AlertStateRepository {
  get(accountId: string, checkId: string): Promise<AlertState | null>;
  /** Stores the state in one step: writers racing to store the first one never conflict. */
  put(accountId: string, checkId: string, state: AlertState): Promise<void>;
  /**
   * One atomic step of a check's alert state: while the stored state is still `expected` (null: none
   * yet), stores `next` and queues `messages` in the outbox (a message whose id is queued already is
   * skipped, not an error), and answers true; otherwise changes nothing and answers false.
   */
  transition(accountId: string, checkId: string, expected: AlertState | null, next: AlertState, messages: NewOutboxMessage[]): Promise<boolean>;
  /**
   * `transition`, and in the same write leases to `lease.owner` those of `messages` that the
   * outbox's `claim` would hand out at `lease.now` (due, unleased, each the oldest undelivered of its
   * check and channel), at most `lease.limit`: the process that queued them sends them without
   * claiming them. Answers the leased messages, oldest first (none is an empty list), or null where
   * the stored state was not `expected` (nothing written). A store without it is used through
   * `transition`, and its messages are claimed.
   */
  transitionAndLease?(
    accountId: string, checkId: string, expected: AlertState | null, next: AlertState, messages: NewOutboxMessage[], lease: OutboxLease,
  ): Promise<OutboxMessage[] | null>;
  delete(accountId: string, checkId: string): Promise<void>;
}

/** The terms of a lease taken with a write (see AlertStateRepository.transitionAndLease). */
export interface OutboxLease {
  owner: string;
  now: Date;
  leaseMs: number;
  /** The most messages to lease. */
  limit: number;
}

export interface OutboxMessage {
  id: string;
  accountId: string;
  checkId: string | null;
  alertChannelId: number;
  alertType: string;
  /** An alert or a subscriber's email (model/outbox-payload.ts); a store keeps it as given. */
  payload: OutboxPayload;
  created_at: string;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  deliveredAt: string | null;
  leaseOwner: string | null;
  leaseUntil: string | null;
}

/** What the outbox is given for a new message: the delivery fields are the store's. */
export type NewOutboxMessage = Omit<OutboxMessage, 'attempts' | 'deliveredAt' | 'leaseOwner' | 'leaseUntil' | 'lastError'>;

export interface DeliveryAttempt {
  outboxId: string;
  accountId: string;
  alertChannelId: number;
  at: string;
  ok: boolean;
  detail: string | null;
}

/** Alerts waiting for delivery. A row goes only after its transport confirmed delivery. */
export interface Outbox {
  enqueue(messages: NewOutboxMessage[]): Promise<void>;
  /**
   * Due, undelivered messages, leased to `owner`; per check and channel, only the oldest undelivered
   * one (a channel that is down holds back only its own alerts of the check).
   */
  claim(now: Date, limit: number, leaseMs: number, owner: string): Promise<OutboxMessage[]>;
  markDelivered(id: string, owner: string, at: Date): Promise<boolean>;
  markFailed(id: string, owner: string, error: string, nextAttemptAt: Date): Promise<boolean>;
  recordAttempt(attempt: DeliveryAttempt): Promise<void>;
  /** The newest attempts first. */
  listAttempts(accountId: string, alertChannelId: number, limit: number): Promise<DeliveryAttempt[]>;
  /**
   * A check's messages (its alerts to every channel), newest first: delivered, dropped or still
   * waiting, for as long as retention keeps them.
   */
  listByCheck(accountId: string, checkId: string, limit: number): Promise<OutboxMessage[]>;
  /** The attempts logged for these messages of the account, oldest first. */
  listAttemptsOf(accountId: string, outboxIds: readonly string[]): Promise<DeliveryAttempt[]>;
  /** Undelivered messages, oldest first. */
  pending(accountId?: string): Promise<OutboxMessage[]>;
  /**
   * How many messages are undelivered, counted in the store without reading them (the outbox-depth
   * gauge asks it on every scrape). A store without it is counted through `pending()`.
   */
  depth?(): Promise<number>;
  /**
   * Deletes up to `limit` messages delivered (or given up, or dropped) before `before`, and up to
   * `limit` delivery attempts logged before it; answers how many of each went. The retention job
   * calls it; a store without it keeps them.
   */
  pruneDelivered?(before: Date, limit: number): Promise<{ messages: number; attempts: number }>;
}

/** Optional abilities a store declares instead of having them sniffed. */
export interface StorageCapabilities {
  /** Several processes may share the store (claims are exclusive across processes). */
  multiProcess: boolean;
  /** Percentiles are computed inside the database. */
  nativePercentiles: boolean;
}

/** Every repository Vigil needs. A storage plugin implements all of them. */
export interface VigilStorage {
  readonly name: string;
  readonly capabilities: StorageCapabilities;
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  checks: CheckRepository;
  checkGroups: CheckGroupRepository;
  alertChannels: AlertChannelRepository;
  alertSubscriptions: AlertSubscriptionRepository;
  dashboards: DashboardRepository;
  maintenanceWindows: MaintenanceWindowRepository;
  incidents: IncidentRepository;
  statusPages: StatusPageRepository;
  services: ServiceRepository;
  statusPageIncidents: StatusPageIncidentRepository;
  statusPageSubscribers: StatusPageSubscriberRepository;
  clientCertificates: ClientCertificateRepository;
  snippets: SnippetRepository;
  managedResources: ManagedResourceRepository;
  errorGroups: ErrorGroupRepository;
  testSessionErrorGroups: TestSessionErrorGroupRepository;
  checkSessions: CheckSessionRepository;
  checkStatuses: CheckStatusRepository;
  checkResults: CheckResultRepository;
  alertStates: AlertStateRepository;
  heartbeats: HeartbeatRepository;
  schedule: ScheduleStore;
  outbox: Outbox;
  /** Creates tables and indexes; safe to call again. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export const STORAGE = createToken<VigilStorage>('vigil.storage');

export type { CursorPage };
