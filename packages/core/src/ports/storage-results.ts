// The repositories of what runs produce: check sessions, check statuses, results and heartbeat
// pings. Part of the storage contract that ports/storage.ts gathers.
import type { CheckResult } from '../model/check-result.js';
import type { CheckSession } from '../model/check-session.js';
import type { CheckStatus } from '../model/check-status.js';
import type { Page } from '../model/primitives.js';
import type { ResultAggregateQuery, ResultAggregateRow } from '../model/result-aggregate.js';
import type { ListOptions, NewRecord, StoredRecord } from './repository.js';

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
  /**
   * Optional: every check of the account, in creation order, with its stored status as JSON text
   * (written by JSON.stringify, holding neither row id nor account). The list of every check's
   * status is then answered without parsing each document and writing it again. An entry is
   * either JSON text written into the list as it is (as a string or UTF-8 bytes: the document of
   * one check, stored under the check's current name, or those of several checks in a row,
   * separated by commas), or a check with its document (null: no runs yet).
   */
  listWithChecks?(accountId: string): Promise<(string | Uint8Array | CheckStatusDocument)[]>;
  delete(accountId: string, checkId: string): Promise<boolean>;
}

/** A check and its stored status document (JSON text), as `listWithChecks` answers one. */
export interface CheckStatusDocument {
  checkId: string;
  name: string;
  created_at: string;
  json: string | null;
}

export interface ResultListQuery extends ListOptions {
  /** Results with from <= startedAt < to. */
  from?: Date;
  to?: Date;
  resultType?: 'FINAL' | 'ATTEMPT';
  checkSessionId?: string;
  /**
   * false: the caller reads the page's items alone (the newest result for an alert, a page of
   * recent runs), so the store need not count every result of the check; `total` is then -1, or
   * the count where the store has it anyway.
   */
  countTotal?: boolean;
}

export interface CheckResultRepository {
  /** Stores a batch in one transaction. */
  insertMany(accountId: string, results: NewRecord<CheckResult>[]): Promise<void>;
  /**
   * One result by id. `checkId`, when the caller knows it, lets a store that keeps scheduled runs
   * by check and due time (and recomputes their ids) find the result without a scan.
   */
  get(accountId: string, id: string, checkId?: string): Promise<CheckResult | null>;
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
  /**
   * A store that keeps hourly roll-ups and reads them in `aggregate` rolls an account's closed
   * hours up while their raw results are kept: the FINAL results of [after, before), both rounded
   * down to the hour (`after` null: from where the store's own roll-ups end, a little behind for
   * late results). Each hour is recomputed from its raw results and replaces its roll-up, so
   * rolling an hour up twice counts nothing twice. About `limit` results a call, whole hours;
   * `next` is where the next call goes on, `done` false while more remain before `before`.
   */
  rollUp?(accountId: string, after: Date | null, before: Date, limit: number): Promise<RollUpOutcome>;
  /**
   * Retention of every account at once, for a store that keeps results in whole time ranges
   * (partitions): the results that started before `before` (every account's retention window
   * ends after it) are rolled up where the store keeps roll-ups, then dropped a whole range at a
   * time. A store may keep a range that reaches past `before`; the per-account `prune` that
   * follows removes what remains. Answers how many roll-ups were written and results dropped.
   */
  dropBefore?(before: Date): Promise<{ rolledUp: number; deleted: number }>;
  /**
   * Upkeep the retention job gives the store at the start of each pass, whatever the accounts'
   * retention (for example: making the coming days' partitions, compacting the closed ones).
   */
  maintain?(now: Date): Promise<void>;
  /** Deletes an account's hourly roll-ups of hours before `before`; answers how many went. */
  pruneRollups?(accountId: string, before: Date): Promise<number>;
}

export interface RollUpOutcome {
  /** Hourly roll-up rows written. */
  rolledUp: number;
  done: boolean;
  next: Date;
}

export interface PruneOutcome {
  /** Raw results deleted. */
  deleted: number;
  /** Hourly roll-up rows written or merged (0 for a store that keeps none). */
  rolledUp: number;
  /** Nothing of the account remains before the (rounded) `before`. */
  done: boolean;
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
  /**
   * Removes up to `limit` of the account's pings received before `before`, but never a check's
   * newest (its heartbeat's last sign of life, however old); answers how many went. Retention
   * calls it with the account's results' cut-off; a store without it keeps every ping.
   */
  prunePings?(accountId: string, before: Date, limit: number): Promise<number>;
}
