import { ConflictError } from '../errors.js';
import { LOCATIONS } from '../model/primitives.js';
import { LOCATED_JOB_KINDS } from '../model/schedule-entry.js';
import {
  type DeliveryAttempt,
  type Outbox,
  type OutboxLease,
  type OutboxMessage,
  type ScheduledJob,
  type ScheduleEntry,
  type ScheduleStore,
  type ServedLocations,
} from '../ports/storage.js';
import { MinHeap } from '../engine/min-heap.js';
import { copy, type MemoryTable } from './memory-table.js';

/** A schedule row: an entry and its lease, if any. */
export interface ScheduleRow extends ScheduleEntry {
  leaseOwner: string | null;
  leaseUntil: string | null;
}

const time = (iso: string) => Date.parse(iso);
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const DATA_CENTERS: ReadonlySet<string> = new Set(LOCATIONS);

/** True when a process serving `serves` runs checks in `location`. */
export function servesLocation(serves: ServedLocations, location: string): boolean {
  const names = DATA_CENTERS.has(location) ? serves.locations : serves.privateLocations;
  return names === undefined || names === 'all' || names.includes(location);
}

const leaseFree = (row: { leaseUntil: string | null }, now: number) =>
  row.leaseUntil === null || time(row.leaseUntil) <= now;

/** An entry's identity: its kind, check, location and (for a session's run) sequence, joined by a character no id holds. */
const scheduleKey = (e: ScheduleEntry) => `${e.kind}\u0000${e.checkId}\u0000${e.location}\u0000${e.session?.sequenceId ?? ''}`;

/** The entry of a row, as the port answers it (no lease fields, no absent session). */
const entryOf = (row: ScheduleEntry): ScheduleEntry => ({
  kind: row.kind,
  accountId: row.accountId,
  checkId: row.checkId,
  location: row.location,
  ...(row.session ? { session: { ...row.session } } : {}),
  dueAt: row.dueAt,
});

/**
 * The row the store keeps for an entry, written out member by member: a literal of fixed members
 * gives every row one shared shape with its members inside the object (a spread built a shape of
 * its own for each of 100,000 rows, about 400 bytes apiece).
 */
const rowOf = (e: ScheduleEntry, leaseOwner: string | null, leaseUntil: string | null): ScheduleRow =>
  e.session
    ? { kind: e.kind, accountId: e.accountId, checkId: e.checkId, location: e.location, session: { ...e.session }, dueAt: e.dueAt, leaseOwner, leaseUntil }
    : { kind: e.kind, accountId: e.accountId, checkId: e.checkId, location: e.location, dueAt: e.dueAt, leaseOwner, leaseUntil };

/** What a process serving `serves` claims (see ScheduleStore.claimDue). */
const served = (serves: ServedLocations, row: ScheduleEntry) => !LOCATED_JOB_KINDS.includes(row.kind) || servesLocation(serves, row.location);

interface Due {
  at: number;
  key: string;
  dueAt: string;
}

/**
 * The schedule in memory. Beside the rows it keeps an index of due times (a heap, checked lazily
 * against the rows) and the set of leased rows, so a claim looks at the due entries only, not at
 * every entry: a hundred thousand checks cost a claim no more than a hundred.
 */
export function scheduleStore(table: MemoryTable<ScheduleRow>): ScheduleStore {
  const due = new MinHeap<Due>((a, b) => a.at - b.at);
  const leased = new Set<string>();
  const index = (key: string, row: ScheduleRow) => due.push({ at: time(row.dueAt), key, dueAt: row.dueAt });
  return {
    async upsert(entry) {
      const key = scheduleKey(entry);
      const current = table.peek(key);
      // A moved entry keeps its lease, so that a run in progress is not claimed a second time.
      const row = rowOf(entry, current?.leaseOwner ?? null, current?.leaseUntil ?? null);
      table.keep(key, row);
      index(key, row);
    },
    async ensure(entries) {
      let added = 0;
      for (const entry of entries) {
        const key = scheduleKey(entry);
        if (table.peek(key)) continue;
        const row = rowOf(entry, null, null);
        table.keep(key, row);
        index(key, row);
        added++;
      }
      return added;
    },
    async remove(accountId, checkId) {
      // Index entries of removed rows are dropped when a claim meets them.
      table.removeWhere((row) => row.accountId === accountId && row.checkId === checkId && row.kind !== 'session');
    },
    async claimDue(now, serves, limit, leaseMs, owner, kinds) {
      const at = now.getTime();
      const leaseUntil = new Date(at + leaseMs).toISOString();
      // Leases that ended make their entries claimable again.
      for (const key of leased) {
        const row = table.peek(key);
        if (!row) leased.delete(key);
        else if (leaseFree(row, at)) {
          leased.delete(key);
          index(key, row);
        }
      }
      const jobs: ScheduledJob[] = [];
      const elsewhere: Due[] = [];
      const seen = new Set<string>();
      while (jobs.length < Math.max(0, limit)) {
        const top = due.peek();
        if (!top || top.at > at) break;
        due.pop();
        const row = table.peek(top.key);
        // Stale: removed, moved since, indexed twice, or held by a live lease (it comes back on complete or expiry).
        if (!row || row.dueAt !== top.dueAt || seen.has(top.key)) continue;
        seen.add(top.key);
        if (!leaseFree(row, at)) {
          leased.add(top.key);
          continue;
        }
        if (!served(serves, row) || (kinds && !kinds.includes(row.kind))) {
          elsewhere.push(top);
          continue;
        }
        // An owner still on the row means its lease ran out: complete and release clear it.
        const reclaimed = row.leaseOwner !== null;
        row.leaseOwner = owner;
        row.leaseUntil = leaseUntil;
        leased.add(top.key);
        // Written out member by member: a spread of entryOf's answer made two objects per claim.
        jobs.push(row.session
          ? { kind: row.kind, accountId: row.accountId, checkId: row.checkId, location: row.location, session: { ...row.session }, dueAt: row.dueAt, leaseOwner: owner, leaseUntil, reclaimed }
          : { kind: row.kind, accountId: row.accountId, checkId: row.checkId, location: row.location, dueAt: row.dueAt, leaseOwner: owner, leaseUntil, reclaimed });
      }
      for (const d of elsewhere) due.push(d);
      return jobs;
    },
    async complete(job, nextDueAt) {
      const key = scheduleKey(job);
      const row = table.peek(key);
      if (!row || row.leaseOwner !== job.leaseOwner) return false;
      leased.delete(key);
      // Moved while it ran (a failing check's next alert tick, a changed check): the move stands.
      if (row.dueAt !== job.dueAt) {
        row.leaseOwner = null;
        row.leaseUntil = null;
        index(key, row);
        return true;
      }
      if (nextDueAt === null) {
        table.remove(key);
      } else {
        row.dueAt = nextDueAt.toISOString();
        row.leaseOwner = null;
        row.leaseUntil = null;
        index(key, row);
      }
      return true;
    },
    async release(owner) {
      let released = 0;
      for (const [key, row] of table.entries()) {
        if (row.leaseOwner !== owner) continue;
        row.leaseOwner = null;
        row.leaseUntil = null;
        leased.delete(key);
        index(key, row);
        released++;
      }
      return released;
    },
    async list(accountId, checkId) {
      return table
        .all()
        .filter((row) => row.accountId === accountId && row.checkId === checkId)
        .sort((a, b) => compareText(a.kind, b.kind) || compareText(a.location, b.location) || compareText(a.session?.sequenceId ?? '', b.session?.sequenceId ?? ''))
        .map(entryOf);
    },
  };
}

/** The undelivered messages, oldest first. */
const undeliveredOf = (messages: MemoryTable<OutboxMessage>) =>
  messages
    .all()
    .map((row, index) => ({ row, index }))
    .filter(({ row }) => row.deliveredAt === null)
    .sort((a, b) => time(a.row.created_at) - time(b.row.created_at) || a.index - b.index)
    .map(({ row }) => row);

/**
 * Leases what the outbox hands out (see Outbox.claim), oldest first; with `only`, just those of
 * these ids (an alert state's transitionAndLease).
 */
export function leaseHeads(messages: MemoryTable<OutboxMessage>, lease: OutboxLease, only?: ReadonlySet<string>): OutboxMessage[] {
  const at = lease.now.getTime();
  const leaseUntil = new Date(at + lease.leaseMs).toISOString();
  // Only the oldest undelivered message of a check to a channel may go, so they arrive in order.
  const seen = new Set<string>();
  const heads: OutboxMessage[] = [];
  for (const row of undeliveredOf(messages)) {
    if (row.checkId !== null) {
      const key = `${row.checkId}|${row.alertChannelId}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    heads.push(row);
  }
  const claimed = heads
    .filter((row) => (!only || only.has(row.id)) && time(row.nextAttemptAt) <= at && leaseFree(row, at))
    .slice(0, Math.max(0, lease.limit));
  for (const row of claimed) {
    row.leaseOwner = lease.owner;
    row.leaseUntil = leaseUntil;
  }
  return claimed.map(copy);
}

export function outbox(messages: MemoryTable<OutboxMessage>, attempts: MemoryTable<DeliveryAttempt>): Outbox {
  let attemptSeq = 0;
  const held = (id: string, owner: string) => {
    const row = messages.peek(id);
    return row && row.deliveredAt === null && row.leaseOwner === owner ? row : undefined;
  };
  const undelivered = () => undeliveredOf(messages);
  return {
    async enqueue(batch) {
      // Check the whole batch first, so that a conflict enqueues none of it.
      const ids = new Set<string>();
      for (const m of batch) {
        if (messages.has(m.id) || ids.has(m.id)) throw new ConflictError(`outbox: id ${m.id} already exists`);
        ids.add(m.id);
      }
      for (const m of batch) {
        messages.add(m.id, { ...m, attempts: 0, lastError: null, deliveredAt: null, leaseOwner: null, leaseUntil: null });
      }
    },
    claim: async (now, limit, leaseMs, owner) => leaseHeads(messages, { owner, now, leaseMs, limit }),
    async markDelivered(id, owner, at) {
      const row = held(id, owner);
      if (!row) return false;
      row.deliveredAt = at.toISOString();
      row.leaseOwner = null;
      row.leaseUntil = null;
      return true;
    },
    async markFailed(id, owner, error, nextAttemptAt) {
      const row = held(id, owner);
      if (!row) return false;
      row.attempts += 1;
      row.lastError = error;
      row.nextAttemptAt = nextAttemptAt.toISOString();
      row.leaseOwner = null;
      row.leaseUntil = null;
      return true;
    },
    async recordAttempt(attempt) {
      attempts.add(++attemptSeq, attempt);
    },
    async listAttempts(accountId, alertChannelId, limit) {
      return attempts
        .all()
        .map((row, index) => ({ row, index }))
        .filter(({ row }) => row.accountId === accountId && row.alertChannelId === alertChannelId)
        .sort((a, b) => time(b.row.at) - time(a.row.at) || b.index - a.index)
        .slice(0, Math.max(0, limit))
        .map(({ row }) => copy(row));
    },
    async listByCheck(accountId, checkId, limit) {
      return messages
        .all()
        .map((row, index) => ({ row, index }))
        .filter(({ row }) => row.accountId === accountId && row.checkId === checkId)
        .sort((a, b) => time(b.row.created_at) - time(a.row.created_at) || b.index - a.index)
        .slice(0, Math.max(0, limit))
        .map(({ row }) => copy(row));
    },
    async listAttemptsOf(accountId, outboxIds) {
      const wanted = new Set(outboxIds);
      return attempts
        .all()
        .map((row, index) => ({ row, index }))
        .filter(({ row }) => row.accountId === accountId && wanted.has(row.outboxId))
        .sort((a, b) => time(a.row.at) - time(b.row.at) || a.index - b.index)
        .map(({ row }) => copy(row));
    },
    async pending(accountId) {
      return undelivered()
        .filter((row) => accountId === undefined || row.accountId === accountId)
        .map(copy);
    },
    async depth() {
      return messages.all().filter((row) => row.deliveredAt === null).length;
    },
    async pruneDelivered(before, limit) {
      const cut = before.getTime();
      const take = <T extends object>(table: MemoryTable<T>, old: (row: T) => boolean) => {
        const keys = [...table.entries()].filter(([, row]) => old(row)).slice(0, Math.max(0, limit)).map(([key]) => key);
        for (const key of keys) table.remove(key);
        return keys.length;
      };
      return {
        messages: take(messages, (m) => m.deliveredAt !== null && time(m.deliveredAt) < cut),
        attempts: take(attempts, (a) => time(a.at) < cut),
      };
    },
  };
}
