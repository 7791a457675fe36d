/*
 * The migrations that give reads an index or a column of their own, so that what they read does
 * not grow with what is stored: lookups made before an account is known, reads of the first rows
 * in an order, and the times a page or a run filters documents by.
 */
import { incidentClosedMs, type Incident, type MaintenanceWindow, type StatusPageIncident } from '@vigil/core';
import type { Knex } from 'knex';
import { indexName } from './doc-tables.js';
import { incidentStoppedMs } from './pages.js';
import { windowEndsMs } from './resources.js';

export interface Migration {
  name: string;
  up: (knex: Knex | Knex.Transaction, prefix: string) => Promise<void>;
}

export const READ_MIGRATIONS: Migration[] = [
  {
    // Lookups made before the account is known, and a public form's limit: without these, each
    // read the whole table or the whole account (an API key's prefix on every request with a key
    // not in the cache, a custom domain on every page request for a host, an account's pending
    // subscriptions on every subscription). Retention finds an account's old heartbeat pings by time.
    name: '016_lookup_indexes',
    async up(knex, prefix) {
      const index = async (name: string, columns: string[]) => {
        const table = `${prefix}${name}`;
        await knex.schema.alterTable(table, (t) => t.index(columns, indexName(table, ['lookup', ...columns])));
      };
      await index('api_keys', ['prefix']);
      await index('dashboards', ['custom_domain']);
      await index('status_page_subscribers', ['account_id', 'sent_ms']);
      await index('heartbeat_pings', ['account_id', 'at_ms']);
    },
  },
  {
    // Reads of the first rows in an order that found them among all of a check's, a page's or a
    // channel's rows and sorted those: a session's results (once a session run, and a session's
    // page), a page's subscribers 500 at a time by id (a notice to every subscriber), a check's
    // alerts and a channel's attempts newest first. The two indexes these supersede go.
    name: '017_ordered_reads',
    async up(knex, prefix) {
      const results = `${prefix}check_results`;
      // Scheduled runs, most full rows, belong to no session: only rows of a session are indexed.
      await knex.raw('create index ?? on ?? (account_id, check_id, check_session_id, started_ms) where check_session_id is not null', [indexName(results, ['session', 'started_ms']), results]);
      const subscribers = `${prefix}status_page_subscribers`;
      await knex.schema.alterTable(subscribers, (t) => {
        t.dropIndex(['account_id', 'status_page_id'], indexName(subscribers, ['account_id', 'status_page_id']));
        t.index(['account_id', 'status_page_id', 'id'], indexName(subscribers, ['account_id', 'status_page_id', 'id']));
      });
      const outbox = `${prefix}outbox`;
      await knex.schema.alterTable(outbox, (t) => t.index(['check_id', 'created_ms', 'seq'], indexName(outbox, ['check_id', 'created_ms', 'seq'])));
      const attempts = `${prefix}delivery_attempts`;
      await knex.schema.alterTable(attempts, (t) => {
        t.dropIndex(['account_id', 'alert_channel_id', 'seq'], indexName(attempts, ['account_id', 'alert_channel_id', 'seq']));
        t.index(['account_id', 'alert_channel_id', 'at', 'seq'], indexName(attempts, ['account_id', 'alert_channel_id', 'at', 'seq']));
      });
    },
  },
  {
    // A status page shows the incidents open, or closed within its days: when each closed (null
    // while open), so that a view reads those alone and not every incident of the account.
    name: '018_incident_closed',
    up: (knex, prefix) => addDerivedColumn(knex, `${prefix}status_page_incidents`, 'seq', 'closed_ms', (doc) => incidentClosedMs(doc as StatusPageIncident)),
  },
  {
    // Every run reads its account's maintenance windows: when each is over for good (null while it
    // repeats for ever), so that a run reads those that may be in force, not every window.
    name: '019_maintenance_window_ends',
    up: (knex, prefix) => addDerivedColumn(knex, `${prefix}maintenance_windows`, 'id', 'ends_ms', (doc) => windowEndsMs(doc as MaintenanceWindow)),
  },
  {
    // A public dashboard shows its incidents open, or stopped within the last days: when each
    // stopped, so that a view leaves the older ones unread (found along the dashboard's index).
    name: '020_incident_stopped',
    up: (knex, prefix) => addDerivedColumn(knex, `${prefix}incidents`, 'seq', 'stopped_ms', (doc) => incidentStoppedMs(doc as Incident), false),
  },
  {
    // An HTTPS run looks up the client certificate for its target's host: each certificate's host
    // in a column of its own, so that the run reads that host's and not every certificate.
    name: '021_client_certificate_hosts',
    async up(knex, prefix) {
      const table = `${prefix}client_certificates`;
      await knex.schema.alterTable(table, (t) => {
        t.string('host', 255).nullable();
        t.index(['account_id', 'host'], indexName(table, ['account_id', 'host']));
      });
      for (const row of (await knex(table).select('seq', 'data')) as { seq: number; data: string }[]) {
        await knex(table).where('seq', row.seq).update({ host: String((JSON.parse(row.data) as { host: unknown }).host) });
      }
    },
  },
];

/**
 * A document table's new column of a time derived from each document (null for none), indexed
 * after the account unless `indexed` is false, and filled in for the documents stored before.
 */
async function addDerivedColumn(
  knex: Knex | Knex.Transaction,
  table: string,
  key: 'id' | 'seq',
  column: string,
  derive: (doc: unknown) => number | null,
  indexed = true,
): Promise<void> {
  await knex.schema.alterTable(table, (t) => {
    t.bigInteger(column).nullable();
    if (indexed) t.index(['account_id', column], indexName(table, ['account_id', column]));
  });
  for (const row of (await knex(table).select(key, 'data')) as Record<string, string | number>[]) {
    const value = derive(JSON.parse(String(row.data)));
    if (value !== null) await knex(table).where(key, row[key]!).update({ [column]: value });
  }
}
