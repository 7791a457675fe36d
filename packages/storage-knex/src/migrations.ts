import type { Knex } from 'knex';
import { isPostgres } from './compact/layout.js';
import { createMarksTable } from './compact/marks.js';
import { createCompactTables } from './compact/schema.js';
import { createDocTable, DOC_TABLES, indexName, SNIPPETS_TABLE, SUBSCRIBERS_TABLE } from './doc-tables.js';
import { READ_MIGRATIONS, type Migration } from './migrations-reads.js';

const MIGRATIONS: Migration[] = [
  {
    name: '001_documents',
    async up(knex, prefix) {
      for (const def of DOC_TABLES) await createDocTable(knex, prefix, def);
    },
  },
  {
    name: '002_runs',
    async up(knex, prefix) {
      const results = `${prefix}check_results`;
      await knex.schema.createTable(results, (t) => {
        t.increments('seq').primary();
        t.string('id', 64).notNullable();
        t.unique(['id'], { indexName: indexName(results, ['id'], 'unique') });
        t.string('account_id', 64).notNullable();
        t.string('check_id', 64).notNullable();
        t.bigInteger('started_ms').notNullable();
        t.string('run_location', 128).notNullable();
        t.integer('status_code').nullable();
        t.double('response_time').notNullable();
        t.boolean('failed').notNullable();
        t.integer('attempts').notNullable();
        t.string('result_type', 16).notNullable();
        t.string('check_session_id', 64).nullable();
        t.text('phases').notNullable();
        t.text('data').notNullable();
        t.index(['account_id', 'check_id', 'started_ms'], indexName(results, ['account_id', 'check_id', 'started_ms']));
        t.index(['started_ms'], indexName(results, ['started_ms']));
      });
      // Hourly roll-ups outlive the raw results they summarise (see retention).
      await knex.schema.createTable(`${prefix}check_result_rollups`, (t) => {
        t.string('account_id', 64).notNullable();
        t.string('check_id', 64).notNullable();
        t.bigInteger('hour_ms').notNullable();
        t.string('run_location', 128).notNullable();
        t.integer('count').notNullable();
        t.integer('failures').notNullable();
        t.double('sum').notNullable();
        t.double('sum_sq').notNullable();
        t.double('min').notNullable();
        t.double('max').notNullable();
        t.double('p50').notNullable();
        t.double('p90').notNullable();
        t.double('p95').notNullable();
        t.double('p99').notNullable();
        t.primary(['account_id', 'check_id', 'hour_ms', 'run_location'], indexName(`${prefix}check_result_rollups`, ['pk'], 'index'));
      });
      await knex.schema.createTable(`${prefix}heartbeat_pings`, (t) => {
        t.increments('seq').primary();
        t.string('account_id', 64).notNullable();
        t.string('check_id', 64).notNullable();
        t.bigInteger('at_ms').notNullable();
        t.string('at', 40).notNullable();
        t.string('source', 255).nullable();
        t.index(['account_id', 'check_id', 'at_ms'], indexName(`${prefix}heartbeat_pings`, ['account_id', 'check_id', 'at_ms']));
      });
      await knex.schema.createTable(`${prefix}schedule`, (t) => {
        t.string('account_id', 64).notNullable();
        t.string('check_id', 64).notNullable();
        t.string('location', 128).notNullable();
        t.boolean('private').notNullable();
        t.bigInteger('due_ms').notNullable();
        t.string('lease_owner', 128).nullable();
        t.bigInteger('lease_until_ms').nullable();
        t.primary(['check_id', 'location'], indexName(`${prefix}schedule`, ['pk'], 'index'));
        t.index(['due_ms'], indexName(`${prefix}schedule`, ['due_ms']));
      });
      await knex.schema.createTable(`${prefix}outbox`, (t) => {
        t.string('id', 64).primary(indexName(`${prefix}outbox`, ['pk'], 'index'));
        t.increments('seq', { primaryKey: false });
        t.string('account_id', 64).notNullable();
        t.string('check_id', 64).nullable();
        t.bigInteger('created_ms').notNullable();
        t.bigInteger('next_attempt_ms').notNullable();
        t.bigInteger('delivered_ms').nullable();
        t.string('delivered_at', 40).nullable();
        t.string('lease_owner', 128).nullable();
        t.bigInteger('lease_until_ms').nullable();
        t.integer('attempts').notNullable().defaultTo(0);
        t.text('last_error').nullable();
        t.text('data').notNullable();
        t.index(['delivered_ms', 'next_attempt_ms'], indexName(`${prefix}outbox`, ['delivered_ms', 'next_attempt_ms']));
        t.index(['check_id', 'delivered_ms'], indexName(`${prefix}outbox`, ['check_id', 'delivered_ms']));
      });
      await knex.schema.createTable(`${prefix}delivery_attempts`, (t) => {
        t.increments('seq').primary();
        t.string('account_id', 64).notNullable();
        t.integer('alert_channel_id').notNullable();
        t.string('outbox_id', 64).notNullable();
        t.string('at', 40).notNullable();
        t.boolean('ok').notNullable();
        t.text('detail').nullable();
        t.index(['account_id', 'alert_channel_id', 'seq'], indexName(`${prefix}delivery_attempts`, ['account_id', 'alert_channel_id', 'seq']));
      });
    },
  },
  {
    // Lists of thousands of checks (check statuses) read these columns instead of every document.
    name: '003_check_summaries',
    async up(knex, prefix) {
      const table = `${prefix}checks`;
      await knex.schema.alterTable(table, (t) => {
        t.text('name').nullable();
        t.string('check_type', 64).nullable();
        t.string('created_at', 40).nullable();
      });
      let after = 0;
      for (;;) {
        const rows = (await knex(table).select('seq', 'data').where('seq', '>', after).orderBy('seq').limit(500)) as { seq: number; data: string }[];
        if (rows.length === 0) break;
        for (const row of rows) {
          const doc = JSON.parse(row.data) as { name?: string; checkType?: string; created_at?: string };
          await knex(table).where('seq', row.seq).update({ name: doc.name ?? null, check_type: doc.checkType ?? null, created_at: doc.created_at ?? null });
        }
        after = rows[rows.length - 1]!.seq;
      }
    },
  },
  {
    // Alerts keep their order per check and channel, so one channel that is down holds back none of the others.
    name: '004_outbox_channel',
    async up(knex, prefix) {
      const table = `${prefix}outbox`;
      await knex.schema.alterTable(table, (t) => {
        t.integer('alert_channel_id').nullable();
        t.index(['check_id', 'alert_channel_id', 'delivered_ms'], indexName(table, ['check_id', 'alert_channel_id', 'delivered_ms']));
      });
      const rows = (await knex(table).select('id', 'data').whereNull('delivered_ms')) as { id: string; data: string }[];
      for (const row of rows) {
        await knex(table).where('id', row.id).update({ alert_channel_id: (JSON.parse(row.data) as { alertChannelId: number }).alertChannelId });
      }
    },
  },
  {
    // Snippets: the setup and teardown code check groups name by id.
    name: '005_snippets',
    up: (knex, prefix) => createDocTable(knex, prefix, SNIPPETS_TABLE),
  },
  {
    // Checks as code: which construct (project, kind, logical id) made which resource.
    name: '006_managed_resources',
    async up(knex, prefix) {
      const table = `${prefix}managed_resources`;
      await knex.schema.createTable(table, (t) => {
        t.increments('seq').primary();
        t.string('account_id', 64).notNullable();
        t.string('project', 100).notNullable();
        t.string('kind', 32).notNullable();
        t.string('logical_id', 255).notNullable();
        t.string('resource_id', 255).notNullable();
        t.text('fields').notNullable();
        t.string('created_at', 40).notNullable();
        t.string('updated_at', 40).nullable();
        t.unique(['account_id', 'project', 'kind', 'logical_id'], { indexName: indexName(table, ['account_id', 'project', 'kind', 'logical_id'], 'unique') });
      });
    },
  },
  {
    // The people who asked a status page for its incident updates by email.
    name: '007_status_page_subscribers',
    async up(knex, prefix) {
      await createDocTable(knex, prefix, SUBSCRIBERS_TABLE);
      // Across accounts: how many confirmations one address was sent lately.
      const table = `${prefix}status_page_subscribers`;
      await knex.schema.alterTable(table, (t) => t.index(['email_hash', 'sent_ms'], indexName(table, ['email_hash', 'sent_ms'])));
    },
  },
  {
    // The retention job prunes the delivery log by time.
    name: '008_delivery_attempts_at',
    async up(knex, prefix) {
      const table = `${prefix}delivery_attempts`;
      await knex.schema.alterTable(table, (t) => t.index(['at'], indexName(table, ['at'])));
    },
  },
  {
    // Schedule entries say what they are (a check's run, a session's run, or one of the engine's
    // own jobs) instead of a sentinel location, and sessions' runs are leased like scheduled ones.
    name: '009_schedule_kinds',
    async up(knex, prefix) {
      const table = `${prefix}schedule`;
      const old = `${prefix}schedule_008`;
      await knex.schema.renameTable(table, old);
      await knex.schema.createTable(table, (t) => {
        t.string('kind', 32).notNullable();
        t.string('account_id', 64).notNullable();
        t.string('check_id', 64).notNullable();
        t.string('location', 128).notNullable();
        // A session entry's `checkSessionId/sequenceId`; empty for every other kind.
        t.string('ref', 160).notNullable().defaultTo('');
        t.boolean('private').notNullable();
        t.bigInteger('due_ms').notNullable();
        t.string('lease_owner', 128).nullable();
        t.bigInteger('lease_until_ms').nullable();
        t.primary(['kind', 'check_id', 'location', 'ref'], indexName(table, ['kind', 'pk'], 'index'));
        t.index(['due_ms'], indexName(table, ['kind', 'due_ms']));
      });
      const kindOf: Record<string, string> = { '@alert-tick': 'alert-tick', '@ssl': 'certificate', '@retention': 'retention' };
      const rows = (await knex(old).select('*')) as Record<string, unknown>[];
      for (let i = 0; i < rows.length; i += 100) {
        await knex(table).insert(rows.slice(i, i + 100).map((r) => {
          const kind = kindOf[String(r.location)] ?? 'run';
          const own = kind === 'retention';
          return {
            kind,
            account_id: own ? '' : r.account_id,
            check_id: own ? '' : r.check_id,
            location: kind === 'run' ? r.location : '',
            ref: '',
            private: kind === 'run' ? r.private : false,
            due_ms: r.due_ms,
            lease_owner: r.lease_owner,
            lease_until_ms: r.lease_until_ms,
          };
        }));
      }
      await knex.schema.dropTable(old);
    },
  },
  {
    // Roll-ups made as hours close: each field's sums and DDSketch (null before), whether the
    // hour's raw results are gone (so were all earlier ones), and an account's newest by hour.
    name: '010_rollup_sketches',
    async up(knex, prefix) {
      const table = `${prefix}check_result_rollups`;
      await knex.schema.alterTable(table, (t) => {
        t.text('sketches').nullable();
        t.boolean('pruned').notNullable().defaultTo(true);
        t.index(['account_id', 'hour_ms'], indexName(table, ['account_id', 'hour_ms']));
      });
    },
  },
  {
    // Scheduled TCP and API runs as narrow rows keyed by check and slot, with the full detail of
    // the runs that keep it beside them (see compact/layout.ts).
    name: '011_compact_results',
    up: (knex, prefix) => createCompactTables(knex, prefix),
  },
  {
    // How far whole days were dropped, so that a day's roll-ups count as pruned without a write each.
    name: '012_retention_marks',
    up: (knex, prefix) => createMarksTable(knex, prefix),
  },
  {
    // A roll-up's stats as one binary value (see rollup-codec.ts), a quarter of their JSON; its
    // percentiles are read from its sketch, so the columns before it are left null on new ones.
    name: '013_rollup_stats',
    async up(knex, prefix) {
      const table = `${prefix}check_result_rollups`;
      await knex.schema.alterTable(table, (t) => {
        t.binary('stats').nullable();
      });
      const legacy = ['sum', 'sum_sq', 'min', 'max', 'p50', 'p90', 'p95', 'p99'];
      if (isPostgres(knex)) {
        await knex.raw(`alter table ?? ${legacy.map(() => 'alter column ?? drop not null').join(', ')}`, [table, ...legacy]);
      } else {
        await knex.schema.alterTable(table, (t) => {
          for (const column of legacy) t.double(column).nullable().alter();
        });
      }
    },
  },
  {
    // A check's page lists its alerts with the attempts of each.
    name: '014_delivery_attempts_outbox',
    async up(knex, prefix) {
      const table = `${prefix}delivery_attempts`;
      await knex.schema.alterTable(table, (t) => t.index(['outbox_id', 'seq'], indexName(table, ['outbox_id', 'seq'])));
    },
  },
  {
    // The dispatcher's claim reads undelivered messages oldest first: this index holds only those,
    // in claim order, so a claim reads the first rows due instead of sorting the whole queue.
    name: '015_outbox_claim_order',
    async up(knex, prefix) {
      const table = `${prefix}outbox`;
      await knex.raw('create index ?? on ?? (created_ms, seq) where delivered_ms is null', [indexName(table, ['undelivered', 'created_ms', 'seq']), table]);
    },
  },
  ...READ_MIGRATIONS,
];

/**
 * Creates Vigil's tables, forward only. Each migration runs once; a second process migrating at
 * the same time waits on a lock (PostgreSQL) or on the database's write lock (SQLite). `until`
 * stops after the migration of that name (a database as an earlier version left it, for tests).
 */
export async function migrate(knex: Knex, prefix: string, until?: string): Promise<void> {
  const log = `${prefix}migrations`;
  const isPg = isPostgres(knex);
  await knex.transaction(async (trx) => {
    if (isPg) await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`vigil-migrate:${prefix}`]);
    if (!(await trx.schema.hasTable(log))) {
      await trx.schema.createTable(log, (t) => {
        t.string('name', 128).primary(indexName(log, ['pk'], 'index'));
        t.string('applied_at', 40).notNullable();
      });
    }
    const done = new Set((await trx(log).select('name')).map((r: { name: string }) => r.name));
    for (const m of MIGRATIONS) {
      if (done.has(m.name)) continue;
      await m.up(trx, prefix);
      await trx(log).insert({ name: m.name, applied_at: new Date().toISOString() });
      if (m.name === until) break;
    }
  });
}
