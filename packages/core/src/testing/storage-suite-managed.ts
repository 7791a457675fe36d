import type { ManagedResource } from '../model/managed-resource.js';
import type { StoredRecord } from '../ports/storage.js';
import { ACCOUNT_A, ACCOUNT_B, checkRawCount, checkSame, rawMatching, type StorageCase } from './storage-suite-support.js';
import { check } from './suite-types.js';

function row(overrides: Partial<StoredRecord<ManagedResource>> = {}): StoredRecord<ManagedResource> {
  return {
    project: 'shop',
    kind: 'Check',
    logicalId: 'orders-db',
    resourceId: '7d0c5a43-58f4-4b8e-9a53-4f0b0c7f3a11',
    fields: ['name', 'request', 'tags'],
    created_at: '2026-05-01T12:00:00.000Z',
    updated_at: null,
    ...overrides,
  };
}

/** The records of which resources code made (checks as code). */
export function managedResourceCases(c: StorageCase) {
  c('managed resources: a stored row reads back whole, and is written as given', async ({ storage, raw }) => {
    const stored = await storage.managedResources.put(ACCOUNT_A, row({ logicalId: 'web/login@eu:1.x', fields: [] }));
    checkSame(stored, { ...row({ logicalId: 'web/login@eu:1.x', fields: [] }), accountId: ACCOUNT_A }, 'put answers the row');
    checkSame(await storage.managedResources.list(ACCOUNT_A, 'shop'), [stored], 'list');
    check((await rawMatching(raw, 'managed_resources', 'web/login@eu:1.x', ACCOUNT_A)).length === 1, 'the raw row holds the logical id and the account');
  });

  c('managed resources: a put of a known key replaces the row in its place', async ({ storage, raw }) => {
    await storage.managedResources.put(ACCOUNT_A, row({ logicalId: 'a' }));
    await storage.managedResources.put(ACCOUNT_A, row({ logicalId: 'b', kind: 'CheckGroup', resourceId: '3' }));
    const again = row({ logicalId: 'a', resourceId: 'f0e1d2c3-0000-4000-8000-000000000001', fields: ['name'], updated_at: '2026-05-02T00:00:00.000Z' });
    await storage.managedResources.put(ACCOUNT_A, again);
    const rows = await storage.managedResources.list(ACCOUNT_A, 'shop');
    checkSame(rows.map((r) => [r.logicalId, r.resourceId, r.fields]), [['a', again.resourceId, ['name']], ['b', '3', ['name', 'request', 'tags']]], 'rows after the replace');
    await checkRawCount(raw, 'managed_resources', 2, 'one row per key');
  });

  c('managed resources: kind, project and account are each part of the key', async ({ storage }) => {
    await storage.managedResources.put(ACCOUNT_A, row());
    await storage.managedResources.put(ACCOUNT_A, row({ kind: 'Dashboard', resourceId: '1' }));
    await storage.managedResources.put(ACCOUNT_A, row({ project: 'billing', resourceId: 'other' }));
    await storage.managedResources.put(ACCOUNT_B, row({ resourceId: 'of-b' }));
    checkSame((await storage.managedResources.list(ACCOUNT_A, 'shop')).map((r) => r.kind), ['Check', 'Dashboard'], 'project shop of A');
    checkSame((await storage.managedResources.list(ACCOUNT_A, 'billing')).map((r) => r.resourceId), ['other'], 'project billing of A');
    checkSame((await storage.managedResources.list(ACCOUNT_B, 'shop')).map((r) => r.resourceId), ['of-b'], 'project shop of B');
    checkSame(await storage.managedResources.list(ACCOUNT_B, 'billing'), [], 'a project B does not have');
  });

  c('managed resources: delete removes one key of one account', async ({ storage, raw }) => {
    await storage.managedResources.put(ACCOUNT_A, row());
    await storage.managedResources.put(ACCOUNT_B, row());
    check(!(await storage.managedResources.delete(ACCOUNT_A, 'shop', 'CheckGroup', 'orders-db')), 'another kind is not deleted');
    check(await storage.managedResources.delete(ACCOUNT_A, 'shop', 'Check', 'orders-db'), 'delete answers true');
    check(!(await storage.managedResources.delete(ACCOUNT_A, 'shop', 'Check', 'orders-db')), 'a second delete answers false');
    checkSame(await storage.managedResources.list(ACCOUNT_A, 'shop'), [], 'A has none left');
    checkSame((await storage.managedResources.list(ACCOUNT_B, 'shop')).length, 1, 'B keeps its row');
    await checkRawCount(raw, 'managed_resources', 1, 'raw rows after the delete');
  });
}
