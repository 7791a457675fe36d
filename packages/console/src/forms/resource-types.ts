import type * as v from 'valibot';
import type { Vigil } from '@vigil/core';
import type { FormOptions } from './fields.js';

export type ResourceId = string | number;

/** What the console lists, shows, creates, edits and deletes, through Vigil's services. */
export interface FormResource {
  /** URL-safe and unique: `check-tcp`, `alert-channel-email`, `maintenance-window`. */
  key: string;
  /** Its name in headings: "TCP check". */
  label: string;
  /** What sort of resource it is, for grouping several keys (every check type is a `check`). */
  group: 'check' | 'check-group' | 'alert-channel' | 'alert-subscriptions' | 'maintenance-window' | 'dashboard' | 'status-page'
    | 'status-page-incident' | 'status-page-service';
  /** The check type or channel type of a `check` or `alert-channel` key. */
  type?: string;
  /** The fields of the create and the edit form (every field the resource has, required ones marked). */
  createSchema: v.GenericSchema;
  /** What the service's update takes (a PUT: given fields over stored ones); absent when there is no edit. */
  updateSchema?: v.GenericSchema;
  /** Labels, help texts, string kinds and left-out fields of its forms. */
  formOptions: FormOptions;
  /** A stored resource (as `get` answers it) as the edit form's values. */
  values(record: unknown): unknown;
  list(vigil: Vigil, accountId: string, query?: unknown): Promise<{ items: unknown[]; total?: number }>;
  get(vigil: Vigil, accountId: string, id: ResourceId): Promise<unknown>;
  create?(vigil: Vigil, accountId: string, body: unknown): Promise<unknown>;
  update?(vigil: Vigil, accountId: string, id: ResourceId, body: unknown): Promise<unknown>;
  delete?(vigil: Vigil, accountId: string, id: ResourceId): Promise<void>;
}
