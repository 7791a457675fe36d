import { ConflictError } from '../errors.js';
import { LOCATIONS } from '../model/primitives.js';
import type {
  DeliveryAttempt,
  Outbox,
  OutboxMessage,
  ScheduledJob,
  ScheduleEntry,
  ScheduleStore,
  ServedLocations,
} from '../ports/storage.js';
import { copy, type MemoryTable } from './memory-table.js';

/** A schedule row: an entry and its lease, if any. */
export interface ScheduleRow extends ScheduleEntry {
  leaseOwner: string | null;
  leaseUntil: string | null;
}

const time = (iso: string) => Date.parse(iso);
const DATA_CENTERS: ReadonlySet<string> = new Set(LOCATIONS);

/** True when a process serving `serves` runs checks in `location`. */
export function servesLocation(serves: ServedLocations, location: string): boolean {
  const names = DATA_CENTERS.has(location) ? serves.locations : serves.privateLocations;
  return names === undefined || names === 'all' || names.includes(location);
}

const leaseFree = (row: { leaseUntil: string | null }, now: number) =>
  row.leaseUntil === null || time(row.leaseUntil) <= now;

// Instants written by toISOString() sort as strings; comparing them so spares a parse per row
// when a claim looks at a hundred thousand entries.
const canonical = (iso: string) => iso.length === 24 && iso.charCodeAt(23) === 90 /* Z */ && iso.charCodeAt(10) === 84 /* T */;
const notAfter = (iso: string, limitIso: string, limit: number) =>
  canonical(iso) ? iso <= limitIso : time(iso) <= limit;

const scheduleKey = (checkId: string, location: string) => JSON.stringify([checkId, location]);

export function scheduleStore(table: MemoryTable<ScheduleRow>): ScheduleStore {
  return {
    async upsert(entry) {
      const key = scheduleKey(entry.checkId, entry.location);
      const current = table.peek(key);
      // A moved entry keeps its lease, so that a run in progress is not claimed a second time.
      table.put(key, {
        accountId: entry.accountId,
        checkId: entry.checkId,
        location: entry.location,
        dueAt: entry.dueAt,
        leaseOwner: current?.leaseOwner ?? null,
        leaseUntil: current?.leaseUntil ?? null,
      });
    },
    async ensure(entries) {
      let added = 0;
      for (const entry of entries) {
        const key = scheduleKey(entry.checkId, entry.location);
        if (table.peek(key)) continue;
        table.put(key, { ...entry, leaseOwner: null, leaseUntil: null });
        added++;
      }
      return added;
    },
    async remove(accountId, checkId) {
      table.removeWhere((row) => row.accountId === accountId && row.checkId === checkId);
    },
    async claimDue(now, serves, limit, leaseMs, owner) {
      const at = now.getTime();
      const leaseUntil = new Date(at + leaseMs).toISOString();
      const atIso = now.toISOString();
      const everywhere = (serves.locations ?? 'all') === 'all' && (serves.privateLocations ?? 'all') === 'all';
      const due = table
        .all()
        .filter((row) => notAfter(row.dueAt, atIso, at) && (row.leaseUntil === null || notAfter(row.leaseUntil, atIso, at)) && (everywhere || servesLocation(serves, row.location)))
        .sort((a, b) => time(a.dueAt) - time(b.dueAt))
        .slice(0, Math.max(0, limit));
      return due.map((row): ScheduledJob => {
        row.leaseOwner = owner;
        row.leaseUntil = leaseUntil;
        return { accountId: row.accountId, checkId: row.checkId, location: row.location, dueAt: row.dueAt, leaseOwner: owner, leaseUntil };
      });
    },
    async complete(job, nextDueAt) {
      const key = scheduleKey(job.checkId, job.location);
      const row = table.peek(key);
      if (!row || row.leaseOwner !== job.leaseOwner) return false;
      if (nextDueAt === null) {
        table.remove(key);
      } else {
        row.dueAt = nextDueAt.toISOString();
        row.leaseOwner = null;
        row.leaseUntil = null;
      }
      return true;
    },
    async release(owner) {
      let released = 0;
      for (const row of table.all()) {
        if (row.leaseOwner !== owner) continue;
        row.leaseOwner = null;
        row.leaseUntil = null;
        released++;
      }
      return released;
    },
    async list(accountId, checkId) {
      return table
        .all()
        .filter((row) => row.accountId === accountId && row.checkId === checkId)
        .sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0))
        .map(({ accountId: a, checkId: c, location, dueAt }) => ({ accountId: a, checkId: c, location, dueAt }));
    },
  };
}

export function outbox(messages: MemoryTable<OutboxMessage>, attempts: MemoryTable<DeliveryAttempt>): Outbox {
  let attemptSeq = 0;
  const held = (id: string, owner: string) => {
    const row = messages.peek(id);
    return row && row.deliveredAt === null && row.leaseOwner === owner ? row : undefined;
  };
  const undelivered = () =>
    messages
      .all()
      .map((row, index) => ({ row, index }))
      .filter(({ row }) => row.deliveredAt === null)
      .sort((a, b) => time(a.row.created_at) - time(b.row.created_at) || a.index - b.index)
      .map(({ row }) => row);
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
    async claim(now, limit, leaseMs, owner) {
      const at = now.getTime();
      const leaseUntil = new Date(at + leaseMs).toISOString();
      // Only the oldest undelivered message of a check may go, so its alerts arrive in order.
      const seen = new Set<string>();
      const heads: OutboxMessage[] = [];
      for (const row of undelivered()) {
        if (row.checkId !== null) {
          if (seen.has(row.checkId)) continue;
          seen.add(row.checkId);
        }
        heads.push(row);
      }
      const claimed = heads
        .filter((row) => time(row.nextAttemptAt) <= at && leaseFree(row, at))
        .slice(0, Math.max(0, limit));
      for (const row of claimed) {
        row.leaseOwner = owner;
        row.leaseUntil = leaseUntil;
      }
      return claimed.map(copy);
    },
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
    async pending(accountId) {
      return undelivered()
        .filter((row) => accountId === undefined || row.accountId === accountId)
        .map(copy);
    },
  };
}
