import * as v from 'valibot';
import { CodeSchema, LocationSchema, NameSchema, RuntimeIdSchema, TagsSchema, TimestampSchema } from './primitives.js';
import {
  AlertChannelSubscriptionSchema,
  AlertSettingsSchema,
  ApiCheckDefaultsSchema,
  EnvironmentVariablesSchema,
  GroupRetryStrategySchema,
  integerAtLeast,
  modelObject,
  updateEntries,
  type EntriesOf,
  type UpdateEntries,
} from './shared.js';

const checkGroupEntries = {
  name: NameSchema,
  activated: v.optional(v.boolean(), true),
  muted: v.optional(v.boolean(), false),
  tags: v.optional(TagsSchema, () => []),
  locations: v.optional(v.array(LocationSchema), () => []),
  concurrency: v.optional(integerAtLeast(1), 3),
  apiCheckDefaults: v.optional(ApiCheckDefaultsSchema, {}),
  browserCheckDefaults: v.optional(v.nullable(CodeSchema), null),
  runtimeId: v.optional(v.nullable(RuntimeIdSchema), null),
  environmentVariables: v.optional(EnvironmentVariablesSchema, () => []),
  alertChannelSubscriptions: v.optional(v.array(AlertChannelSubscriptionSchema), () => []),
  setupSnippetId: v.optional(v.nullable(integerAtLeast(1)), null),
  tearDownSnippetId: v.optional(v.nullable(integerAtLeast(1)), null),
  localSetupScript: v.optional(v.nullable(CodeSchema), null),
  localTearDownScript: v.optional(v.nullable(CodeSchema), null),
  privateLocations: v.optional(v.nullable(v.array(NameSchema)), () => []),
  runParallel: v.optional(v.nullable(v.boolean()), false),
  alertSettings: v.optional(AlertSettingsSchema, {}),
  // FALLBACK: member checks keep their own strategy.
  retryStrategy: v.optional(v.nullable(GroupRetryStrategySchema), 'FALLBACK'),
  useGlobalAlertSettings: v.optional(v.nullable(v.boolean()), true),
  doubleCheck: v.optional(v.boolean(), false),
};

/** A group's entries, by name (an interface): its schemas' declarations name them instead of repeating them. */
export interface CheckGroupEntries extends CheckGroupEntriesShape {}
type CheckGroupEntriesShape = typeof checkGroupEntries;

const groupRecordEntries = {
  id: v.number(),
  accountId: v.string(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};
/** What a stored group adds to a group's entries, by name. */
export interface CheckGroupRecordEntries extends CheckGroupRecordShape {}
type CheckGroupRecordShape = typeof groupRecordEntries;

const groupResponseEntries = {
  id: v.number(),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};
/** What a group response adds to a group's entries, by name. */
export interface CheckGroupResponseEntries extends CheckGroupResponseShape {}
type CheckGroupResponseShape = typeof groupResponseEntries;

export const CheckGroupCreateSchema = modelObject<EntriesOf<CheckGroupEntries>>(checkGroupEntries);
export type CheckGroupCreate = v.InferOutput<typeof CheckGroupCreateSchema>;

/** PUT /v2/check-groups/{id}: the spec requires name in this body too. */
export const CheckGroupUpdateSchema = modelObject<
  Omit<UpdateEntries<EntriesOf<CheckGroupEntries>>, 'name'> & { name: typeof NameSchema }
>({ ...updateEntries(checkGroupEntries), name: NameSchema });
export type CheckGroupUpdate = v.InferOutput<typeof CheckGroupUpdateSchema>;

export const CheckGroupSchema = v.object<EntriesOf<CheckGroupEntries> & EntriesOf<CheckGroupRecordEntries>>({
  ...checkGroupEntries,
  ...groupRecordEntries,
});
export type CheckGroup = v.InferOutput<typeof CheckGroupSchema>;

export const CheckGroupResponseSchema = v.object<EntriesOf<CheckGroupEntries> & EntriesOf<CheckGroupResponseEntries>>({
  ...checkGroupEntries,
  ...groupResponseEntries,
});
export type CheckGroupResponse = v.InferOutput<typeof CheckGroupResponseSchema>;
