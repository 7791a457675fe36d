import { isVigilError } from '../errors.js';
import type { AlertChannelSubscription } from '../model/shared.js';
import type { ManagedResource } from '../model/managed-resource.js';
import { resourceKey, type DesiredResource } from './apply-constructs.js';
import { sameValue } from './apply-diff.js';
import { withReferences } from './apply-plan.js';
import { ApplyError, type ApplyOptions, type ApplyServices, type PlanEntry, type Step } from './apply-types.js';
import { nowIso, type ServiceDeps } from './deps.js';

/**
 * The writing half of apply: carries out a plan's steps in order through the services the API
 * uses, and keeps the project's records of what it made.
 */
export class ApplyExecutor {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly services: ApplyServices,
  ) {}

  async execute(
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
    const body = withReferences(d, ids, false);
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
    const full = withReferences(d, ids, false);
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
}
