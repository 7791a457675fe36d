import { ValidationError, type ValidationIssue } from '../errors.js';
import type { AlertChannel } from '../model/alert-channel.js';
import type { CheckGroup } from '../model/check-group.js';
import {
  CheckCreateSchemas,
  CheckUpdateSchemas,
  hasOwnVariables,
  isBuiltinCheckType,
  type BuiltinCheckType,
  type Check,
  type CheckResponse,
} from '../model/check.js';
import type { GenericSchema, InferInput } from 'valibot';
import type { CheckTypeDefinition } from '../model/check-type.js';
import type { ApiRequest } from '../model/api-request.js';
import { parse } from '../model/parse.js';
import type { AlertChannelSubscription, EnvironmentVariable } from '../model/shared.js';
import { CHECK_TYPES, type Page } from '../model/primitives.js';
import { isRelativeApiUrl } from '../model/urls.js';
import { mergeApiCheckDefaults } from '../rules/api-check-defaults.js';
import { effectiveCheckSettings } from '../rules/group-defaults.js';
import { checkResponses, toCheckResponse } from './check-responses.js';
import type { VigilStorage } from '../ports/storage.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { openVariables, runSecrets, sealVariables } from './masking.js';
import { syncSchedule } from './schedule-sync.js';
import { openApiRequest, sealApiRequest, unmaskApiRequest } from './sealing.js';
import { checkTargetFields } from './target-fields.js';
import { policyForAccount } from '../runner-kit/target-policy.js';
import { found, mergeDefined, pageOptions, stringId } from './support.js';

export interface AssignOptions {
  /** Subscribe a new check (or group) to every alert channel of the account. Default true. */
  autoAssignAlerts?: boolean;
}

/** What the engine needs to run a check: group defaults merged, secrets opened. */
export interface CheckForRun {
  check: Check;
  group: CheckGroup | null;
  environment: Record<string, string>;
  secrets: string[];
  muted: boolean;
  activated: boolean;
}

/**
 * A body as a caller writes it: the fields and their nesting as the schema reads them, a value of a
 * set (`frequency: 5`, `ipFamily: 'IPv4'`) typed as its primitive and checked when the body is
 * parsed, so a body built from variables needs no `as const`; any array may be readonly.
 */
export type BodyShape<T> = T extends string ? string
  : T extends number ? number
  : T extends boolean ? boolean
  : T extends readonly (infer U)[] ? readonly BodyShape<U>[]
  : T extends object ? { [K in keyof T]: BodyShape<T[K]> }
  : T;

/**
 * The create body of a check type: a built-in type's is typed by its schema (defaults may be left
 * out), so `checks.create(account, 'TCP', { requst })` does not compile. A plugin's type, or a
 * type known only at run time, is checked when the body is parsed.
 */
export type CheckCreateInput<TType extends string> = TType extends BuiltinCheckType ? BodyShape<InferInput<(typeof CheckCreateSchemas)[TType]>> : unknown;

/** The update body of a check type: every field optional (see CheckCreateInput). */
export type CheckUpdateInput<TType extends string> = TType extends BuiltinCheckType ? BodyShape<InferInput<(typeof CheckUpdateSchemas)[TType]>> : unknown;

const RECORD_ONLY = ['id', 'accountId', 'checkType', 'created_at', 'updated_at'] as const;

/** A stored check as a create body again, so a merged update is validated as a whole. */
function asCreateBody(check: Check): Record<string, unknown> {
  const body: Record<string, unknown> = { ...check };
  for (const k of RECORD_ONLY) delete body[k];
  if (check.checkType === 'HEARTBEAT') {
    const { pingToken: _token, ...heartbeat } = check.heartbeat;
    body.heartbeat = heartbeat;
  }
  return body;
}

/**
 * Subscriptions of a new or updated target: the body's, plus every channel when autoAssignAlerts
 * asks for it, plus channels that subscribe new targets themselves (autoSubscribe).
 */
export function resolveSubscriptions(
  given: AlertChannelSubscription[] | undefined,
  channels: readonly AlertChannel[],
  isNew: boolean,
  autoAssign: boolean,
): AlertChannelSubscription[] | undefined {
  if (!isNew) return given;
  const out = new Map<number, AlertChannelSubscription>();
  for (const s of given ?? []) out.set(s.alertChannelId, s);
  for (const ch of channels) {
    if ((autoAssign || ch.autoSubscribe) && !out.has(ch.id)) out.set(ch.id, { alertChannelId: ch.id, activated: true });
  }
  return [...out.values()];
}

/** Every alertChannelId must name a channel of the account. */
export function checkChannelIds(subs: readonly AlertChannelSubscription[], channels: readonly AlertChannel[]): void {
  const ids = new Set(channels.map((c) => c.id));
  const issues = subs.flatMap((s, i) =>
    ids.has(s.alertChannelId) ? [] : [{ path: `alertChannelSubscriptions.${i}.alertChannelId`, message: 'is not an alert channel of this account' }],
  );
  if (issues.length) throw new ValidationError(issues);
}

/** The issue of a triggerIncident whose serviceId is no service of the account (another account's included); null when it is one. */
export async function incidentServiceIssue(storage: VigilStorage, accountId: string, trigger: unknown): Promise<ValidationIssue | null> {
  const serviceId = (trigger as { serviceId?: unknown } | null | undefined)?.serviceId;
  if (typeof serviceId !== 'string' || (await storage.services.listByIds(accountId, [serviceId])).length > 0) return null;
  return { path: 'triggerIncident.serviceId', message: 'is not a service of this account' };
}

/**
 * Why a check type cannot be made: no built-in model and no plugin's. A type of the spec's enum
 * that Vigil does not build in (AGENTIC) says what would serve it.
 */
function unservedMessage(checkType: string): string {
  if (!(CHECK_TYPES as readonly string[]).includes(checkType)) return `no check type ${checkType} is served`;
  return `no check type ${checkType} is served: Vigil has no built-in ${checkType} checks and no runner for them is installed; `
    + `a plugin adds the type with defineCheckType({ checkType: '${checkType}', ... }) and registers its runner (RUNNERS), and its routes then serve it`;
}

export class CheckService {
  constructor(private readonly deps: ServiceDeps) {}

  private get storage() {
    return this.deps.storage;
  }

  /** The check types plugins added, as registered in this process. */
  get pluginCheckTypes(): ReadonlyMap<string, CheckTypeDefinition> {
    return this.deps.checkTypes ?? new Map();
  }

  /** Create and update body schemas of a type: a built-in one, or one a plugin registered. */
  private schemasOf(checkType: string): { create: GenericSchema; update: GenericSchema } {
    if (isBuiltinCheckType(checkType)) return { create: CheckCreateSchemas[checkType], update: CheckUpdateSchemas[checkType] };
    const definition = this.pluginCheckTypes.get(checkType);
    if (!definition) throw new ValidationError([{ path: 'checkType', message: unservedMessage(checkType) }], 'params');
    return { create: definition.createSchema, update: definition.updateSchema };
  }

  async create<const TType extends string>(
    accountId: string,
    checkType: TType,
    body: CheckCreateInput<TType>,
    options: AssignOptions = {},
  ): Promise<CheckResponse> {
    const parsed = parse(this.schemasOf(checkType).create, body) as Record<string, unknown>;
    // The runner of the type may add rules of its own (it throws a ValidationError).
    this.deps.runners.get(checkType)?.validate?.(parsed);
    checkTargetFields(await policyForAccount(this.deps.targetPolicy, accountId), parsed, checkType);
    const channels = await this.storage.alertChannels.listAll(accountId);
    await this.checkGroup(accountId, checkType, parsed);
    await this.checkIncidentService(accountId, parsed.triggerIncident);
    const subs = resolveSubscriptions(parsed.alertChannelSubscriptions as AlertChannelSubscription[], channels, true, options.autoAssignAlerts ?? true)!;
    checkChannelIds(subs, channels);
    const record: Record<string, unknown> = {
      ...parsed,
      alertChannelSubscriptions: subs,
      id: this.deps.ids.uuid(),
      checkType,
      created_at: nowIso(this.deps),
      updated_at: null,
    };
    if (hasOwnVariables({ checkType })) {
      record.environmentVariables = sealVariables(parsed.environmentVariables as EnvironmentVariable[] | null, this.deps.secretBox);
    }
    if (checkType === 'HEARTBEAT') {
      record.heartbeat = { ...(parsed.heartbeat as object), pingToken: this.deps.ids.token() };
    }
    if (checkType === 'API') record.request = sealApiRequest(parsed.request as ApiRequest, this.deps.secretBox);
    const check = await this.storage.checks.insert(accountId, record as never);
    await this.storage.alertSubscriptions.replaceForTarget(accountId, { checkId: check.id }, subs.map((s) => ({
      alertChannelId: s.alertChannelId, checkId: check.id, groupId: null, activated: s.activated,
    })));
    await syncSchedule(this.deps, accountId, check, await this.groupOf(accountId, check));
    return toCheckResponse(check, channels, await this.storage.alertSubscriptions.listByCheck(accountId, check.id), this.deps.secretBox);
  }

  /**
   * PUT: given fields replace stored ones; a typed route only reaches checks of its type. The body
   * is typed by `options.checkType` when it names a built-in type, else checked when it is parsed.
   */
  async update<const TType extends string = string>(
    accountId: string,
    rawId: unknown,
    body: CheckUpdateInput<TType>,
    options: AssignOptions & { checkType?: TType } = {},
  ): Promise<CheckResponse> {
    const stored = await this.getRecord(accountId, rawId);
    if (options.checkType && options.checkType !== stored.checkType) found(null, 'Check');
    const schemas = this.schemasOf(stored.checkType);
    const given = parse(schemas.update, body) as Record<string, unknown>;
    // Sealed values are validated opened; an API check's masked credentials sent back keep the stored values.
    const opened = this.opened(stored);
    if (opened.checkType === 'API' && given.request) given.request = unmaskApiRequest(given.request as ApiRequest, opened.request);
    const merged = mergeDefined(asCreateBody(opened), given);
    const parsed = parse(schemas.create, merged) as Record<string, unknown>;
    this.deps.runners.get(stored.checkType)?.validate?.(parsed);
    checkTargetFields(await policyForAccount(this.deps.targetPolicy, accountId), parsed, stored.checkType);
    const channels = await this.storage.alertChannels.listAll(accountId);
    await this.checkGroup(accountId, stored.checkType, parsed);
    // Only a triggerIncident the body sets: one stored before its service was deleted stays editable.
    await this.checkIncidentService(accountId, given.triggerIncident);
    checkChannelIds(parsed.alertChannelSubscriptions as AlertChannelSubscription[], channels);
    const record: Record<string, unknown> = {
      ...parsed,
      id: stored.id,
      checkType: stored.checkType,
      created_at: stored.created_at,
      updated_at: nowIso(this.deps),
    };
    if (hasOwnVariables(stored)) {
      record.environmentVariables = given.environmentVariables === undefined
        ? stored.environmentVariables
        : sealVariables(parsed.environmentVariables as EnvironmentVariable[] | null, this.deps.secretBox, stored.environmentVariables);
    }
    if (stored.checkType === 'HEARTBEAT') {
      record.heartbeat = { ...(parsed.heartbeat as object), pingToken: stored.heartbeat.pingToken };
    }
    if (stored.checkType === 'API') record.request = sealApiRequest(parsed.request as ApiRequest, this.deps.secretBox);
    const check = found(await this.storage.checks.update(accountId, stored.id, record as never), 'Check');
    await syncSchedule(this.deps, accountId, check, await this.groupOf(accountId, check));
    if (given.alertChannelSubscriptions !== undefined) {
      await this.storage.alertSubscriptions.replaceForTarget(accountId, { checkId: check.id }, check.alertChannelSubscriptions.map((s) => ({
        alertChannelId: s.alertChannelId, checkId: check.id, groupId: null, activated: s.activated,
      })));
    }
    return toCheckResponse(check, channels, await this.storage.alertSubscriptions.listByCheck(accountId, check.id), this.deps.secretBox);
  }

  async get(accountId: string, rawId: unknown, checkType?: string): Promise<CheckResponse> {
    const check = await this.getRecord(accountId, rawId);
    if (checkType && check.checkType !== checkType) found(null, 'Check');
    const [response] = await checkResponses(this.storage, accountId, [check], this.deps.secretBox);
    return response!;
  }

  async getRecord(accountId: string, rawId: unknown): Promise<Check> {
    return found(await this.storage.checks.get(accountId, stringId(rawId)), 'Check');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<CheckResponse>> {
    const options = pageOptions(rawQuery);
    const page = await this.storage.checks.list(accountId, options);
    return { ...page, items: await checkResponses(this.storage, accountId, page.items, this.deps.secretBox) };
  }

  async listByGroup(accountId: string, groupId: number): Promise<CheckResponse[]> {
    return checkResponses(this.storage, accountId, await this.storage.checks.listByGroup(accountId, groupId), this.deps.secretBox);
  }

  async delete(accountId: string, rawId: unknown): Promise<void> {
    const id = stringId(rawId);
    if (!(await this.storage.checks.delete(accountId, id))) found(null, 'Check');
    await this.storage.alertSubscriptions.deleteByTarget(accountId, { checkId: id });
    await this.storage.checkStatuses.delete(accountId, id);
    await this.storage.alertStates.delete(accountId, id);
    await this.storage.schedule.remove(accountId, id);
  }

  /** The check as it runs: its group's defaults merged in, secret variables and sealed credentials opened. */
  async getForRun(accountId: string, checkId: string): Promise<CheckForRun> {
    const stored = await this.getRecord(accountId, checkId);
    const group = stored.groupId === null ? null : await this.storage.checkGroups.get(accountId, stored.groupId);
    const account = await this.storage.accounts.get(accountId);
    const own = hasOwnVariables(stored) ? stored.environmentVariables : [];
    // Only the members the settings are made of (a spread of the whole check was a copy a run).
    const effective = effectiveCheckSettings(
      {
        activated: stored.activated, muted: stored.muted, tags: stored.tags, locations: stored.locations, privateLocations: stored.privateLocations,
        runtimeId: stored.runtimeId, environmentVariables: own, alertChannelSubscriptions: stored.alertChannelSubscriptions,
        useGlobalAlertSettings: stored.useGlobalAlertSettings, alertSettings: stored.alertSettings,
      },
      group,
      { alertSettings: account?.alertSettings ?? stored.alertSettings },
    );
    const vars = openVariables(effective.environmentVariables, this.deps.secretBox);
    const check = {
      ...stored,
      locations: effective.locations,
      privateLocations: effective.privateLocations,
      runtimeId: effective.runtimeId,
      alertSettings: effective.alertSettings,
      alertChannelSubscriptions: effective.alertChannelSubscriptions,
      ...(hasOwnVariables(stored) ? { environmentVariables: vars } : {}),
      ...(stored.checkType === 'API' ? { request: this.requestForRun(stored.request, group) } : {}),
    } as Check;
    return {
      check,
      group,
      environment: Object.fromEntries(vars.map((x) => [x.key, x.value])),
      secrets: runSecrets(vars, check),
      muted: effective.muted,
      activated: effective.activated,
    };
  }

  /**
   * A stored check with its sealed values opened (an API check's credentials, a browser check's
   * secret variables), so that an update validates them as they were written: a sealed value is
   * longer than its plaintext.
   */
  private opened(stored: Check): Check {
    const box = this.deps.secretBox;
    if (stored.checkType === 'API') return { ...stored, request: openApiRequest(stored.request, box) };
    if (hasOwnVariables(stored) && stored.environmentVariables !== null) {
      return { ...stored, environmentVariables: openVariables(stored.environmentVariables, box) };
    }
    return stored;
  }

  /** An API check's request as it runs: its own and its group's apiCheckDefaults opened, then merged. */
  private requestForRun(request: ApiRequest, group: CheckGroup | null): ApiRequest {
    const box = this.deps.secretBox;
    return mergeApiCheckDefaults(openApiRequest(request, box), group ? openApiRequest(group.apiCheckDefaults, box) : null);
  }

  private async groupOf(accountId: string, check: Check): Promise<CheckGroup | null> {
    return check.groupId === null ? null : this.storage.checkGroups.get(accountId, check.groupId);
  }

  /** A triggerIncident names a status-page service of the check's own account (400 otherwise, as for other ids in a body). */
  private async checkIncidentService(accountId: string, trigger: unknown): Promise<void> {
    const issue = await incidentServiceIssue(this.storage, accountId, trigger);
    if (issue) throw new ValidationError([issue]);
  }

  /**
   * The groupId names a group of the account; an API check's relative url (`/health`) needs a
   * group whose apiCheckDefaults.url is its base, since nothing else could complete it.
   */
  private async checkGroup(accountId: string, checkType: string, parsed: Record<string, unknown>): Promise<void> {
    const groupId = parsed.groupId as number | null;
    const group = groupId === null ? null : await this.storage.checkGroups.get(accountId, groupId);
    if (groupId !== null && !group) {
      throw new ValidationError([{ path: 'groupId', message: 'is not a check group of this account' }]);
    }
    const url = checkType === 'API' ? (parsed.request as { url: string }).url : null;
    if (url !== null && isRelativeApiUrl(url) && !group?.apiCheckDefaults.url) {
      throw new ValidationError([{
        path: 'request.url',
        message: group
          ? 'is relative, but the group has no apiCheckDefaults.url to complete it: set one there, or give a full URL'
          : 'is relative: give a full http:// or https:// URL, or put the check in a group whose apiCheckDefaults.url completes it',
      }]);
    }
  }
}
