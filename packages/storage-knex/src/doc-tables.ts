/*
 * The document tables: a key, an account column, a JSON document and the columns lookups use.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * An index name that stays unique within PostgreSQL's 63-character limit, whatever the table
 * prefix: a long name keeps its start and ends in a hash of the whole.
 */
export function indexName(table: string, columns: string[], kind: 'index' | 'unique' = 'index'): string {
  const full = `${table}_${columns.join('_')}_${kind}`;
  if (full.length <= 63) return full;
  return `${full.slice(0, 50)}_${createHash('sha256').update(full).digest('hex').slice(0, 12)}`;
}

type ColumnType = 'string' | 'integer' | 'bigint' | 'boolean' | 'float';
interface Column {
  name: string;
  type: ColumnType;
  unique?: boolean;
  index?: boolean;
}

/** A document table: its key, account column, JSON document and lookup columns. */
interface DocTableDef {
  name: string;
  numericId: boolean;
  global?: boolean;
  columns?: Column[];
}

export const DOC_TABLES: DocTableDef[] = [
  { name: 'accounts', numericId: false, global: true },
  { name: 'api_keys', numericId: false, columns: [{ name: 'prefix', type: 'string', index: true }] },
  {
    name: 'checks',
    numericId: false,
    columns: [
      { name: 'group_id', type: 'integer', index: true },
      { name: 'ping_token', type: 'string', unique: true },
    ],
  },
  { name: 'check_groups', numericId: true },
  { name: 'alert_channels', numericId: true },
  {
    name: 'alert_subscriptions',
    numericId: true,
    columns: [
      { name: 'alert_channel_id', type: 'integer', index: true },
      { name: 'check_id', type: 'string', index: true },
      { name: 'group_id', type: 'integer', index: true },
    ],
  },
  {
    name: 'dashboards',
    numericId: true,
    columns: [
      { name: 'custom_url', type: 'string', unique: true },
      { name: 'custom_domain', type: 'string', index: true },
    ],
  },
  { name: 'maintenance_windows', numericId: true },
  { name: 'incidents', numericId: false, columns: [{ name: 'dashboard_id', type: 'integer', index: true }] },
  { name: 'incident_updates', numericId: false, columns: [{ name: 'incident_id', type: 'string', index: true }] },
  { name: 'status_pages', numericId: false, columns: [{ name: 'url', type: 'string', unique: true }] },
  { name: 'services', numericId: false },
  { name: 'status_page_incidents', numericId: false, columns: [{ name: 'created_ms', type: 'bigint', index: true }] },
  { name: 'status_page_incident_updates', numericId: false, columns: [{ name: 'incident_id', type: 'string', index: true }] },
  { name: 'client_certificates', numericId: false },
  {
    name: 'error_groups',
    numericId: false,
    columns: [
      { name: 'check_id', type: 'string', index: true },
      { name: 'error_hash', type: 'string', index: true },
    ],
  },
  {
    name: 'test_session_error_groups',
    numericId: false,
    columns: [
      { name: 'project_id', type: 'string', index: true },
      { name: 'error_hash', type: 'string', index: true },
    ],
  },
  { name: 'check_sessions', numericId: false },
  { name: 'check_statuses', numericId: false },
  { name: 'alert_states', numericId: false },
];

function addColumn(t: Knex.CreateTableBuilder, table: string, c: Column) {
  const col =
    c.type === 'string' ? t.string(c.name, 255)
    : c.type === 'integer' ? t.integer(c.name)
    : c.type === 'bigint' ? t.bigInteger(c.name)
    : c.type === 'float' ? t.double(c.name)
    : t.boolean(c.name);
  col.nullable();
  if (c.unique) t.unique([c.name], { indexName: indexName(table, [c.name], 'unique') });
}

export async function createDocTable(knex: Knex | Knex.Transaction, prefix: string, def: DocTableDef): Promise<void> {
  const table = `${prefix}${def.name}`;
  await knex.schema.createTable(table, (t) => {
    if (def.numericId) t.increments('id').primary();
    else {
      t.increments('seq').primary();
      t.string('id', 255).notNullable();
      t.unique(['id'], { indexName: indexName(table, ['id'], 'unique') });
    }
    if (!def.global) {
      t.string('account_id', 64).notNullable();
      t.index(['account_id'], indexName(table, ['account_id']));
    }
    t.text('data').notNullable();
    for (const c of def.columns ?? []) addColumn(t, table, c);
    for (const c of def.columns ?? []) {
      const cols = def.global ? [c.name] : ['account_id', c.name];
      if (c.index) t.index(cols, indexName(table, cols));
    }
  });
}

/** A document table added after 001_documents, by a migration of its own. */
export const SNIPPETS_TABLE: DocTableDef = { name: 'snippets', numericId: true };
export const SUBSCRIBERS_TABLE: DocTableDef = {
  name: 'status_page_subscribers',
  numericId: false,
  columns: [
    { name: 'status_page_id', type: 'string', index: true },
    { name: 'page_email', type: 'string', unique: true },
    { name: 'token_hash', type: 'string', unique: true },
    { name: 'email_hash', type: 'string' },
    { name: 'confirmed', type: 'boolean' },
    { name: 'sent_ms', type: 'bigint' },
  ],
};
