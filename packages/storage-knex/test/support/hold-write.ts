import type { KnexStorage } from '../../src/index.js';

/** Holds a write transaction open on the store's writer until `release` is called. */
export async function holdWrite(storage: KnexStorage): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const begun = new Promise<void>((r) => (started = r));
  const done = storage.knex.transaction(async (trx) => {
    await trx('vigil_checks').where('id', 'none').update({ name: 'x' });
    started();
    await released;
  });
  await begun;
  return { release: async () => { release(); await done; } };
}

/**
 * PostgreSQL: holds `table`'s exclusive lock in an open transaction until `release` is called (a read
 * of it waits on the server meanwhile); `pid` is the server process holding it.
 */
export async function holdTableLock(storage: KnexStorage, table: string): Promise<{ pid: number; release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: (pid: number) => void;
  const taken = new Promise<number>((r) => (locked = r));
  const done = storage.knex.transaction(async (trx) => {
    await trx.raw('lock table ?? in access exclusive mode', [table]);
    locked(Number((await trx.raw('select pg_backend_pid() as pid')).rows[0].pid));
    await released;
  });
  const pid = await taken;
  return { pid, release: async () => { release(); await done; } };
}
