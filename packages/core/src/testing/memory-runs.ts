import type { CheckSession } from '../model/check-session.js';
import type { CheckStatus } from '../model/check-status.js';
import type { ErrorGroup, TestSessionErrorGroup } from '../model/error-group.js';
import type {
  AlertStateRepository,
  CheckSessionRepository,
  CheckStatusRepository,
  ErrorGroupRepository,
  HeartbeatPing,
  HeartbeatRepository,
  NewOutboxMessage,
  OutboxMessage,
  TestSessionErrorGroupRepository,
} from '../ports/storage.js';
import type { AlertState } from '../rules/alerting.js';
import { sameValue } from '../services/apply-diff.js';
import { leaseHeads } from './memory-queues.js';
import { repository } from './memory-resources.js';
import type { MemoryTable } from './memory-table.js';

export function errorGroupRepository(table: MemoryTable<ErrorGroup>): ErrorGroupRepository {
  return {
    ...repository<ErrorGroup, string>(table),
    async findByHash(accountId, checkId, errorHash) {
      return table.ofAccount(accountId, (g) => g.checkId === checkId && g.errorHash === errorHash)[0] ?? null;
    },
    async listByCheck(accountId, checkId, options) {
      return table.page(accountId, options, (g) => g.checkId === checkId);
    },
  };
}

export function testSessionErrorGroupRepository(table: MemoryTable<TestSessionErrorGroup>): TestSessionErrorGroupRepository {
  return {
    ...repository<TestSessionErrorGroup, string>(table),
    async findByHash(accountId, projectId, errorHash) {
      return table.ofAccount(accountId, (g) => g.projectId === projectId && g.errorHash === errorHash)[0] ?? null;
    },
    async listByProject(accountId, projectId) {
      return table.ofAccount(accountId, (g) => g.projectId === projectId);
    },
  };
}

/**
 * Whether a stored row is still what a writer read (`expected`; null: no row), whatever the order
 * of keys. Everything here runs without a pause, so a check and the write after it are one step.
 */
function still<T extends object>(stored: T | undefined, expected: T | null): boolean {
  return expected === null ? stored === undefined : stored !== undefined && sameValue(stored, expected);
}

export function checkSessionRepository(table: MemoryTable<CheckSession>): CheckSessionRepository {
  return {
    async insert(accountId, session) {
      return table.add(session.checkSessionId, { ...session, accountId });
    },
    async get(accountId, checkSessionId) {
      return table.get(accountId, checkSessionId);
    },
    async update(accountId, session) {
      if (!table.owned(accountId, session.checkSessionId)) return null;
      return table.put(session.checkSessionId, { ...session, accountId });
    },
    async replace(accountId, expected, next) {
      if (!still(table.owned(accountId, next.checkSessionId), { ...expected, accountId })) return false;
      table.put(next.checkSessionId, { ...next, accountId });
      return true;
    },
  };
}

/** Per-check rows are keyed by account and check, so one account can never touch another's. */
const perCheck = (accountId: string, checkId: string) => JSON.stringify([accountId, checkId]);

export function checkStatusRepository(table: MemoryTable<CheckStatus>): CheckStatusRepository {
  return {
    async upsert(accountId, status) {
      return table.put(perCheck(accountId, status.checkId), { ...status, accountId });
    },
    async replace(accountId, expected, next) {
      const key = perCheck(accountId, next.checkId);
      if (!still(table.owned(accountId, key), expected && { ...expected, accountId })) return false;
      table.put(key, { ...next, accountId });
      return true;
    },
    async get(accountId, checkId) {
      return table.get(accountId, perCheck(accountId, checkId));
    },
    async list(accountId) {
      return table.ofAccount(accountId);
    },
    async delete(accountId, checkId) {
      return table.remove(perCheck(accountId, checkId));
    },
  };
}

export interface AlertStateRow {
  accountId: string;
  checkId: string;
  state: AlertState;
}

/**
 * The alert states, and the outbox table that `transition` queues its messages in (the same table
 * the store's outbox reads).
 */
export function alertStateRepository(table: MemoryTable<AlertStateRow>, outbox: MemoryTable<OutboxMessage>): AlertStateRepository {
  const queue = (messages: NewOutboxMessage[]) => {
    for (const m of messages) {
      if (outbox.has(m.id)) continue;
      outbox.add(m.id, { ...m, attempts: 0, lastError: null, deliveredAt: null, leaseOwner: null, leaseUntil: null });
    }
  };
  const transition = (accountId: string, checkId: string, expected: AlertState | null, next: AlertState, messages: NewOutboxMessage[]) => {
    const key = perCheck(accountId, checkId);
    if (!still(table.owned(accountId, key)?.state, expected)) return false;
    table.put(key, { accountId, checkId, state: next });
    queue(messages);
    return true;
  };
  return {
    async get(accountId, checkId) {
      return table.get(accountId, perCheck(accountId, checkId))?.state ?? null;
    },
    async put(accountId, checkId, state) {
      table.put(perCheck(accountId, checkId), { accountId, checkId, state });
    },
    transition: async (accountId, checkId, expected, next, messages) => transition(accountId, checkId, expected, next, messages),
    async transitionAndLease(accountId, checkId, expected, next, messages, lease) {
      if (!transition(accountId, checkId, expected, next, messages)) return null;
      return messages.length === 0 ? [] : leaseHeads(outbox, lease, new Set(messages.map((m) => m.id)));
    },
    async delete(accountId, checkId) {
      table.remove(perCheck(accountId, checkId));
    },
  };
}

export interface HeartbeatPingRow extends HeartbeatPing {
  accountId: string;
}

export function heartbeatRepository(table: MemoryTable<HeartbeatPingRow>): HeartbeatRepository {
  let seq = 0;
  const pings = (accountId: string, checkId: string) =>
    table
      .all()
      .map((row, index) => ({ row, index }))
      .filter(({ row }) => row.accountId === accountId && row.checkId === checkId)
      .sort((a, b) => Date.parse(a.row.at) - Date.parse(b.row.at) || a.index - b.index)
      .map(({ row }) => ({ checkId: row.checkId, at: row.at, source: row.source }));
  return {
    async recordPing(accountId, ping) {
      table.add(++seq, { checkId: ping.checkId, at: ping.at, source: ping.source, accountId });
    },
    async lastPing(accountId, checkId) {
      return pings(accountId, checkId).at(-1) ?? null;
    },
    async listPings(accountId, checkId, from, to) {
      return pings(accountId, checkId).filter((p) => {
        const at = Date.parse(p.at);
        return at >= from.getTime() && at < to.getTime();
      });
    },
    async prunePings(accountId, before, limit) {
      const newest = new Map<string, number>();
      for (const row of table.all()) if (row.accountId === accountId) newest.set(row.checkId, Math.max(newest.get(row.checkId) ?? -Infinity, Date.parse(row.at)));
      const doomed = [...table.entries()]
        .filter(([, row]) => row.accountId === accountId && Date.parse(row.at) < before.getTime() && Date.parse(row.at) < newest.get(row.checkId)!)
        .slice(0, Math.max(0, limit));
      for (const [key] of doomed) table.remove(key);
      return doomed.length;
    },
  };
}
