// The schedule of due work as a store keeps it. Part of the storage contract that
// ports/storage.ts gathers.
import type { JobKind, ScheduleEntry } from '../model/schedule-entry.js';

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
