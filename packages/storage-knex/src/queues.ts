import {
  isPrivateLocation,
  JOB_KINDS,
  LOCATED_JOB_KINDS,
  type DeliveryAttempt,
  type JobKind,
  type NewOutboxMessage,
  type Outbox,
  type OutboxLease,
  type OutboxMessage,
  type ScheduledJob,
  type ScheduleEntry,
  type ScheduleStore,
  type ServedLocations,
} from '@vigil/core';
import type { Knex } from 'knex';
import { dbCall } from './errors.js';
import { asUrgent } from './writer-lanes.js';
import { indexName } from './doc-tables.js';
import { outboxWrites } from './outbox-writes.js';
import { fixedWrite, type TableContext } from './table.js';

type Row = Record<string, unknown>;
const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

function isPg(knex: Knex): boolean {
  return ['pg', 'postgres', 'postgresql'].includes(String(knex.client.config.client));
}

/** The entries a process serving `serves` claims: `run` and `session` entries in its locations, and every engine job. */
function whereServed(q: Knex.QueryBuilder, serves: ServedLocations): void {
  const part = (isPrivate: boolean, names: string[] | 'all' | undefined) => (b: Knex.QueryBuilder) => {
    b.where('private', isPrivate);
    if (names !== undefined && names !== 'all') {
      if (names.length === 0) b.whereRaw('1 = 0');
      else b.whereIn('location', names);
    }
  };
  q.where((b) =>
    b.whereNotIn('kind', [...LOCATED_JOB_KINDS])
      .orWhere((located) => located.where(part(false, serves.locations)).orWhere(part(true, serves.privateLocations))));
}

/** A session entry's sequence, kept in `ref` beside its session: `checkSessionId/sequenceId`. */
const refOf = (entry: ScheduleEntry) => (entry.session ? `${entry.session.checkSessionId}/${entry.session.sequenceId}` : '');

function toRow(entry: ScheduleEntry): Row {
  return {
    kind: entry.kind,
    account_id: entry.accountId,
    check_id: entry.checkId,
    location: entry.location,
    ref: refOf(entry),
    private: LOCATED_JOB_KINDS.includes(entry.kind) && isPrivateLocation(entry.location),
    due_ms: Date.parse(entry.dueAt),
  };
}

function fromRow(r: Row): ScheduleEntry {
  const ref = String(r.ref ?? '');
  const slash = ref.indexOf('/');
  return {
    kind: String(r.kind) as JobKind,
    accountId: String(r.account_id),
    checkId: String(r.check_id),
    location: String(r.location),
    ...(ref ? { session: { checkSessionId: ref.slice(0, slash), sequenceId: ref.slice(slash + 1) } } : {}),
    dueAt: iso(r.due_ms)!,
  };
}

const KEY = ['kind', 'check_id', 'location', 'ref'];
/**
 * A check's entries are found through the key, whose first column is the kind: naming the kinds
 * lets the database look up each (kind, check) in it instead of reading the whole schedule, once
 * for every check written (and for every member of a group written).
 */
const UNSESSIONED_KINDS = JOB_KINDS.filter((k) => k !== 'session');
const keyOf = (entry: ScheduleEntry) => ({ kind: entry.kind, check_id: entry.checkId, location: entry.location, ref: refOf(entry) });

export function scheduleStore(ctx: TableContext): ScheduleStore {
  const table = `${ctx.prefix}schedule`;
  const run = dbCall(ctx.database);
  return {
    upsert: (entry) =>
      run(async () => {
        // A moved entry keeps its lease, so a run in progress is not claimed a second time. A
        // failing check's alert tick is written on its way to the alert's step: urgent as well.
        const write = async () => {
          await ctx.knex(table).insert(toRow(entry)).onConflict(KEY).merge(['account_id', 'due_ms']);
        };
        await (entry.kind === 'alert-tick' ? asUrgent(write) : write());
      }),
    ensure: (entries) =>
      run(async () => {
        let added = 0;
        // 100 rows a statement stays under SQLite's limit of bound variables.
        for (let i = 0; i < entries.length; i += 100) {
          const rows = entries.slice(i, i + 100).map(toRow);
          const inserted = await ctx.knex(table).insert(rows).onConflict(KEY).ignore().returning(['check_id']);
          added += (inserted as unknown[]).length;
        }
        return added;
      }),
    remove: (accountId, checkId) =>
      run(async () => void (await ctx.knex(table).whereIn('kind', UNSESSIONED_KINDS).where({ check_id: checkId, account_id: accountId }).delete())),
    claimDue: (now, serves, limit, leaseMs, owner, kinds) =>
      run(async () => {
        const at = now.getTime();
        const until = at + leaseMs;
        return ctx.knex.transaction(async (trx) => {
          const due = trx(table)
            .select(...KEY, 'lease_owner')
            .where('due_ms', '<=', at)
            .where((b) => b.whereNull('lease_until_ms').orWhere('lease_until_ms', '<=', at))
            .orderBy('due_ms')
            .limit(Math.max(0, limit));
          whereServed(due, serves);
          if (kinds) due.whereIn('kind', [...kinds]);
          // Several processes on one PostgreSQL database each take a disjoint set of rows.
          if (isPg(ctx.knex)) due.forUpdate().skipLocked();
          const picked = (await due) as (Row & { lease_owner: string | null })[];
          // One update a chunk of 100 picked rows (not one a row): the rows stay locked for a few
          // round trips instead of one per row, and 400 bound values stay under SQLite's limit.
          const leased = new Map<string, Row>();
          const keyText = (r: Row) => `${String(r.kind)}\u0000${String(r.check_id)}\u0000${String(r.location)}\u0000${String(r.ref)}`;
          for (let i = 0; i < picked.length; i += 100) {
            const chunk = picked.slice(i, i + 100).map((p) => [p.kind, p.check_id, p.location, p.ref]);
            const rows = (await trx(table)
              .whereIn(KEY, chunk as never)
              .update({ lease_owner: owner, lease_until_ms: until })
              .returning(['kind', 'account_id', 'check_id', 'location', 'ref', 'due_ms'])) as Row[];
            for (const row of rows) leased.set(keyText(row), row);
          }
          const jobs: ScheduledJob[] = [];
          for (const p of picked) {
            const row = leased.get(keyText(p));
            if (!row) continue;
            jobs.push({
              ...fromRow(row), leaseOwner: owner, leaseUntil: iso(until)!,
              // An owner still on the row means its lease ran out: complete and release clear it.
              reclaimed: p.lease_owner !== null && p.lease_owner !== undefined,
            });
          }
          return jobs;
        });
      }),
    complete: (job, nextDueAt) =>
      run(async () => {
        // Every run's last write: prepared where the store has its own statements.
        const held = () => ctx.knex(table).where({ ...keyOf(job), lease_owner: job.leaseOwner });
        const asClaimed = held().where('due_ms', Date.parse(job.dueAt));
        const n = await fixedWrite(ctx, nextDueAt === null
          ? asClaimed.delete()
          : asClaimed.update({ due_ms: nextDueAt.getTime(), lease_owner: null, lease_until_ms: null }));
        if (n > 0) return true;
        // Moved while it ran (a failing check's next alert tick, a changed check): the move stands.
        return (await fixedWrite(ctx, held().update({ lease_owner: null, lease_until_ms: null }))) > 0;
      }),
    release: (owner) => run(async () => Number(await ctx.knex(table).where('lease_owner', owner).update({ lease_owner: null, lease_until_ms: null }))),
    list: (accountId, checkId) =>
      run(async () => {
        const rows = await ctx.knex(table).whereIn('kind', JOB_KINDS).where({ check_id: checkId, account_id: accountId }).orderBy(['kind', 'location', 'ref']);
        return rows.map(fromRow);
      }),
  };
}

/** The row a new outbox message is stored as (enqueue's, and an alert state's transition's). */
export function outboxRow(m: NewOutboxMessage): Row {
  return {
    id: m.id, account_id: m.accountId, check_id: m.checkId, alert_channel_id: m.alertChannelId, created_ms: Date.parse(m.created_at),
    next_attempt_ms: Date.parse(m.nextAttemptAt), attempts: 0, data: JSON.stringify(m),
  };
}

const attemptOf = (r: Row): DeliveryAttempt => ({
  outboxId: String(r.outbox_id), accountId: String(r.account_id), alertChannelId: Number(r.alert_channel_id), at: String(r.at), ok: Boolean(r.ok), detail: (r.detail as string | null) ?? null,
});

const outboxMessageOf = (r: Row): OutboxMessage => ({
  ...(JSON.parse(String(r.data)) as Omit<OutboxMessage, 'attempts' | 'nextAttemptAt' | 'deliveredAt' | 'leaseOwner' | 'leaseUntil' | 'lastError'>),
  attempts: Number(r.attempts),
  nextAttemptAt: iso(r.next_attempt_ms)!,
  deliveredAt: iso(r.delivered_ms),
  leaseOwner: (r.lease_owner as string | null) ?? null,
  leaseUntil: iso(r.lease_until_ms),
  lastError: (r.last_error as string | null) ?? null,
});

/** The name of the index the outbox's claim reads (migration 015). */
const outboxClaimIndex = (ctx: TableContext) => indexName(`${ctx.prefix}outbox`, ['undelivered', 'created_ms', 'seq']);

const claimHints = new WeakMap<TableContext, Promise<boolean>>();

/**
 * Whether SQLite's claim names its index: only where it exists. A store run with `migrate: false`
 * over an older schema, or another dialect, claims without the hint (slower, never broken).
 */
export function claimIndexHint(ctx: TableContext): Promise<boolean> {
  let hinted = claimHints.get(ctx);
  if (!hinted) {
    hinted = ctx.knex.client.dialect !== 'sqlite3'
      ? Promise.resolve(false)
      : ctx.knex('sqlite_master').where({ type: 'index', name: outboxClaimIndex(ctx) }).first('name').then((row) => row !== undefined, () => {
        claimHints.delete(ctx);
        return false;
      });
    claimHints.set(ctx, hinted);
  }
  return hinted;
}

/**
 * Leases what the outbox hands out (see Outbox.claim), oldest first, in one statement on `db` (the
 * store's connection, or an alert state's transaction); with `only`, just those of these ids (an
 * alert state's transitionAndLease). `hint` names the claim's index.
 */
export async function leaseHeads(
  ctx: TableContext, db: Knex | Knex.Transaction, lease: OutboxLease, hint: boolean, only?: readonly string[],
): Promise<OutboxMessage[]> {
  const table = `${ctx.prefix}outbox`;
  const at = lease.now.getTime();
  // Only the oldest undelivered message of a check to a channel may go, so they arrive in order.
  // SQLite (no statistics) would search by due time and sort the whole queue: it reads the
  // undelivered messages in claim order (migration 015) and stops at the limit.
  const from = hint ? db.raw('?? as o indexed by ??', [table, outboxClaimIndex(ctx)]) : `${table} as o`;
  const heads = db(from)
    .select('o.id')
    .whereNull('o.delivered_ms')
    .where('o.next_attempt_ms', '<=', at)
    .where((b) => b.whereNull('o.lease_until_ms').orWhere('o.lease_until_ms', '<=', at))
    .where((b) =>
      b.whereNull('o.check_id').orWhereNotExists(
        db(`${table} as p`).select(db.raw('1')).whereRaw('p.check_id = o.check_id and p.alert_channel_id = o.alert_channel_id').whereNull('p.delivered_ms')
          .where((c) => c.where('p.created_ms', '<', db.ref('o.created_ms')).orWhere((d) => d.where('p.created_ms', db.ref('o.created_ms')).where('p.seq', '<', db.ref('o.seq')))),
      ),
    )
    .orderBy([{ column: 'o.created_ms' }, { column: 'o.seq' }])
    .limit(Math.max(0, lease.limit));
  if (only) heads.whereIn('o.id', [...only]);
  if (isPg(ctx.knex)) heads.forUpdate().skipLocked();
  // Picked and leased in one statement: a claim is one round trip to the store, not two. The heads
  // are a CTE, which PostgreSQL runs once (one with FOR UPDATE is never inlined): as a subquery of
  // IN, a nested-loop plan would run it again for each row, each time past the rows it had leased,
  // and lease more than the limit.
  const picked = db.with('picked', heads).from(table).whereIn('id', db('picked').select('id'));
  const rows = (await picked.update({ lease_owner: lease.owner, lease_until_ms: at + lease.leaseMs }).returning('*')) as Row[];
  // Oldest first, as the heads were picked.
  return rows.sort(claimOrder).map(outboxMessageOf);
}

/** The claim's order: by creation time, then by insertion. */
function claimOrder(a: Row, b: Row): number {
  return Number(a.created_ms) - Number(b.created_ms) || Number(a.seq) - Number(b.seq);
}

export function outbox(ctx: TableContext): Outbox {
  const table = `${ctx.prefix}outbox`;
  const attempts = `${ctx.prefix}delivery_attempts`;
  const run = dbCall(ctx.database);
  const fromRow = outboxMessageOf;
  const undelivered = (q: Knex.QueryBuilder) => q.whereNull('delivered_ms').orderBy([{ column: 'created_ms' }, { column: 'seq' }]);
  return {
    enqueue: (batch) =>
      run(async () => {
        if (batch.length === 0) return;
        await ctx.knex.transaction(async (trx) => {
          await trx(table).insert(batch.map(outboxRow));
        });
      }),
    claim: (now, limit, leaseMs, owner) =>
      run(async () => {
        const hint = await claimIndexHint(ctx);
        // One statement, atomic on its own: no transaction around it.
        return leaseHeads(ctx, ctx.knex, { owner, now, leaseMs, limit }, hint);
      }),
    // Delivery outcomes are written together, one transaction for the sends that finish at once.
    ...outboxWrites(ctx, table, attempts),
    listAttempts: (accountId, alertChannelId, limit) =>
      run(async () => {
        const rows = await ctx.knex(attempts).where({ account_id: accountId, alert_channel_id: alertChannelId }).orderBy([{ column: 'at', order: 'desc' }, { column: 'seq', order: 'desc' }]).limit(Math.max(0, limit));
        return rows.map(attemptOf);
      }),
    listByCheck: (accountId, checkId, limit) =>
      run(async () => {
        const rows = (await ctx.knex(table).where({ account_id: accountId, check_id: checkId }).orderBy([{ column: 'created_ms', order: 'desc' }, { column: 'seq', order: 'desc' }]).limit(Math.max(0, limit))) as Row[];
        return rows.map(fromRow);
      }),
    listAttemptsOf: (accountId, outboxIds) =>
      run(async () => {
        if (outboxIds.length === 0) return [];
        const rows = (await ctx.knex(attempts).where('account_id', accountId).whereIn('outbox_id', [...outboxIds]).orderBy([{ column: 'at' }, { column: 'seq' }])) as Row[];
        return rows.map(attemptOf);
      }),
    pending: (accountId) =>
      run(async () => {
        const q = undelivered(ctx.knex(table));
        if (accountId !== undefined) q.where('account_id', accountId);
        return (await q).map(fromRow);
      }),
    depth: () =>
      run(async () => {
        const [row] = (await ctx.knex(table).whereNull('delivered_ms').count({ n: '*' })) as { n: number | string }[];
        return Number(row?.n ?? 0);
      }),
    pruneDelivered: (before, limit) =>
      run(async () => {
        const n = Math.max(0, Math.min(limit, 100_000));
        const messages = await ctx.knex(table).whereIn('id', ctx.knex(table).select('id').whereNotNull('delivered_ms').where('delivered_ms', '<', before.getTime()).limit(n)).delete();
        const logged = await ctx.knex(attempts).whereIn('seq', ctx.knex(attempts).select('seq').where('at', '<', before.toISOString()).limit(n)).delete();
        return { messages: Number(messages), attempts: Number(logged) };
      }),
  };
}
