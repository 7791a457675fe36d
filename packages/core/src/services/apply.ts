import * as v from 'valibot';
import { isVigilError, NotFoundError, VigilError, type VigilErrorCode } from '../errors.js';
import type { AlertChannelSubscription, EnvironmentVariable } from '../model/shared.js';
import {
  DEFAULT_PROJECT,
  ProjectNameSchema,
  RESOURCE_KINDS,
  type ManagedResource,
  type ResourceKind,
} from '../model/managed-resource.js';
import { parse } from '../model/parse.js';
import type { AlertChannelService } from './alert-channels.js';
import { ConstructValidationError, ConstructValidator, resourceKey, type ConstructIssue, type DesiredResource } from './apply-constructs.js';
import { changedFields, displayValue, sameValue } from './apply-diff.js';
import type { CheckGroupService } from './check-groups.js';
import type { CheckService } from './checks.js';
import type { DashboardService } from './dashboards.js';
import { nowIso, type ServiceDeps } from './deps.js';
import type { MaintenanceWindowService } from './maintenance-windows.js';
import { openVariables } from './masking.js';

export type PlanAction = 'create' | 'update' | 'delete' | 'unchanged';

/** One field an update changes: the stored value and the one the construct wants (secrets masked). */
export interface PlanChange {
  field: string;
  from: unknown;
  to: unknown;
  /** Set when the values shown are masked and the difference lies in a secret. */
  note?: string;
}

/** One step of a plan, in the order apply carries them out. */
export interface PlanEntry {
  action: PlanAction;
  kind: ResourceKind;
  logicalId: string;
  /** A check's checkType, an alert channel's type. */
  type?: string;
  /** The resource's id: the stored one, or the new one once created (absent from a dry run's creates). */
  id?: string | number;
  /** The resource's name (a dashboard's header). */
  name?: string;
  /** What an update changes. */
  changes?: PlanChange[];
  /** Why, where it is not plain: a check whose type changes is deleted and made again. */
  reason?: string;
}

export interface ApplyOptions {
  /** Delete the resources this project made whose constructs are gone. Default false. */
  prune?: boolean;
  /** Work out the plan and write nothing. Default false. */
  dryRun?: boolean;
  /**
   * The code base these constructs come from (default `default`). Logical ids are unique within a
   * project, and pruning deletes only what this project made, so two repositories can each
   * manage their own part of one account.
   */
  project?: string;
  /** Called before and after each step that writes, for progress output. */
  onProgress?: (progress: ApplyProgress) => void;
}

export interface ApplyProgress {
  phase: 'start' | 'done';
  /** Steps done so far (not counting unchanged ones). */
  done: number;
  total: number;
  entry: PlanEntry;
}

export interface ApplyPlan {
  accountId: string;
  project: string;
  dryRun: boolean;
  prune: boolean;
  /** Every step, in the order carried out: creates and updates by kind (channels, groups, checks, windows, dashboards), then deletes in reverse. */
  entries: PlanEntry[];
  summary: Record<PlanAction, number>;
  /** Resources this project made whose constructs are gone; kept, because prune is off. */
  orphans: PlanEntry[];
}

/**
 * A step failed part-way through an apply; `completed` lists the steps carried out before it.
 * `leftBehind` lists resources replaced by new ones of another type whose delete did not run:
 * they still exist, no longer managed by the project, for you to delete.
 */
export class ApplyError extends VigilError {
  constructor(
    readonly entry: PlanEntry,
    readonly completed: PlanEntry[],
    cause: unknown,
    readonly leftBehind: PlanEntry[] = [],
  ) {
    const code: VigilErrorCode = isVigilError(cause) ? cause.code : 'INTERNAL';
    const status = isVigilError(cause) ? cause.statusCode : 500;
    const reason = cause instanceof Error ? cause.message : String(cause);
    const left = leftBehind.map((e) => `${e.kind} "${e.logicalId}" (${e.id})`).join(', ');
    super(code, status, `Could not ${entry.action} ${entry.kind} "${entry.logicalId}": ${reason}${left ? `. Replaced but not deleted, delete by hand: ${left}` : ''}`, { cause });
    this.name = 'ApplyError';
  }
}

/** What apply reads of a stored resource, with secrets opened so they compare with the construct's. */
interface StoredResource {
  id: string | number;
  type: string | null;
  name: string;
  values: Record<string, unknown>;
}

interface Step {
  entry: PlanEntry;
  desired?: DesiredResource;
  row?: ManagedResource;
  /** Fields an update sends. */
  fields?: string[];
  /** The record is dropped without an entry: its resource is already gone. */
  forget?: boolean;
  /** The resource a new one (of another type) replaced: deleted, while the record stays with its successor. */
  replaced?: boolean;
}

export interface ApplyServices {
  checks: CheckService;
  checkGroups: CheckGroupService;
  alertChannels: AlertChannelService;
  maintenanceWindows: MaintenanceWindowService;
  dashboards: DashboardService;
}

const NUMERIC_IDS: Record<ResourceKind, boolean> = { AlertChannel: true, CheckGroup: true, Check: false, MaintenanceWindow: true, Dashboard: true };
const pending = (kind: ResourceKind, logicalId: string) => `(new ${kind} "${logicalId}")`;

/**
 * Checks as code: brings an account's resources in line with constructs, keyed by logical id.
 * Validates every construct first (nothing is written when one is invalid), works out a plan of
 * creates, updates and (with prune) deletes, and carries it out through the same services the API
 * uses. Applying the same constructs again finds everything unchanged.
 */
export class ApplyService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly services: ApplyServices,
  ) {}

  /** The plan alone: `apply` with `dryRun`. */
  plan(accountId: string, constructs: readonly unknown[], options: Omit<ApplyOptions, 'dryRun' | 'onProgress'> = {}): Promise<ApplyPlan> {
    return this.apply(accountId, constructs, { ...options, dryRun: true });
  }

  async apply(accountId: string, constructs: readonly unknown[], options: ApplyOptions = {}): Promise<ApplyPlan> {
    const project = parse(v.object({ project: ProjectNameSchema }), { project: options.project ?? DEFAULT_PROJECT }).project;
    const prune = options.prune ?? false;
    const dryRun = options.dryRun ?? false;
    if (!(await this.deps.storage.accounts.get(accountId))) throw new NotFoundError('Account not found');
    const { desired, issues } = await new ConstructValidator(this.deps, accountId).validate(constructs);
    const rows = await this.deps.storage.managedResources.list(accountId, project);
    issues.push(...(await this.urlIssues(desired, rows)));
    if (issues.length > 0) throw new ConstructValidationError(issues);
    const stored = new Map<string, StoredResource | null>();
    for (const row of rows) stored.set(resourceKey(row.kind, row.logicalId), await this.read(accountId, row));

    const ids = new Map<string, string | number>();
    const { steps, replaced } = this.forward(desired, rows, stored, ids);
    const { deletes, orphans } = this.backward(desired, rows, stored, prune);
    // A replaced resource goes once its successor is made and everything that referred to it refers to that one.
    steps.push(...replaced, ...deletes);
    await this.checkGroupsEmpty(accountId, steps, ids);

    const plan: ApplyPlan = {
      accountId,
      project,
      dryRun,
      prune,
      entries: steps.filter((s) => !s.forget).map((s) => s.entry),
      summary: { create: 0, update: 0, delete: 0, unchanged: 0 },
      orphans,
    };
    for (const e of plan.entries) plan.summary[e.action]++;
    if (dryRun) return plan;
    await this.execute(accountId, project, steps, ids, options.onProgress);
    return plan;
  }

  /**
   * Creates and updates, by kind: what a resource refers to is made first. A resource whose type
   * changes is made anew, and the one it replaces is deleted afterwards (`replaced`), so that a
   * create that fails leaves the old one in place.
   */
  private forward(
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
        const want = this.withReferences(d, ids, true);
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
  private backward(desired: DesiredResource[], rows: ManagedResource[], stored: Map<string, StoredResource | null>, prune: boolean) {
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
  private async urlIssues(desired: DesiredResource[], rows: ManagedResource[]): Promise<ConstructIssue[]> {
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
  private async checkGroupsEmpty(accountId: string, steps: Step[], ids: Map<string, string | number>): Promise<void> {
    const issues: ConstructIssue[] = [];
    const deletedChecks = new Set(steps.filter((s) => s.entry.action === 'delete' && s.entry.kind === 'Check').map((s) => s.entry.id));
    const movedChecks = new Map<string | number, unknown>();
    for (const s of steps) {
      if (s.desired?.kind === 'Check' && s.entry.id !== undefined && (s.fields ?? s.desired.fields).includes('groupId')) {
        movedChecks.set(s.entry.id, this.withReferences(s.desired, ids, true).groupId);
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

  private async execute(
    accountId: string,
    project: string,
    steps: Step[],
    ids: Map<string, string | number>,
    onProgress: ApplyOptions['onProgress'],
  ): Promise<void> {
    const total = steps.filter((s) => s.entry.action !== 'unchanged' && !s.forget).length;
    const completed: PlanEntry[] = [];
    let done = 0;
    for (const [at, step] of steps.entries()) {
      const { entry } = step;
      if (step.forget) {
        await this.forget(accountId, project, step.row!);
        continue;
      }
      if (entry.action === 'unchanged') {
        // Nothing to write, unless the set of fields it manages changed.
        if (!sameValue(step.row!.fields, step.desired!.fields)) await this.remember(accountId, project, step.desired!, step.row!.resourceId, step.row);
        continue;
      }
      onProgress?.({ phase: 'start', done, total, entry });
      try {
        if (entry.action === 'create') await this.create(accountId, project, step, ids);
        else if (entry.action === 'update') await this.update(accountId, project, step, ids);
        else await this.remove(accountId, project, step);
      } catch (err) {
        // Old resources whose successors exist but that were not deleted: their records name the successors now.
        const made = new Set(completed.filter((e) => e.action === 'create').map((e) => resourceKey(e.kind, e.logicalId)));
        const leftBehind = steps.slice(at).filter((s) => s.replaced && made.has(resourceKey(s.entry.kind, s.entry.logicalId))).map((s) => s.entry);
        throw new ApplyError(entry, completed, err, leftBehind);
      }
      completed.push(entry);
      done++;
      onProgress?.({ phase: 'done', done, total, entry });
    }
  }

  private async create(accountId: string, project: string, step: Step, ids: Map<string, string | number>): Promise<void> {
    const d = step.desired!;
    const body = this.withReferences(d, ids, false);
    const s = this.services;
    const noAutoAssign = { autoAssignAlerts: false };
    let id: string | number;
    let subs: AlertChannelSubscription[] | null = null;
    switch (d.kind) {
      case 'AlertChannel':
        id = (await s.alertChannels.create(accountId, body)).id;
        break;
      case 'CheckGroup': {
        const group = await s.checkGroups.create(accountId, body, noAutoAssign);
        id = group.id;
        subs = group.alertChannelSubscriptions;
        break;
      }
      case 'Check': {
        const check = await s.checks.create(accountId, d.type!, body, noAutoAssign);
        id = check.id;
        subs = check.alertChannelSubscriptions;
        break;
      }
      case 'MaintenanceWindow':
        id = (await s.maintenanceWindows.create(accountId, body)).id;
        break;
      case 'Dashboard':
        id = (await s.dashboards.create(accountId, body)).id;
        break;
    }
    ids.set(resourceKey(d.kind, d.logicalId), id);
    step.entry.id = id;
    // The record first: should the fix-up below fail, the next apply still finds what it made.
    await this.remember(accountId, project, d, String(id));
    // Channels that subscribe new checks themselves are taken off a construct that names its channels.
    if (subs && d.channels !== null && !sameValue(subs, body.alertChannelSubscriptions)) {
      const fix = { alertChannelSubscriptions: body.alertChannelSubscriptions };
      if (d.kind === 'Check') await s.checks.update(accountId, id, fix, { checkType: d.type! });
      else await s.checkGroups.update(accountId, id, { name: body.name, ...fix });
    }
  }

  private async update(accountId: string, project: string, step: Step, ids: Map<string, string | number>): Promise<void> {
    const d = step.desired!;
    const full = this.withReferences(d, ids, false);
    const body = Object.fromEntries(step.fields!.map((f) => [f, full[f]]));
    const id = step.entry.id!;
    const s = this.services;
    switch (d.kind) {
      case 'AlertChannel':
        await s.alertChannels.update(accountId, id, body);
        break;
      case 'CheckGroup':
        await s.checkGroups.update(accountId, id, { name: full.name, ...body });
        break;
      case 'Check':
        await s.checks.update(accountId, id, body, { checkType: d.type! });
        break;
      case 'MaintenanceWindow':
        await s.maintenanceWindows.update(accountId, id, { name: full.name, startsAt: full.startsAt, endsAt: full.endsAt, repeatUnit: full.repeatUnit, ...body });
        break;
      case 'Dashboard':
        await s.dashboards.update(accountId, id, body);
        break;
    }
    await this.remember(accountId, project, d, String(id), step.row);
  }

  private async remove(accountId: string, project: string, step: Step): Promise<void> {
    const { kind, id } = step.entry;
    const s = this.services;
    try {
      if (kind === 'AlertChannel') await s.alertChannels.delete(accountId, id);
      else if (kind === 'CheckGroup') await s.checkGroups.delete(accountId, id);
      else if (kind === 'Check') await s.checks.delete(accountId, id);
      else if (kind === 'MaintenanceWindow') await s.maintenanceWindows.delete(accountId, id);
      else await s.dashboards.delete(accountId, id);
    } catch (err) {
      // Gone already (deleted by hand since the plan was read): the goal is reached.
      if (!(isVigilError(err) && err.code === 'NOT_FOUND')) throw err;
    }
    // The record of a replaced resource already names its successor.
    if (!step.replaced) await this.forget(accountId, project, step.row!);
  }

  private async remember(accountId: string, project: string, d: DesiredResource, resourceId: string, row?: ManagedResource): Promise<void> {
    const now = nowIso(this.deps);
    const same = row?.resourceId === resourceId;
    await this.deps.storage.managedResources.put(accountId, {
      project,
      kind: d.kind,
      logicalId: d.logicalId,
      resourceId,
      fields: d.fields,
      created_at: same ? row!.created_at : now,
      updated_at: same ? now : null,
    });
  }

  private async forget(accountId: string, project: string, row: ManagedResource): Promise<void> {
    await this.deps.storage.managedResources.delete(accountId, project, row.kind, row.logicalId);
  }

  /**
   * The construct's body with its references as ids: known ids, and for resources this apply has
   * yet to make either a placeholder (`allowPending`, for the plan) or a failure (a bug in the order).
   */
  private withReferences(d: DesiredResource, ids: Map<string, string | number>, allowPending: boolean): Record<string, unknown> {
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

  private change(d: DesiredResource, field: string, from: unknown, to: unknown): PlanChange {
    const secretFields = d.kind === 'AlertChannel' && d.type !== null ? this.deps.transports.get(d.type)?.secretFields : undefined;
    const shownFrom = displayValue(d.kind, d.type, field, from, secretFields);
    const shownTo = displayValue(d.kind, d.type, field, to, secretFields);
    return { field, from: shownFrom, to: shownTo, ...(sameValue(shownFrom, shownTo) ? { note: 'a secret value changes' } : {}) };
  }

  private async read(accountId: string, row: ManagedResource): Promise<StoredResource | null> {
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
        if (check.checkType === 'BROWSER') values.environmentVariables = open(check.environmentVariables);
        if (check.checkType === 'HEARTBEAT') {
          const { pingToken: _token, ...heartbeat } = check.heartbeat;
          values.heartbeat = heartbeat;
        }
        return { id: check.id, type: check.checkType, name: check.name, values };
      }
      case 'CheckGroup': {
        const group = await storage.checkGroups.get(accountId, id as number);
        if (!group) return null;
        return { id: group.id, type: null, name: group.name, values: { ...group, environmentVariables: open(group.environmentVariables) } };
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

function nameOf(body: Record<string, unknown>): string | undefined {
  for (const field of ['name', 'header']) if (typeof body[field] === 'string') return body[field] as string;
  const config = body.config as { name?: unknown; address?: unknown; url?: unknown } | undefined;
  for (const value of [config?.name, config?.address, config?.url]) if (typeof value === 'string') return value;
  return undefined;
}
