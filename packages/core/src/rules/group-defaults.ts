import type { AlertSettingsInput } from './alerting.js';

interface VariableInput {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
}

interface SubscriptionInput {
  alertChannelId: number;
  activated: boolean;
}

export interface MemberCheckInput {
  activated: boolean;
  muted: boolean;
  tags: string[];
  locations: string[] | null;
  privateLocations: string[] | null;
  runtimeId?: string | null;
  environmentVariables?: VariableInput[] | null;
  alertChannelSubscriptions: SubscriptionInput[];
  useGlobalAlertSettings: boolean;
  alertSettings: AlertSettingsInput;
}

export interface GroupInput {
  activated: boolean;
  muted: boolean;
  tags: string[];
  locations: string[] | null;
  privateLocations: string[] | null;
  runtimeId: string | null;
  environmentVariables: VariableInput[] | null;
  alertChannelSubscriptions: SubscriptionInput[];
  useGlobalAlertSettings: boolean | null;
  alertSettings: AlertSettingsInput;
}

export interface EffectiveCheckSettings {
  activated: boolean;
  muted: boolean;
  locations: string[];
  privateLocations: string[];
  runtimeId: string | null;
  environmentVariables: VariableInput[];
  alertChannelSubscriptions: SubscriptionInput[];
  alertSettings: AlertSettingsInput;
  tags: string[];
  groupTags: string[];
}

const nonEmpty = (list: string[] | null | undefined): list is string[] => !!list && list.length > 0;

/** Group variables first, then the check's; the check's value wins for a key both define. */
export function mergeVariables(groupVars: VariableInput[] | null | undefined, checkVars: VariableInput[] | null | undefined): VariableInput[] {
  const merged = new Map<string, VariableInput>();
  for (const v of groupVars ?? []) merged.set(v.key, v);
  for (const v of checkVars ?? []) merged.set(v.key, v);
  return [...merged.values()];
}

/** Group subscriptions and the check's; the check's entry wins for the same channel. */
export function mergeSubscriptions(groupSubs: SubscriptionInput[], checkSubs: SubscriptionInput[]): SubscriptionInput[] {
  const merged = new Map<number, SubscriptionInput>();
  for (const s of groupSubs) merged.set(s.alertChannelId, s);
  for (const s of checkSubs) merged.set(s.alertChannelId, s);
  return [...merged.values()];
}

/**
 * The settings a member check runs and alerts with (docs/decisions.md "group defaults"). Alert settings,
 * literally as docs/decisions.md puts it: a check with useGlobalAlertSettings false keeps its own; any
 * other member takes the group's, unless the group itself defers to the account
 * (its useGlobalAlertSettings true), in which case the account's apply. Outside a group,
 * useGlobalAlertSettings true means the account's.
 */
export function effectiveCheckSettings(
  check: MemberCheckInput,
  group: GroupInput | null,
  account: { alertSettings: AlertSettingsInput },
): EffectiveCheckSettings {
  let alertSettings: AlertSettingsInput;
  if (!check.useGlobalAlertSettings) alertSettings = check.alertSettings;
  else if (group && group.useGlobalAlertSettings === false) alertSettings = group.alertSettings;
  else alertSettings = account.alertSettings;

  return {
    activated: check.activated && (group?.activated ?? true),
    muted: check.muted || (group?.muted ?? false),
    locations: nonEmpty(check.locations) ? [...check.locations] : [...(group?.locations ?? [])],
    privateLocations: nonEmpty(check.privateLocations) ? [...check.privateLocations] : [...(group?.privateLocations ?? [])],
    runtimeId: check.runtimeId ?? group?.runtimeId ?? null,
    environmentVariables: mergeVariables(group?.environmentVariables, check.environmentVariables),
    alertChannelSubscriptions: mergeSubscriptions(group?.alertChannelSubscriptions ?? [], check.alertChannelSubscriptions),
    alertSettings,
    tags: [...check.tags],
    groupTags: [...(group?.tags ?? [])],
  };
}
