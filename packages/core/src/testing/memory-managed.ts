import type { ManagedResource } from '../model/managed-resource.js';
import type { ManagedResourceRepository } from '../ports/storage.js';
import type { MemoryTable } from './memory-table.js';

const key = (accountId: string, project: string, kind: string, logicalId: string) => JSON.stringify([accountId, project, kind, logicalId]);

/** Rows keyed by (account, project, kind, logical id); a put of a known key keeps its place. */
export function managedResourceRepository(table: MemoryTable<ManagedResource>): ManagedResourceRepository {
  return {
    async list(accountId, project) {
      return table.select((r) => r.accountId === accountId && r.project === project);
    },
    async put(accountId, row) {
      return table.put(key(accountId, row.project, row.kind, row.logicalId), { ...row, accountId });
    },
    async delete(accountId, project, kind, logicalId) {
      return table.remove(key(accountId, project, kind, logicalId));
    },
  };
}
