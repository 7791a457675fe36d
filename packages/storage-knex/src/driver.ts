import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
const NAMES = { sqlite3: 'SQLite', pg: 'PostgreSQL' } as const;

/**
 * Fails with a clear error when the database driver a store opens is not installed. The drivers
 * are optional peers: a host installs `sqlite3` or `pg` (or both) beside Vigil. The driver is
 * looked up as knex looks it up, from knex's own place.
 */
export function requireDriver(client: string): void {
  if (client !== 'sqlite3' && client !== 'pg') return; // another knex client: knex names what it lacks
  let knexRequire: NodeJS.Require;
  try {
    knexRequire = createRequire(createRequire(join(here, 'index.js')).resolve('knex'));
  } catch {
    return; // knex itself is missing: importing it has failed already, with its own message.
  }
  try {
    knexRequire.resolve(client);
  } catch (err) {
    if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND') throw err;
    throw new Error(
      `@vigil/storage-knex opens ${NAMES[client]} with the \`${client}\` package, which is not installed: run \`npm install ${client}\` in your app`,
      { cause: err },
    );
  }
}
