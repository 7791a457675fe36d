import { hasOwnVariables } from '../model/check.js';
import type { EnvironmentVariable } from '../model/shared.js';
import { RESOURCE_KINDS, type ManagedResource, type ResourceKind } from '../model/managed-resource.js';
import { ConstructValidationError, resourceKey, type ConstructIssue, type DesiredResource } from './apply-constructs.js';
import { changedFields, displayValue, sameValue } from './apply-diff.js';
import type { ApplyServices, PlanChange, PlanEntry, Step, StoredResource } from './apply-types.js';
import type { ServiceDeps } from './deps.js';
import { openVariables } from './masking.js';
import { openApiRequest } from './sealing.js';

const NUMERIC_IDS: Record<ResourceKind, boolean> = { AlertChannel: true, CheckGroup: true, Check: false, MaintenanceWindow: true, Dashboard: true };
const pending = (kind: ResourceKind, logicalId: string) => `(new ${kind} "${logicalId}")`;

/**
 * The planning half of apply: reads what the project made before and works out the steps that
 * bring it in line with the constructs, writing nothing.
 */
export class ApplyPlanner {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly services: ApplyServices,
  ) {}

  /**
   * Creates and updates, by kind: what a resource refers to is made first. A resource whose type
   * changes is made anew, and the one it replaces is deleted afterwards (`replaced`), so that a
   * create that fails leaves the old one in place.
   */
  forward(
    desired: DesiredResource[],
    rows: ManagedResource[],
    stored: Map<string, StoredResource | null>,
    ids: Map<string, string | number>,
  ): { steps: Step[]; replaced: Step[] } {
    const rowOf = new Map(rows.map((r) => [resourceKey(r.kind, r.logicalId), r]));
    const steps: Step[] = [];
    const replaced: Step[] = [];
    for (const kind of RESOURCE_KINDS) {
      for (const d of desired.filter((x) => x.kind === kind)) {
        const key = resourceKey(kind, d.logicalId);
        const row = rowOf.get(key);
        const current = row ? stored.get(key) ?? null : null;
        const base = { kind, logicalId: d.logicalId, name: nameOf(d.body), ...(d.type === null ? {} : { type: d.type }) };
        if (!current) {
          steps.push({ entry: { action: 'create', ...base, ...(row ? { reason: 'the resource it made before is gone' } : {}) }, desired: d, ...(row ? { row } : {}) });
          continue;
        }
        if (d.type !== null && current.type !== d.type) {
          const field = kind === 'Check' ? 'checkType' : 'type';
          const reason = `its ${field} changes from ${current.type} to ${d.type}, which needs a new resource`;
          steps.push({ entry: { action: 'create', ...base, reason }, desired: d, row: row! });
          replaced.push({ entry: { action: 'delete', kind, logicalId: d.logicalId, id: current.id, name: current.name, type: current.type ?? undefined, reason }, row: row!, replaced: true });
          continue;
        }
        ids.set(key, current.id);
        // A field the construct set before and no longer sets goes back to its default.
        const fields = [...new Set([...d.fields, ...(row!.fields ?? []).filter((f) => d.body[f] !== undefined)])];
        const want = withReferences(d, ids, true);
        const changed = changedFields(want, current.values, fields);
        if (changed.length === 0) {
          steps.push({ entry: { action: 'unchanged', ...base, id: current.id }, desired: d, row: row! });
          continue;
        }
        const changes = changed.map((field) => this.change(d, field, current.values[field], want[field]));
        steps.push({ entry: { action: 'update', ...base, id: current.id, changes }, desired: d, row: row!, fields });
      }
    }
    return { steps, replaced };
  }

  /** Records whose constructs are gone: deleted with prune (last made, first deleted), else reported. */
  backward(desired: DesiredResource[], rows: ManagedResource[], stored: Map<string, StoredResource | null>, prune: boolean) {
    const wanted = new Set(desired.map((d) => resourceKey(d.kind, d.logicalId)));
    const deletes: Step[] = [];
    const orphans: PlanEntry[] = [];
    for (const kind of [...RESOURCE_KINDS].reverse()) {
      for (const row of rows.filter((r) => r.kind === kind).reverse()) {
        const key = resourceKey(kind, row.logicalId);
        if (wanted.has(key)) continue;
        const current = stored.get(key);
        const entry: PlanEntry = { action: 'delete', kind, logicalId: row.logicalId };
        if (!current) {
          deletes.push({ entry, row, forget: true });
          continue;
        }
        Object.assign(entry, { id: current.id, name: current.name, ...(current.type === null ? {} : { type: current.type }) });
        if (prune) deletes.push({ entry, row });
        else orphans.push({ ...entry, action: 'unchanged', reason: 'its construct is gone; apply with prune to delete it' });
      }
    }
    return { deletes, orphans };
  }

  /** Dashboard URLs (unique across accounts) that are free, or the dashboard's own already. */
  async urlIssues(desired: DesiredResource[], rows: ManagedResource[]): Promise<ConstructIssue[]> {
    const issues: ConstructIssue[] = [];
    const urls = new Map<string, string>();
    for (const d of desired) {
      if (d.kind !== 'Dashboard') continue;
      const row = rows.find((r) => r.kind === 'Dashboard' && r.logicalId === d.logicalId);
      const ownId = row ? Number(row.resourceId) : null;
      for (const field of ['customUrl', 'customDomain'] as const) {
        const value = d.body[field];
        if (typeof value !== 'string') continue;
        const other = urls.get(`${field}:${value}`);
        if (other) issues.push({ construct: d.label, path: field, message: `"${value}" is also the ${field} of ${other}` });
        urls.set(`${field}:${value}`, d.label);
        const taken = field === 'customUrl'
          ? await this.deps.storage.dashboards.findByCustomUrl(value)
          : await this.deps.storage.dashboards.findByCustomDomain(value);
        if (taken && taken.id !== ownId) issues.push({ construct: d.label, path: field, message: `"${value}" is already taken by another dashboard` });
      }
    }
    return issues;
  }

  /** A group is deleted only when no check stays in it: the store refuses otherwise, half-way through. */
  async checkGroupsEmpty(accountId: string, steps: Step[], ids: Map<string, string | number>): Promise<void> {
    const issues: ConstructIssue[] = [];
    const deletedChecks = new Set(steps.filter((s) => s.entry.action === 'delete' && s.entry.kind === 'Check').map((s) => s.entry.id));
    const movedChecks = new Map<string | number, unknown>();
    for (const s of steps) {
      if (s.desired?.kind === 'Check' && s.entry.id !== undefined && (s.fields ?? s.desired.fields).includes('groupId')) {
        movedChecks.set(s.entry.id, withReferences(s.desired, ids, true).groupId);
      }
    }
    for (const s of steps) {
      if (s.entry.action !== 'delete' || s.entry.kind !== 'CheckGroup' || s.forget) continue;
      const groupId = s.entry.id as number;
      const staying = (await this.deps.storage.checks.listByGroup(accountId, groupId))
        .filter((c) => !deletedChecks.has(c.id) && (!movedChecks.has(c.id) || movedChecks.get(c.id) === groupId));
      if (staying.length > 0) {
        issues.push({
          construct: `CheckGroup "${s.entry.logicalId}"`,
          path: '',
          message: `cannot be deleted: it still holds ${staying.map((c) => `"${c.name}"`).join(', ')}, which this project does not delete or move; move or delete them first`,
        });
      }
    }
    if (issues.length > 0) throw new ConstructValidationError(issues);
  }

  change(d: DesiredResource, field: string, from: unknown, to: unknown): PlanChange {
    const secretFields = d.kind === 'AlertChannel' && d.type !== null ? this.deps.transports.get(d.type)?.secretFields : undefined;
    const shownFrom = displayValue(d.kind, d.type, field, from, secretFields);
    const shownTo = displayValue(d.kind, d.type, field, to, secretFields);
    return { field, from: shownFrom, to: shownTo, ...(sameValue(shownFrom, shownTo) ? { note: 'a secret value changes' } : {}) };
  }

  async read(accountId: string, row: ManagedResource): Promise<StoredResource | null> {
    const { storage, secretBox } = this.deps;
    const numeric = NUMERIC_IDS[row.kind];
    const id = numeric ? Number(row.resourceId) : row.resourceId;
    if (numeric && !Number.isSafeInteger(id)) return null;
    const open = (vars: EnvironmentVariable[] | null) => (vars === null ? null : openVariables(vars, secretBox));
    switch (row.kind) {
      case 'Check': {
        const check = await storage.checks.get(accountId, id as string);
        if (!check) return null;
        const values: Record<string, unknown> = { ...check };
        if (hasOwnVariables(check)) values.environmentVariables = open(check.environmentVariables);
        if (check.checkType === 'API') values.request = openApiRequest(check.request, secretBox);
        if (check.checkType === 'HEARTBEAT') {
          const { pingToken: _token, ...heartbeat } = check.heartbeat;
          values.heartbeat = heartbeat;
        }
        return { id: check.id, type: check.checkType, name: check.name, values };
      }
      case 'CheckGroup': {
        const group = await storage.checkGroups.get(accountId, id as number);
        if (!group) return null;
        const values = { ...group, environmentVariables: open(group.environmentVariables), apiCheckDefaults: openApiRequest(group.apiCheckDefaults, secretBox) };
        return { id: group.id, type: null, name: group.name, values };
      }
      case 'AlertChannel': {
        if (!(await storage.alertChannels.get(accountId, id as number))) return null;
        const channel = await this.services.alertChannels.getForDelivery(accountId, id as number);
        const values: Record<string, unknown> = { ...channel };
        return { id: channel.id, type: channel.type, name: nameOf(values) ?? channel.type, values };
      }
      case 'MaintenanceWindow': {
        const w = await storage.maintenanceWindows.get(accountId, id as number);
        return w ? { id: w.id, type: null, name: w.name, values: { ...w } } : null;
      }
      case 'Dashboard': {
        const dash = await storage.dashboards.get(accountId, id as number);
        return dash ? { id: dash.id, type: null, name: dash.header, values: { ...dash } } : null;
      }
    }
  }
}

/**
 * The construct's body with its references as ids: known ids, and for resources this apply has
 * yet to make either a placeholder (`allowPending`, for the plan) or a failure (a bug in the order).
 */
export function withReferences(d: DesiredResource, ids: Map<string, string | number>, allowPending: boolean): Record<string, unknown> {
  const body = { ...d.body };
  const idOf = (kind: ResourceKind, logicalId: string) => {
    const id = ids.get(resourceKey(kind, logicalId));
    if (id !== undefined) return id;
    if (allowPending) return pending(kind, logicalId);
    throw new Error(`${kind} "${logicalId}" was to be made before ${d.label}`);
  };
  if (d.group !== null) body.groupId = idOf('CheckGroup', d.group);
  if (d.channels !== null) {
    body.alertChannelSubscriptions = d.channels.map((c) => ({ alertChannelId: idOf('AlertChannel', c.logicalId), activated: c.activated }));
  }
  return body;
}

function nameOf(body: Record<string, unknown>): string | undefined {
  for (const field of ['name', 'header']) if (typeof body[field] === 'string') return body[field] as string;
  // A chat channel's URL, its credential, names it masked as a response shows it.
  const type = typeof body.type === 'string' ? body.type : null;
  const config = displayValue('AlertChannel', type, 'config', body.config) as { name?: unknown; address?: unknown; url?: unknown } | undefined;
  for (const value of [config?.name, config?.address, config?.url]) if (typeof value === 'string') return value;
  return undefined;
}
