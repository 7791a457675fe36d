// Queries made for a request whose client hung up stop: one not yet sent is not sent, and one under
// way is cancelled (SQLite: the connection is interrupted; PostgreSQL: pg_cancel_backend).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outsideRequest, runForRequest } from '@vigil/core';
import { afterAll, describe, expect, it } from 'vitest';
import { knexStorage, type KnexStorage } from '../src/index.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { PG_URL } from './support/fresh-store.js';
const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';
const dir = mkdtempSync(join(tmpdir(), 'vigil-cancel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LONG_SQLITE = 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000) select count(*) from c';

async function abortedWithin(storage: KnexStorage, sql: string, ms: number): Promise<{ error: unknown; tookMs: number }> {
  const abort = new AbortController();
  const started = Date.now();
  // Awaited inside the scope: a knex query starts when it is awaited.
  const query = runForRequest(abort.signal, async () => await storage.knex.raw(sql));
  setTimeout(() => abort.abort(), 300);
  const error = await Promise.race([
    query.then(() => 'finished', (err: unknown) => err),
    new Promise((r) => setTimeout(r, ms, 'still running')),
  ]);
  return { error, tookMs: Date.now() - started };
}

describe('a query for a request whose client hung up', () => {
  it('is not sent once the request is abandoned', async () => {
    // Read on the writer, whose queries this test sees.
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'not-sent.sqlite'), readers: 0 });
    await storage.migrate();
    const sent: string[] = [];
    storage.knex.on('query', (q: { sql: string }) => sent.push(q.sql));
    const abort = new AbortController();
    abort.abort();
    await expect(runForRequest(abort.signal, () => storage.checks.listSummaries(ACCOUNT))).rejects.toMatchObject({ name: 'AbortError' });
    expect(sent).toEqual([]);
    // The same read outside a request, or for a request still waiting, is made.
    expect(await storage.checks.listSummaries(ACCOUNT)).toEqual([]);
    expect(await runForRequest(new AbortController().signal, () => storage.checks.listSummaries(ACCOUNT))).toEqual([]);
    // Work a request starts that must finish whoever asked for it leaves the request's scope.
    expect(await runForRequest(abort.signal, () => outsideRequest(() => storage.checks.listSummaries(ACCOUNT)))).toEqual([]);
    expect(sent.length).toBe(3);
    await storage.close();
  });

  it('is interrupted on SQLite, and the connection serves the next query', async () => {
    const storage = knexStorage({ client: 'sqlite3', connection: join(dir, 'interrupt.sqlite') });
    await storage.migrate();
    const { error, tookMs } = await abortedWithin(storage, LONG_SQLITE, 10_000);
    expect(error).toMatchObject({ code: 'SQLITE_INTERRUPT' });
    expect(tookMs).toBeLessThan(5_000);
    expect(await storage.checks.listSummaries(ACCOUNT)).toEqual([]);
    await storage.close();
  });

  it.runIf(PG_URL)('is cancelled on PostgreSQL: the server stops it', async () => {
    const storage = knexStorage({ client: 'pg', connection: PG_URL, tablePrefix: `cancel_${randomBytes(4).toString('hex')}_` });
    const tag = `vigil-cancel-${randomBytes(4).toString('hex')}`;
    const { error, tookMs } = await abortedWithin(storage, `select pg_sleep(30), '${tag}'`, 10_000);
    expect(error).toMatchObject({ code: '57014' });
    expect(tookMs).toBeLessThan(5_000);
    const running = await storage.knex('pg_stat_activity').where('query', 'like', `%${tag}%`).whereNot('query', 'like', '%pg_stat_activity%').count({ n: '*' });
    expect(Number(running[0]!.n)).toBe(0);
    await storage.close();
  });

  it.runIf(PG_URL)('a cancel asked for as the query ends never stops the next query on its connection', async () => {
    // One connection: the next query runs on the one whose request hung up.
    const storage = knexStorage({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 }, tablePrefix: `cancel_${randomBytes(4).toString('hex')}_` });
    for (let i = 0; i < 5; i++) {
      const abort = new AbortController();
      const quick = runForRequest(abort.signal, async () => await storage.knex.raw('select 1'));
      // The hang-up comes while the quick query is under way; its cancel needs a connection of its own.
      setImmediate(() => abort.abort());
      await quick.catch(() => {});
      await expect(storage.knex.raw('select pg_sleep(0.2)')).resolves.toBeDefined();
    }
    await storage.close();
  });
});
