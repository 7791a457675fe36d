import * as v from 'valibot';
import { NotFoundError } from '../errors.js';
import { DEFAULT_PROJECT, ProjectNameSchema } from '../model/managed-resource.js';
import { parse } from '../model/parse.js';
import { ConstructValidationError, ConstructValidator, resourceKey } from './apply-constructs.js';
import { ApplyExecutor } from './apply-execute.js';
import { ApplyPlanner } from './apply-plan.js';
import type { ApplyOptions, ApplyPlan, ApplyServices, StoredResource } from './apply-types.js';
import type { ServiceDeps } from './deps.js';

export { ApplyError } from './apply-types.js';
export type { ApplyOptions, ApplyPlan, ApplyProgress, ApplyServices, PlanAction, PlanChange, PlanEntry } from './apply-types.js';

/**
 * Checks as code: brings an account's resources in line with constructs, keyed by logical id.
 * Validates every construct first (nothing is written when one is invalid), works out a plan of
 * creates, updates and (with prune) deletes, and carries it out through the same services the API
 * uses. Applying the same constructs again finds everything unchanged.
 */
export class ApplyService {
  private readonly planner: ApplyPlanner;
  private readonly executor: ApplyExecutor;

  constructor(
    private readonly deps: ServiceDeps,
    services: ApplyServices,
  ) {
    this.planner = new ApplyPlanner(deps, services);
    this.executor = new ApplyExecutor(deps, services);
  }

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
    issues.push(...(await this.planner.urlIssues(desired, rows)));
    if (issues.length > 0) throw new ConstructValidationError(issues);
    const stored = new Map<string, StoredResource | null>();
    for (const row of rows) stored.set(resourceKey(row.kind, row.logicalId), await this.planner.read(accountId, row));

    const ids = new Map<string, string | number>();
    const { steps, replaced } = this.planner.forward(desired, rows, stored, ids);
    const { deletes, orphans } = this.planner.backward(desired, rows, stored, prune);
    // A replaced resource goes once its successor is made and everything that referred to it refers to that one.
    steps.push(...replaced, ...deletes);
    await this.planner.checkGroupsEmpty(accountId, steps, ids);

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
    await this.executor.execute(accountId, project, steps, ids, options.onProgress);
    return plan;
  }
}
