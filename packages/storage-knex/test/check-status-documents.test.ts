// The status documents the check-status service writes GET /v1/check-statuses from: each stored
// status as its JSON text (without its account), with its check's id, in creation order, of the
// account asked for only; and the statuses and checks the repositories read, as they were stored.
import { checkStatusFixture, tcpCheckFixture } from '@vigil/core/testing';
import { describe, expect, it } from 'vitest';
import { freshStore, STORES } from './support/fresh-store.js';

const A = '0a6c1f2e-1111-4a1b-8c1d-00000000000a';
const B = '0a6c1f2e-1111-4a1b-8c1d-00000000000b';

describe.each(STORES)('check status documents (%s)', (kind) => {
  it('lists each stored status as the JSON text of the status without its account, in creation order, only the account\'s own', async () => {
    const storage = await freshStore(kind, 'vigil_status_docs');
    try {
      const repository = storage.checkStatuses as Required<typeof storage.checkStatuses>;
      const statuses = ['second "quoted" ✓', 'first', 'third'].map((name, i) => checkStatusFixture(`check-${i}`, { name }));
      for (const s of statuses) await storage.checkStatuses.upsert(A, s);
      await storage.checkStatuses.upsert(B, checkStatusFixture('check-0', { name: 'theirs' }));
      // A later write keeps the row's place.
      await storage.checkStatuses.upsert(A, { ...statuses[0]!, hasFailures: true });

      const docs = await repository.listDocuments(A);
      expect(docs.map((d) => d.checkId)).toEqual(['check-0', 'check-1', 'check-2']);
      expect(docs.map((d) => d.json)).toEqual([{ ...statuses[0]!, hasFailures: true }, statuses[1], statuses[2]].map((s) => JSON.stringify(s)));
      const listed = await storage.checkStatuses.list(A);
      expect(listed).toEqual([{ ...statuses[0]!, hasFailures: true }, statuses[1], statuses[2]].map((s) => ({ ...s, accountId: A })));
      expect(Object.keys(listed[0]!).at(-1)).toBe('accountId');
      expect((await repository.listDocuments(B)).map((d) => JSON.parse(d.json).name)).toEqual(['theirs']);
      expect(await repository.listDocuments('no such account')).toEqual([]);
      expect(await repository.listDocuments('nul \0 account')).toEqual([]);
      expect(await storage.checkStatuses.list('nul \0 account')).toEqual([]);
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
