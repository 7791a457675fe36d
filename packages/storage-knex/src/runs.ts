import type {
  AlertState,
  AlertStateRepository,
  CheckSession,
  CheckSessionRepository,
  CheckStatus,
  CheckStatusRepository,
  ErrorGroup,
  ErrorGroupRepository,
  HeartbeatRepository,
  NewOutboxMessage,
  OutboxLease,
  OutboxMessage,
  TestSessionErrorGroup,
  TestSessionErrorGroupRepository,
} from '@vigil/core';
import { leaseHeads, outboxRow } from './queues.js';
import { docRepository } from './resources.js';
import { listWithChecks } from './status-list.js';
import { DocTable, type TableContext } from './table.js';
import { asUrgent } from './writer-lanes.js';

export function errorGroupRepository(ctx: TableContext): ErrorGroupRepository {
  const table = new DocTable<ErrorGroup>(ctx, {
    name: 'error_groups', numericId: false, columns: { check_id: (g) => g.checkId, error_hash: (g) => g.errorHash },
  });
  return {
    ...docRepository<ErrorGroup, string>(table),
    async findByHash(accountId, checkId, errorHash) {
      return (await table.where(accountId, { check_id: checkId, error_hash: errorHash }))[0] ?? null;
    },
    // The page's groups alone are read whole (each holds its analyses), not every group of the check.
    listByCheck: (accountId, checkId, options) => table.page(accountId, options, { check_id: checkId }),
  };
}

export function testSessionErrorGroupRepository(ctx: TableContext): TestSessionErrorGroupRepository {
  const table = new DocTable<TestSessionErrorGroup>(ctx, {
    name: 'test_session_error_groups', numericId: false,
    columns: { project_id: (g) => g.projectId, error_hash: (g) => g.errorHash },
  });
  return {
    ...docRepository<TestSessionErrorGroup, string>(table),
    async findByHash(accountId, projectId, errorHash) {
      return (await table.where(accountId, { project_id: projectId, error_hash: errorHash }))[0] ?? null;
    },
    listByProject: (accountId, projectId) => table.where(accountId, { project_id: projectId }),
  };
}

type SessionRow = CheckSession & { id: string };

export function checkSessionRepository(ctx: TableContext): CheckSessionRepository {
  const table = new DocTable<SessionRow>(ctx, { name: 'check_sessions', numericId: false });
  const strip = (row: SessionRow | null): CheckSession | null => {
    if (!row) return null;
    const { id: _id, ...rest } = row;
    return rest;
  };
  return {
    async insert(accountId, session) {
      return strip(await table.insert(accountId, { ...session, id: session.checkSessionId }))!;
    },
    get: async (accountId, id) => strip(await table.get(accountId, id)),
    update: async (accountId, session) => strip(await table.put(accountId, session.checkSessionId, session)),
    replace: (accountId, expected, next) =>
      table.replace(accountId, { ...expected, id: expected.checkSessionId }, { ...next, id: next.checkSessionId }),
  };
}

/** Per-check rows are keyed by account and check, so one account never touches another's. */
const perCheck = (accountId: string, checkId: string) => `${accountId}:${checkId}`;

type StatusRow = CheckStatus & { id: string };

/**
 * A stored status document as the repository answers it: the document holds neither its row id
 * nor its account (the table keeps those in columns), so the account is added last, as a row read
 * through the table has it.
 */
function statusOf(data: string, accountId: string): CheckStatus {
  const status = JSON.parse(data) as CheckStatus;
  status.accountId = accountId;
  return status;
}

export function checkStatusRepository(ctx: TableContext): CheckStatusRepository {
  const table = new DocTable<StatusRow>(ctx, { name: 'check_statuses', numericId: false });
  const strip = ({ id: _id, ...rest }: StatusRow): CheckStatus => rest;
  return {
    listWithChecks: (accountId) => listWithChecks(ctx, table, accountId),
    async upsert(accountId, status) {
      // The id holds the account, so the row it meets is always this account's.
      return strip((await table.upsert(accountId, { ...status, id: perCheck(accountId, status.checkId) }))!);
    },
    replace: (accountId, expected, next) => {
      const id = perCheck(accountId, next.checkId);
      return table.replace(accountId, expected && { ...expected, id }, { ...next, id });
    },
    get: async (accountId, checkId) => {
      const row = await table.get(accountId, perCheck(accountId, checkId));
      return row ? strip(row) : null;
    },
    // The hottest list of the API (every check's status at once): only the documents are read, and
    // each parsed document becomes the status itself, with no copy per row.
    list: (accountId) => {
      if (accountId.includes('\0')) return Promise.resolve([]);
      return table.run(async () => {
        const rows = (await table.readQuery(accountId).select('data').orderBy('seq', 'asc')) as { data: string }[];
        return rows.map((r) => statusOf(r.data, accountId));
      });
    },
    delete: async (accountId, checkId) => (await table.remove(accountId, { id: perCheck(accountId, checkId) })) > 0,
  };
}

type StateRow = { id: string; accountId: string; checkId: string; state: AlertState };

export function alertStateRepository(ctx: TableContext): AlertStateRepository {
  const table = new DocTable<StateRow>(ctx, { name: 'alert_states', numericId: false });
  const outbox = `${ctx.prefix}outbox`;
  const row = (accountId: string, checkId: string, state: AlertState): StateRow => ({ id: perCheck(accountId, checkId), accountId, checkId, state });
  /**
   * The step: the state alone in one compare-and-set statement; with alerts, the state, the alerts
   * and, with `lease`, the lease of those that may go now, in one transaction.
   */
  const transition = async (
    accountId: string, checkId: string, expected: AlertState | null, next: AlertState, messages: NewOutboxMessage[], lease?: OutboxLease,
  ): Promise<OutboxMessage[] | null> => {
    if (messages.length === 0) {
      // The state alone: one compare-and-set statement, atomic by itself, with no transaction.
      return (await table.replace(accountId, expected && row(accountId, checkId, expected), row(accountId, checkId, next))) ? [] : null;
    }
    // A step that queues alerts goes ahead of the runs' bookkeeping on SQLite's writer.
    return table.run(() => asUrgent(() =>
      ctx.knex.transaction(async (trx) => {
        const wrote = await table.replace(accountId, expected && row(accountId, checkId, expected), row(accountId, checkId, next), trx);
        if (!wrote) return null;
        // 100 rows a statement stays under SQLite's limit of bound variables.
        for (let i = 0; i < messages.length; i += 100) {
          await trx(outbox).insert(messages.slice(i, i + 100).map(outboxRow)).onConflict('id').ignore();
        }
        if (!lease) return [];
        // Searched by id, not in the claim's order (the new rows sort last in its index).
        return leaseHeads(ctx, trx, lease, false, messages.slice(0, 100).map((m) => m.id));
      })));
  };
  return {
    get: async (accountId, checkId) => (await table.get(accountId, perCheck(accountId, checkId)))?.state ?? null,
    async put(accountId, checkId, state) {
      await table.upsert(accountId, row(accountId, checkId, state));
    },
    transition: async (accountId, checkId, expected, next, messages) => (await transition(accountId, checkId, expected, next, messages)) !== null,
    transitionAndLease: transition,
    async delete(accountId, checkId) {
      await table.remove(accountId, { id: perCheck(accountId, checkId) });
    },
  };
}

export function heartbeatRepository(ctx: TableContext): HeartbeatRepository {
  const name = `${ctx.prefix}heartbeat_pings`;
  const toPing = (r: { check_id: string; at: string; source: string | null }) => ({ checkId: r.check_id, at: r.at, source: r.source });
  return {
    async recordPing(accountId, ping) {
      await ctx.knex(name).insert({ account_id: accountId, check_id: ping.checkId, at: ping.at, at_ms: Date.parse(ping.at), source: ping.source });
    },
    async lastPing(accountId, checkId) {
      const row = await ctx.reader(name).where({ account_id: accountId, check_id: checkId }).orderBy([{ column: 'at_ms', order: 'desc' }, { column: 'seq', order: 'desc' }]).first();
      return row ? toPing(row) : null;
    },
    async listPings(accountId, checkId, from, to) {
      const rows = await ctx.reader(name)
        .where({ account_id: accountId, check_id: checkId })
        .where('at_ms', '>=', from.getTime())
        .where('at_ms', '<', to.getTime())
        .orderBy([{ column: 'at_ms', order: 'asc' }, { column: 'seq', order: 'asc' }]);
      return rows.map(toPing);
    },
    async prunePings(accountId, before, limit) {
      // A ping goes when a later one of its check stays: each check's newest is kept, however
      // old. The later ping is looked up along the (account, check, time) index.
      const doomed = ctx.knex(`${name} as o`).select('o.seq')
        .where('o.account_id', accountId)
        .where('o.at_ms', '<', before.getTime())
        .whereExists((later) => later.select(ctx.knex.raw('1')).from(`${name} as n`)
          .whereRaw('n.account_id = o.account_id and n.check_id = o.check_id and n.at_ms > o.at_ms'))
        .limit(Math.max(0, limit));
      return Number(await ctx.knex(name).whereIn('seq', doomed).delete());
    },
  };
}
