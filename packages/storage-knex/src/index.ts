/** @vigil/storage-knex: Vigil's storage on knex (SQLite by default, PostgreSQL). */
export const STORAGE_KNEX_CLIENTS = ['sqlite3', 'pg'] as const;
export type StorageKnexClient = (typeof STORAGE_KNEX_CLIENTS)[number];
