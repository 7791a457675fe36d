// The status documents the check-status service writes GET /v1/check-statuses from: every check of
// the account in creation order with its stored status as JSON text (without its account), of the
// account asked for only; and the statuses and checks the repositories read, as they were stored.
import { checkStatusFixture, tcpCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { freshStore, STORES } from './support/fresh-store.js';

const A = '0a6c1f2e-1111-4a1b-8c1d-00000000000a';
const B = '0a6c1f2e-1111-4a1b-8c1d-00000000000b';

describe.each(STORES)('check status documents (%s)', (kind) => {
  it('lists every check of the account in creation order with its stored status document, only the account\'s own', async () => {
    const storage = await freshStore(kind, 'vigil_status_docs');
    try {
      const repository = storage.checkStatuses as Required<typeof storage.checkStatuses>;
      const names = ['second "quoted" ✓ \u2028', 'first', 'bell \u0007 and \n tab \t', 'renamed', 'no runs yet'];
      const checks: Awaited<ReturnType<typeof storage.checks.insert>>[] = [];
      for (const name of names) checks.push(await storage.checks.insert(A, tcpCheckFixture({ name }) as never));
      const gone = await storage.checks.insert(A, tcpCheckFixture({ name: 'deleted' }) as never);
      const statuses = checks.slice(0, 4).map((c) => checkStatusFixture(c.id, { name: c.name === 'renamed' ? 'the old name' : c.name }));
      for (const s of statuses) await storage.checkStatuses.upsert(A, s);
      const orphan = checkStatusFixture(gone.id, { name: 'deleted' });
      await storage.checkStatuses.upsert(A, orphan);
      await storage.checks.delete(A, gone.id);
      const theirs = await storage.checks.insert(B, tcpCheckFixture({ name: 'theirs' }) as never);
      await storage.checkStatuses.upsert(B, checkStatusFixture(theirs.id, { name: 'theirs' }));
      // A later write keeps the row's place.
      statuses[1] = { ...statuses[1]!, hasFailures: true };
      await storage.checkStatuses.upsert(A, statuses[1]);

      const entries = await repository.listWithChecks(A);
      // An entry is either the stored document (stored under the check's current name: text on
      // SQLite, where this list takes its slower way) or the check with its document (on PostgreSQL
      // through a host's knex, as here, every entry: pg-copy.test.ts has Vigil's own connections).
      const ready = (e: (typeof entries)[number]): e is string | Uint8Array => typeof e === 'string' || e instanceof Uint8Array;
      const documents = entries.map((e) => (ready(e) ? Buffer.from(e).toString() : e.json));
      expect(documents).toEqual([...statuses.map((s) => JSON.stringify(s)), null]);
      entries.forEach((entry, i) => {
        if (ready(entry)) expect(JSON.parse(Buffer.from(entry).toString()).name).toBe(checks[i]!.name);
        else expect(entry).toEqual({ checkId: checks[i]!.id, name: checks[i]!.name, created_at: checks[i]!.created_at, json: documents[i] });
      });
      // The renamed check and the one without runs are written again from their parts.
      expect(entries.slice(3).map(ready)).toEqual([false, false]);
      // SQLite hands a document stored under the current name over as it is, quotes, control
      // characters and line separators in the name included.
      expect(entries.slice(0, 3).map((e) => (typeof e === 'string' ? 'string' : e instanceof Uint8Array ? 'bytes' : 'check')))
        .toEqual(Array(3).fill(kind === 'sqlite' ? 'string' : 'check'));
      const listed = await storage.checkStatuses.list(A);
      expect(listed).toEqual([...statuses, orphan].map((s) => ({ ...s, accountId: A })));
      expect(Object.keys(listed[0]!).at(-1)).toBe('accountId');
      const other = await repository.listWithChecks(B);
      expect(other.map((e) => JSON.parse(typeof e === 'string' || e instanceof Uint8Array ? Buffer.from(e).toString() : e.json!).name)).toEqual(['theirs']);
      // An account id of characters outside the Basic Multilingual Plane: the check id is cut from
      // the status's row id by characters, not UTF-16 code units.
      const wide = 'acct 🚀 é 𝄞';
      const mine = await storage.checks.insert(wide, tcpCheckFixture({ name: 'wide' }) as never);
      await storage.checkStatuses.upsert(wide, checkStatusFixture(mine.id, { name: 'wide' }));
      const wideEntries = await repository.listWithChecks(wide);
      expect(wideEntries.map((e) => JSON.parse(typeof e === 'string' || e instanceof Uint8Array ? Buffer.from(e).toString() : e.json!).checkId)).toEqual([mine.id]);
      // An account id with quotes and backslashes is read as itself.
      for (const odd of ["o'brien \\ ' -- ", "x' or '1'='1", 'back\\slash\\']) {
        const own = await storage.checks.insert(odd, tcpCheckFixture({ name: 'odd' }) as never);
        await storage.checkStatuses.upsert(odd, checkStatusFixture(own.id, { name: 'odd' }));
        const read = await repository.listWithChecks(odd);
        expect(read.map((e) => JSON.parse(typeof e === 'string' || e instanceof Uint8Array ? Buffer.from(e).toString() : e.json!).checkId)).toEqual([own.id]);
      }
      expect(await repository.listWithChecks("x' or '1'='1'")).toEqual([]);
      expect(await repository.listWithChecks('no such account')).toEqual([]);
      expect(await repository.listWithChecks('nul \0 account')).toEqual([]);
      expect(await storage.checkStatuses.list('nul \0 account')).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('hands the documents over as one run of UTF-8 bytes where every check has a status stored under its current name', async () => {
    const storage = await freshStore(kind, 'vigil_status_bytes');
    try {
      const repository = storage.checkStatuses as Required<typeof storage.checkStatuses>;
      const statuses = [];
      for (const name of ['orders-db', 'quote " and \\ ✓ \u2028', 'new\nline']) {
        const check = await storage.checks.insert(A, tcpCheckFixture({ name }) as never);
        statuses.push(checkStatusFixture(check.id, { name }));
      }
      // Stored in another order than the checks were made: the list keeps the checks' order.
      for (const s of [...statuses].reverse()) await storage.checkStatuses.upsert(A, s);
      const entries = await repository.listWithChecks(A);
      const text = entries.map((e) => (typeof e === 'string' || e instanceof Uint8Array ? Buffer.from(e).toString() : e.json)).join(',');
      expect(text).toBe(statuses.map((s) => JSON.stringify(s)).join(','));
      if (kind === 'sqlite') expect(entries.length === 1 && entries[0] instanceof Uint8Array).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it('reads a check by its account and id only, as it was stored', async () => {
    const storage = await freshStore(kind, 'vigil_check_get');
    try {
      const check = await storage.checks.insert(A, tcpCheckFixture({ name: 'orders-db' }) as never);
      const read = await storage.checks.get(A, check.id);
      expect(read).toEqual(check);
      expect(Object.keys(read!).slice(-2)).toEqual(['id', 'accountId']);
      expect(await storage.checks.get(B, check.id)).toBeNull();
      expect(await storage.checks.get(A, `${check.id}\0`)).toBeNull();
      expect(await storage.checks.get(A, 'missing')).toBeNull();
    } finally {
      await storage.close();
    }
  });
});
