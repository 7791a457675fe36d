/*
 * Every repository a store implements, in one file: a storage plugin reads its whole contract in
 * one place, and the conformance suite covers it repository by repository.
 */
import type { Account, ApiKey } from '../model/account.js';
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
import { createToken } from './token.js';

/** What a store is given for a new row: no account id (the call carries it), no store-assigned id. */
export type NewRecord<T> = T extends { id: number } ? Omit<T, 'id' | 'accountId'> : Omit<T, 'accountId'>;
/** What a store is given to replace a row: the whole row but its account (per member of a union). */
export type StoredRecord<T> = T extends unknown ? Omit<T, 'accountId'> : never;

export interface ListOptions {
  limit: number;
  offset: number;
}

/**
 * The shape every resource repository shares. Every call is scoped to an account: a row of
 * another account is never read, changed or deleted, and reads as absent (null / false).
 */
export interface Repository<T extends { id: TId; accountId: string }, TId extends string | number> {
  /** Stores a new row. Numeric ids are assigned by the store; string ids come with the row. */
  insert(accountId: string, record: NewRecord<T>): Promise<T>;
  get(accountId: string, id: TId): Promise<T | null>;
  /** Rows in creation order (oldest first). */
  list(accountId: string, options?: ListOptions): Promise<Page<T>>;
  /** Replaces the row; null when it does not exist in this account. */
  update(accountId: string, id: TId, record: StoredRecord<T>): Promise<T | null>;
  delete(accountId: string, id: TId): Promise<boolean>;
}

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
}

/** Deleting an incident deletes its updates. */
export interface IncidentRepository extends Repository<Incident, string> {
  listByDashboard(accountId: string, dashboardId: number): Promise<Incident[]>;
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
}

export interface ErrorGroupRepository extends Repository<ErrorGroup, string> {
  findByHash(accountId: string, checkId: string, errorHash: string): Promise<ErrorGroup | null>;
  listByCheck(accountId: string, checkId: string, options: ListOptions): Promise<Page<ErrorGroup>>;
}

export interface TestSessionErrorGroupRepository extends Repository<TestSessionErrorGroup, string> {
  findByHash(accountId: string, projectId: string | null, errorHash: string): Promise<TestSessionErrorGroup | null>;
  listByProject(accountId: string, projectId: string): Promise<TestSessionErrorGroup[]>;
}

export interface CheckSessionRepository {
  insert(accountId: string, session: NewRecord<CheckSession>): Promise<CheckSession>;
  get(accountId: string, checkSessionId: string): Promise<CheckSession | null>;
  update(accountId: string, session: StoredRecord<CheckSession>): Promise<CheckSession | null>;
  /** Writes `next` only while the stored session is still `expected`. Answers whether it wrote. */
  replace(accountId: string, expected: CheckSession, next: StoredRecord<CheckSession>): Promise<boolean>;
}

export interface CheckStatusRepository {
  /** Stores the status of its check in one step: writers racing to store the first one never conflict. */
  upsert(accountId: string, status: StoredRecord<CheckStatus>): Promise<CheckStatus>;
  /** Writes `next` only while the stored status is still `expected` (null: there is none yet). Answers whether it wrote. */
  replace(accountId: string, expected: CheckStatus | null, next: StoredRecord<CheckStatus>): Promise<boolean>;
  get(accountId: string, checkId: string): Promise<CheckStatus | null>;
  list(accountId: string): Promise<CheckStatus[]>;
  delete(accountId: string, checkId: string): Promise<boolean>;
}

export type ResultStatusFilter = 'success' | 'failure';
export type AggregateFunction =
  | 'avg' | 'max' | 'median' | 'min' | 'p50' | 'p90' | 'p95' | 'p99' | 'stddev' | 'sum' | 'count';

/** One number to compute over results: a function of a phase (`responseTime` is the result's own). */
export interface AggregateMeasure {
  /** Key of the value in the answer, e.g. `total_p95`. */
  name: string;
  /** `responseTime`, `attempts`, or a key of `phases`. */
  field: string;
  fn: AggregateFunction;
}

export interface ResultAggregateQuery {
  checkIds: string[];
  /** Results with from <= startedAt < to. */
  from: Date;
  to: Date;
  /** Bucket width; buckets start at from + k * bucketMs. Null or absent: one bucket for the window. */
  bucketMs?: number | null;
  groupBy?: 'runLocation' | 'statusCode' | null;
  filterByStatus?: ResultStatusFilter[];
  /** A measure over no values is null, except `count` (0); stddev of one value is null. */
  measures: AggregateMeasure[];
  /** Only FINAL results count unless asked otherwise. */
  includeAttempts?: boolean;
}

/** One row per check, bucket and group that holds results (empty buckets give no row), ordered by checkId, then bucketStart. */
export interface ResultAggregateRow {
  checkId: string;
  /** Start of the bucket (ISO), or the window's start without buckets. */
  bucketStart: string;
  /** The runLocation, or the statusCode as text (null for none), under groupBy; else null. */
  group: string | null;
  count: number;
  /** Results with hasFailures or hasErrors. */
  failures: number;
  values: Record<string, number | null>;
}

export interface ResultListQuery extends ListOptions {
  /** Results with from <= startedAt < to. */
  from?: Date;
  to?: Date;
  resultType?: 'FINAL' | 'ATTEMPT';
  checkSessionId?: string;
}

export interface CheckResultRepository {
  /** Stores a batch in one transaction. */
  insertMany(accountId: string, results: NewRecord<CheckResult>[]): Promise<void>;
  get(accountId: string, id: string): Promise<CheckResult | null>;
  /** Newest first (by startedAt). */
  listByCheck(accountId: string, checkId: string, query: ResultListQuery): Promise<Page<CheckResult>>;
  aggregate(accountId: string, query: ResultAggregateQuery): Promise<ResultAggregateRow[]>;
  /** Deletes raw results that started before `before`; answers how many went. */
  deleteOlderThan(before: Date): Promise<number>;
  /**
   * Retention of one account: its raw results (FINAL and ATTEMPT) that started before `before`,
   * rounded down to a whole hour (UTC), go; a store that keeps hourly roll-ups first rolls the
   * FINAL ones into them. A call takes about `limit` results at most, whole hours at a time (an
   * hour that holds more goes whole), oldest first; `done` is false while more remain before `before`.
   */
  prune(accountId: string, before: Date, limit: number): Promise<PruneOutcome>;
}

export interface PruneOutcome {
  /** Raw results deleted. */
  deleted: number;
  /** Hourly roll-up rows written or merged (0 for a store that keeps none). */
  rolledUp: number;
  /** Nothing of the account remains before the (rounded) `before`. */
  done: boolean;
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
  delete(accountId: string, checkId: string): Promise<void>;
}

/** A ping of a heartbeat check. */
export interface HeartbeatPing {
  checkId: string;
  at: string;
  source: string | null;
}

export interface HeartbeatRepository {
  recordPing(accountId: string, ping: HeartbeatPing): Promise<void>;
  lastPing(accountId: string, checkId: string): Promise<HeartbeatPing | null>;
  /** Pings with from <= at < to, oldest first. */
  listPings(accountId: string, checkId: string, from: Date, to: Date): Promise<HeartbeatPing[]>;
}

/**
 * What a schedule entry makes the engine do: `run`, a check's slot in one location; `session`, one
 * sequence of a check session (an on-demand run); the engine's own jobs `alert-tick` (a failing
 * check looked at between runs), `certificate` (the daily certificate look) and `retention`.
 * A process's `serves` filters `run` and `session` entries by their location; every process takes
 * its share of the engine's own jobs whatever it serves (a process may still take only some kinds:
 * the engine's `kinds` option).
 */
export type JobKind = 'run' | 'session' | 'alert-tick' | 'certificate' | 'retention';

/** Every kind of schedule entry. */
export const JOB_KINDS: readonly JobKind[] = ['run', 'session', 'alert-tick', 'certificate', 'retention'];

/** The kinds that run a check in a location, and so are filtered by the locations a process serves. */
export const LOCATED_JOB_KINDS: readonly JobKind[] = ['run', 'session'];

export interface ScheduleEntry {
  kind: JobKind;
  /** The check's account; empty for an engine job of no account (retention). */
  accountId: string;
  /** The check; empty for an engine job of no check (retention). */
  checkId: string;
  /** Where a `run` or `session` entry runs; empty for the engine's own jobs. */
  location: string;
  /** The sequence a `session` entry runs; absent for every other kind. */
  session?: { checkSessionId: string; sequenceId: string };
  dueAt: string;
}

/** A claimed schedule entry. */
export interface ScheduledJob extends ScheduleEntry {
  /** Who holds the lease and until when. */
  leaseOwner: string;
  leaseUntil: string;
  /**
   * True when the entry was claimed after another holder's lease ran out before it completed or
   * released it (that process died or hung); counted as a lease expiry.
   */
  reclaimed?: boolean;
}

export interface ServedLocations {
  /** Data-center locations this process runs; 'all' or absent: every one. */
  locations?: string[] | 'all';
  /** Private locations this process runs; 'all' or absent: every one. */
  privateLocations?: string[] | 'all';
}

/**
 * The schedule of due work, shared by every process on one database. claimDue leases each due
 * entry to exactly one caller; an entry whose lease expired may be claimed again.
 */
export interface ScheduleStore {
  /** Sets (or moves) an entry: its identity is (kind, checkId, location, session). */
  upsert(entry: ScheduleEntry): Promise<void>;
  /** Adds the entries that do not exist yet; existing ones (and their leases) stay as they are. Answers how many were added. */
  ensure(entries: ScheduleEntry[]): Promise<number>;
  /**
   * Removes every entry of a check (deleted or deactivated) except its `session` entries: a
   * session's sequence always runs to its end (a run of a deleted check ends errored).
   */
  remove(accountId: string, checkId: string): Promise<void>;
  /**
   * Leases to `owner`, until now + leaseMs, up to `limit` entries with dueAt <= now whose lease is
   * absent or ended (leaseUntil <= now), earliest dueAt first: `run` and `session` entries in
   * locations `serves` covers (a location not in LOCATIONS is a private location), and entries of
   * every other kind; only entries of `kinds` when it is given.
   */
  claimDue(now: Date, serves: ServedLocations, limit: number, leaseMs: number, owner: string, kinds?: readonly JobKind[]): Promise<ScheduledJob[]>;
  /**
   * Moves a claimed entry on to its next time (null removes it) and drops the lease, only for the
   * lease holder. An entry moved since it was claimed (upsert) keeps the time it was moved to and
   * only loses its lease.
   */
  complete(job: ScheduledJob, nextDueAt: Date | null): Promise<boolean>;
  /** Drops every lease an owner holds, leaving the entries due. */
  release(owner: string): Promise<number>;
  /** Every entry of a check, sessions' included, by kind then location. */
  list(accountId: string, checkId: string): Promise<ScheduleEntry[]>;
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
