import { isVigilError, VigilError, type VigilErrorCode } from '../errors.js';
import type { ManagedResource, ResourceKind } from '../model/managed-resource.js';
import type { AlertChannelService } from './alert-channels.js';
import type { DesiredResource } from './apply-constructs.js';
import type { CheckGroupService } from './check-groups.js';
import type { CheckService } from './checks.js';
import type { DashboardService } from './dashboards.js';
import type { MaintenanceWindowService } from './maintenance-windows.js';

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
export interface StoredResource {
  id: string | number;
  type: string | null;
  name: string;
  values: Record<string, unknown>;
}

/** One step of the work: its plan entry and what carrying it out needs. */
export interface Step {
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
