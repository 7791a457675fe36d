// PostgreSQL reads as a binary COPY (the status list's): the values come back as the bytes the
// server sent, NULLs and literals as written, however many messages the rows take; a server error
// rejects and leaves the connection usable; a read for a request whose client hung up is cancelled
// on the server.
import { runForRequest } from '@vigil/core';
import { checkStatusFixture, tcpCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { CopyTuples, copyBinary, pgLiteral } from '../src/pg-copy.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { freshStore, PG_URL } from './support/fresh-store.js';
import { holdTableLock } from './support/hold-write.js';

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';

function texts(bytes: Buffer): (string | null)[][] {
  const tuples = new CopyTuples(bytes);
  const rows: (string | null)[][] = [];
  while (tuples.next()) rows.push([tuples.field().text(), tuples.field().text()]);
  return rows;
}

describe.runIf(PG_URL)('a binary COPY read on PostgreSQL', () => {
  it('hands over text values as their bytes, NULLs as NULL, and literals as written', async () => {
    const storage = await freshStore('postgres', 'vigil_copy');
    try {
      const odd = ["it's", 'back\\slash', "'; select 1; --", 'ünïcödé ✓ 🚀 \u2028', ''];
      const literals = odd.map((v) => `(${pgLiteral(v)}, null::text)`).join(', ');
      const rows = texts(await copyBinary(storage.knex, `select * from (values ${literals}) v(a, b)`));
      expect(rows).toEqual(odd.map((v) => [v, null]));
      // An empty result is the header and the trailer alone.
      expect(texts(await copyBinary(storage.knex, 'select 1::text, 2::text where false'))).toEqual([]);
      expect(() => new CopyTuples(Buffer.from('not a copy'))).toThrow(/binary COPY/);
    } finally {
      await storage.close();
    }
  });

  it('reads rows that take many messages and more than its first buffer whole, in order', async () => {
    const storage = await freshStore('postgres', 'vigil_copy');
    try {
      const bytes = await copyBinary(storage.knex, "select i::text, repeat(md5(i::text), 20) from generate_series(1, 3000) i");
      expect(bytes.length).toBeGreaterThan(3000 * 640);
      const rows = texts(bytes);
      expect(rows.length).toBe(3000);
      expect(rows[2999]![0]).toBe('3000');
      expect(rows.every(([i, text], n) => i === String(n + 1) && text!.length === 640)).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it('rejects with the server\'s error, and the connection serves the next read', async () => {
    const storage = await freshStore('postgres', 'vigil_copy');
    try {
      // Every read below goes through the pool's connections in turn; an error must not leave one stuck.
      for (let i = 0; i < 6; i++) {
        await expect(copyBinary(storage.knex, 'select * from no_such_table')).rejects.toMatchObject({ code: '42P01' });
        await expect(copyBinary(storage.knex, 'select (1 / 0)::text')).rejects.toMatchObject({ code: '22012' });
        expect(texts(await copyBinary(storage.knex, "select 'ok', null::text"))).toEqual([['ok', null]]);
      }
    } finally {
      await storage.close();
    }
  });

  it('is cancelled on the server when the request\'s client hangs up, and the status list works after', async () => {
    const storage = await freshStore('postgres', 'vigil_copy');
    try {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      await storage.checkStatuses.upsert(ACCOUNT, checkStatusFixture(check.id, { name: 'orders-db' }));
      const list = () => storage.checkStatuses.listWithChecks!(ACCOUNT);
      // A transaction holding the statuses table's lock makes the list wait on the server.
      const tables = await storage.knex.raw("select tablename from pg_tables where tablename like '%check_statuses' and schemaname = current_schema()");
      const table = (tables.rows as { tablename: string }[])[0]!.tablename;
      const lock = await holdTableLock(storage, table);
      const abort = new AbortController();
      const read = runForRequest(abort.signal, list);
      // Aborted once the COPY waits on the lock.
      for (;;) {
        const waiting = await storage.knex.raw("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'COPY%' and strpos(query, ?) > 0", [table]);
        if (waiting.rows.length > 0) break;
        await new Promise((r) => setImmediate(r));
      }
      abort.abort();
      await expect(read).rejects.toMatchObject({ code: '57014' });
      await lock.release();
      const entries = await list();
      expect(entries.map((e) => JSON.parse(Buffer.from(e as Uint8Array).toString()).checkId)).toEqual([check.id]);
    } finally {
      await storage.close();
    }
  });
});
