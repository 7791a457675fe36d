/** @vigil/storage-knex: Vigil's storage on knex (SQLite by default, PostgreSQL). */
export { knexStorage, registerKnexStorage, type KnexStorage, type KnexStorageOptions } from './storage.js';
export { migrate } from './migrations.js';
export type { HourlyRollup } from './retention.js';
export { reclaimSqliteSpace } from './sqlite-space.js';
