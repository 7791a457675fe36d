import type { ManagedResource, ManagedResourceRepository, ResourceKind } from '@vigil/core';
import { dbCall } from './errors.js';
import type { TableContext } from './table.js';

interface Row {
  account_id: string;
  project: string;
  kind: string;
  logical_id: string;
  resource_id: string;
  fields: string;
  created_at: string;
  updated_at: string | null;
}

const KEY = ['account_id', 'project', 'kind', 'logical_id'];

/** Which resources code made: one row per (account, project, kind, logical id), upserted on that key. */
export function managedResourceRepository(ctx: TableContext): ManagedResourceRepository {
  const name = `${ctx.prefix}managed_resources`;
  const run = dbCall(ctx.database);
  const fromRow = (r: Row): ManagedResource => ({
    accountId: r.account_id,
    project: r.project,
    kind: r.kind as ResourceKind,
    logicalId: r.logical_id,
    resourceId: r.resource_id,
    fields: JSON.parse(r.fields) as string[],
    created_at: r.created_at,
    updated_at: r.updated_at,
  });
  return {
    list: (accountId, project) => run(async () => {
      const rows = (await ctx.knex(name).where({ account_id: accountId, project }).orderBy('seq')) as Row[];
      return rows.map(fromRow);
    }),
    put: (accountId, row) => run(async () => {
      const values: Row = {
        account_id: accountId,
        project: row.project,
        kind: row.kind,
        logical_id: row.logicalId,
        resource_id: row.resourceId,
        fields: JSON.stringify(row.fields),
        created_at: row.created_at,
        updated_at: row.updated_at,
      };
      // The row of a known key is replaced where it stands (its seq, so the order, stays).
      await ctx.knex(name).insert(values).onConflict(KEY).merge(['resource_id', 'fields', 'created_at', 'updated_at']);
      return fromRow(values);
    }),
    delete: (accountId, project, kind, logicalId) => run(async () => {
      const n = await ctx.knex(name).where({ account_id: accountId, project, kind, logical_id: logicalId }).delete();
      return n > 0;
    }),
  };
}
