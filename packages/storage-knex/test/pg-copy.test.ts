// PostgreSQL reads as a binary COPY (the status list's, on Vigil's own connections): the values come
// back as the bytes the server sent, NULLs and literals as written, however many messages the rows
// take; a server error, at once or part way through, rejects and leaves the connection usable; a
// read for a request whose client hung up is cancelled on the server. The status list hands a
// document stored under its check's current name over as those bytes, and any other entry as the
// check with its document; on a host's knex it reads rows through knex.
import { createVigil, runForRequest } from '@vigil/core';
import { checkStatusFixture, tcpCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import type { KnexStorage } from '../src/index.js';
import { CopyTuples, copyBinary, pgLiteral } from '../src/pg-copy.js';
// PG_URL: VIGIL_PG_URL; with VIGIL_REQUIRE_PG set and no VIGIL_PG_URL this import throws, so the file fails instead of skipping.
import { freshStore, onOwnedPgStore, PG_URL } from './support/fresh-store.js';
import { holdTableLock } from './support/hold-write.js';

const ACCOUNT = '0a6c1f2e-1111-4a1b-8c1d-000000000001';

async function texts(read: Promise<Buffer | null>): Promise<(string | null)[][]> {
  const bytes = await read;
  if (!bytes) throw new Error('no COPY was made');
  const tuples = new CopyTuples(bytes);
  const rows: (string | null)[][] = [];
  while (tuples.next()) rows.push([tuples.field().text(), tuples.field().text()]);
  return rows;
}

type Entry = Awaited<ReturnType<NonNullable<KnexStorage['checkStatuses']['listWithChecks']>>>[number];
const kindOf = (e: Entry) => (typeof e === 'string' ? 'text' : e instanceof Uint8Array ? 'bytes' : 'check');
const documentOf = (e: Entry) => (typeof e === 'string' || e instanceof Uint8Array ? Buffer.from(e).toString() : e.json);

describe.runIf(PG_URL)('a binary COPY read on PostgreSQL', () => {
  it('hands over text values as their bytes, NULLs as NULL, and literals as written, with standard_conforming_strings on or off', async () => {
    // One connection, so the setting below applies to the reads after it.
    await onOwnedPgStore('vigil_copy', { pool: { min: 0, max: 1 } }, async (storage) => {
      const odd = ["it's", 'back\\slash', "'; select 1; --", "\\'; select 2; --", 'ünïcödé ✓ 🚀 \u2028', ''];
      const literals = odd.map((v) => `(${pgLiteral(v)}, null::text)`).join(', ');
      for (const setting of ['on', 'off']) {
        await storage.knex.raw(`set standard_conforming_strings = ${setting}`);
        expect(await texts(copyBinary(storage.knex, `select * from (values ${literals}) v(a, b)`))).toEqual(odd.map((v) => [v, null]));
      }
      // An empty result is the header and the trailer alone.
      expect(await texts(copyBinary(storage.knex, 'select 1::text, 2::text where false'))).toEqual([]);
      expect(() => new CopyTuples(Buffer.from('not a copy'))).toThrow(/binary COPY/);
    });
  });

  it('reads rows that take many messages and more than its first buffer whole, in order', async () => {
    await onOwnedPgStore('vigil_copy', {}, async (storage) => {
      const rows = await texts(copyBinary(storage.knex, 'select i::text, repeat(md5(i::text), 20) from generate_series(1, 3000) i'));
      expect(rows.length).toBe(3000);
      expect(rows.every(([i, text], n) => i === String(n + 1) && text!.length === 640)).toBe(true);
    });
  });

  it('rejects with the server\'s error, at once or part way through the rows, or on rows it did not ask for, and the connection serves the next read', async () => {
    await onOwnedPgStore('vigil_copy', { pool: { min: 0, max: 1 } }, async (storage) => {
      for (let i = 0; i < 3; i++) {
        await expect(copyBinary(storage.knex, 'select * from no_such_table')).rejects.toMatchObject({ code: '42P01' });
        // Rows before the error were sent already: none of them is handed over.
        await expect(copyBinary(storage.knex, 'select (1 / (i - 2000))::text, repeat(md5(i::text), 20) from generate_series(1, 4000) i')).rejects.toMatchObject({ code: '22012' });
        expect(await texts(copyBinary(storage.knex, "select 'ok', null::text"))).toEqual([['ok', null]]);
      }
      // A statement that answers with rows after the COPY rejects (the driver would otherwise call
      // a row handler the read does not have, outside any promise).
      await expect(copyBinary(storage.knex, "select 'a'::text) to stdout; select 1 --")).rejects.toThrow(/answered with rows/);
      expect(await texts(copyBinary(storage.knex, "select 'ok', null::text"))).toEqual([['ok', null]]);
    });
  });

  it('is cancelled on the server when the request\'s client hangs up, and the status list works after', async () => {
    await onOwnedPgStore('vigil_copy', {}, async (storage, prefix) => {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      await storage.checkStatuses.upsert(ACCOUNT, checkStatusFixture(check.id, { name: 'orders-db' }));
      const list = () => storage.checkStatuses.listWithChecks!(ACCOUNT);
      // A transaction holding the statuses table's lock makes the list wait on the server.
      const lock = await holdTableLock(storage, `${prefix}check_statuses`);
      const abort = new AbortController();
      const read = runForRequest(abort.signal, list);
      // Aborted once a COPY waits on that transaction's lock (at most 10 s).
      for (let tries = 0; ; tries++) {
        const waiting = await storage.knex.raw("select 1 from pg_stat_activity where ? = any(pg_blocking_pids(pid)) and query like 'COPY%'", [lock.pid]);
        if (waiting.rows.length > 0) break;
        if (tries > 1000) throw new Error('no COPY waited on the lock');
        await new Promise((r) => setTimeout(r, 10));
      }
      abort.abort();
      await expect(read).rejects.toMatchObject({ code: '57014' });
      await lock.release();
      expect((await list()).map((e) => JSON.parse(documentOf(e)!).checkId)).toEqual([check.id]);
    });
  });
});

describe.runIf(PG_URL)('the status list on PostgreSQL', () => {
  it('hands each document stored under its check\'s current name over as the bytes the server sent, and any other as the check with its document', async () => {
    await onOwnedPgStore('vigil_copy_list', {}, async (storage, prefix) => {
      const repository = storage.checkStatuses as Required<typeof storage.checkStatuses>;
      const names = ['quote " and \\ ✓ \u2028', 'bell \u0007 and \n tab \t', 'orders', 'renamed', 'no runs yet', 'name made null'];
      const checks = [];
      for (const name of names) checks.push(await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name }) as never));
      // Stored under: the current name; the current name; a longer name it is the start of; an old
      // name; nothing; the name the check had before its column was emptied.
      const storedAs = [names[0], names[1], 'orders-db', 'the old name', null, 'name made null'];
      const statuses = checks.map((c, i) => (storedAs[i] === null ? null : checkStatusFixture(c.id, { name: storedAs[i]! })));
      for (const s of [...statuses].reverse()) if (s) await storage.checkStatuses.upsert(ACCOUNT, s);
      await storage.knex(`${prefix}checks`).where({ id: checks[5]!.id }).update({ name: null });

      const entries = await repository.listWithChecks(ACCOUNT);
      expect(entries.map(kindOf)).toEqual(['bytes', 'bytes', 'check', 'check', 'check', 'check']);
      expect(entries.map(documentOf)).toEqual(statuses.map((s) => (s ? JSON.stringify(s) : null)));
      expect(entries.slice(2).map((e) => (e as { checkId: string; name: string }).name)).toEqual(['orders', 'renamed', 'no runs yet', 'null']);
      expect(entries.slice(2).map((e) => (e as { checkId: string }).checkId)).toEqual(checks.slice(2).map((c) => c.id));
      expect((entries[4] as { created_at: string }).created_at).toBe(checks[4]!.created_at);
      // The service writes the list from them as JSON.stringify writes the statuses it lists.
      const vigil = createVigil({ storage, secretKey: 'b'.repeat(64) });
      const listed = await vigil.checkStatuses.list(ACCOUNT);
      expect(listed.map((s) => s.name)).toEqual([...names.slice(0, 5), 'null']);
      expect(await vigil.checkStatuses.listJson(ACCOUNT)).toBe(JSON.stringify(listed));
      // An account id with quotes and backslashes is read as itself: it goes into the COPY as a literal.
      for (const odd of ["o'brien \\ ' -- ", "x' or '1'='1", 'back\\slash\\']) {
        const own = await storage.checks.insert(odd, tcpCheckFixture({ name: 'odd' }) as never);
        await storage.checkStatuses.upsert(odd, checkStatusFixture(own.id, { name: 'odd' }));
        const read = await repository.listWithChecks(odd);
        expect(read.map(kindOf)).toEqual(['bytes']);
        expect(read.map((e) => JSON.parse(documentOf(e)!).checkId)).toEqual([own.id]);
      }
      expect(await repository.listWithChecks("x' or '1'='1'")).toEqual([]);
      expect(await repository.listWithChecks('no such account')).toEqual([]);
    });
  });

  it('reads rows through knex on a host\'s knex, and on a client in pipeline mode', async () => {
    const hosts = await freshStore('postgres', 'vigil_copy_host');
    try {
      const check = await hosts.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      await hosts.checkStatuses.upsert(ACCOUNT, checkStatusFixture(check.id, { name: 'orders-db' }));
      const queries: string[] = [];
      hosts.knex.on('query', (q: { sql: string }) => queries.push(q.sql));
      const entries = await hosts.checkStatuses.listWithChecks!(ACCOUNT);
      expect(entries.map(kindOf)).toEqual(['check']);
      // Every query went through the host's knex, where its own listeners see it.
      expect(queries.filter((q) => /check_statuses/.test(q))).toHaveLength(1);
    } finally {
      await hosts.close();
    }
    await onOwnedPgStore('vigil_copy_pipe', { connection: { connectionString: PG_URL, pipeline: true } } as never, async (storage) => {
      const check = await storage.checks.insert(ACCOUNT, tcpCheckFixture({ name: 'orders-db' }) as never);
      await storage.checkStatuses.upsert(ACCOUNT, checkStatusFixture(check.id, { name: 'orders-db' }));
      expect(await copyBinary(storage.knex, "select 'x'")).toBeNull();
      const entries = await storage.checkStatuses.listWithChecks!(ACCOUNT);
      expect(entries.map(kindOf)).toEqual(['check']);
      expect(JSON.parse(documentOf(entries[0]!)!).checkId).toBe(check.id);
    });
  });
});
