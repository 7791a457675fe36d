import { ConflictError, ValidationError } from '../errors.js';
import type { SecretBox } from '../ports/secret-box.js';
import { CheckGroupCreateSchema, CheckGroupUpdateSchema, type CheckGroup, type CheckGroupResponse } from '../model/check-group.js';
import type { CheckResponse } from '../model/check.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import { checkChannelIds, resolveSubscriptions, type AssignOptions } from './checks.js';
import { checkResponses } from './check-responses.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { maskVariables, openVariables, sealVariables } from './masking.js';
import { maskApiRequest, openApiRequest, sealApiRequest, unmaskApiRequest } from './sealing.js';
import { syncSchedule } from './schedule-sync.js';
import { checkTargetFields } from './target-fields.js';
import { policyForAccount } from '../runner-kit/target-policy.js';
import { scriptIssues, SnippetService } from './snippets.js';
import { found, mapPage, mergeDefined, numericId, pageOptions, slicePage, stripAccount } from './support.js';

/**
 * A stored group as the API answers it: secret variables masked, and its apiCheckDefaults masked as
 * an API check's request is (credential headers and the basic-auth password; other header values
 * opened).
 */
function toResponse(group: CheckGroup, box: SecretBox): CheckGroupResponse {
  const rest = stripAccount(group);
  return { ...rest, environmentVariables: maskVariables(rest.environmentVariables), apiCheckDefaults: maskApiRequest(rest.apiCheckDefaults, box) };
}

export class CheckGroupService {
  private readonly snippets: SnippetService;

  constructor(private readonly deps: ServiceDeps) {
    this.snippets = new SnippetService(deps);
  }

  /** The setup and teardown code of member API checks: scripts that compile, snippets of this account. */
  private async checkScripts(accountId: string, group: Pick<CheckGroup, 'localSetupScript' | 'localTearDownScript' | 'setupSnippetId' | 'tearDownSnippetId'>): Promise<void> {
    const issues = scriptIssues({ localSetupScript: group.localSetupScript, localTearDownScript: group.localTearDownScript });
    if (issues.length) throw new ValidationError(issues);
    await this.snippets.checkGroupSnippets(accountId, group);
  }

  async create(accountId: string, body: unknown, options: AssignOptions = {}): Promise<CheckGroupResponse> {
    const parsed = parse(CheckGroupCreateSchema, body);
    checkTargetFields(await policyForAccount(this.deps.targetPolicy, accountId), parsed, null);
    await this.checkScripts(accountId, parsed);
    const channels = await this.deps.storage.alertChannels.listAll(accountId);
    const subs = resolveSubscriptions(parsed.alertChannelSubscriptions, channels, true, options.autoAssignAlerts ?? true)!;
    checkChannelIds(subs, channels);
    const group = await this.deps.storage.checkGroups.insert(accountId, {
      ...parsed,
      alertChannelSubscriptions: subs,
      environmentVariables: sealVariables(parsed.environmentVariables, this.deps.secretBox),
      apiCheckDefaults: sealApiRequest(parsed.apiCheckDefaults, this.deps.secretBox),
      created_at: nowIso(this.deps),
      updated_at: null,
    });
    await this.syncSubscriptions(accountId, group);
    return toResponse(group, this.deps.secretBox);
  }

  /** PUT /v2/check-groups/{id}: name is required; other given fields replace the stored ones. */
  async update(accountId: string, rawId: unknown, body: unknown, _options: AssignOptions = {}): Promise<CheckGroupResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(CheckGroupUpdateSchema, body);
    const box = this.deps.secretBox;
    // Sealed values are validated opened (a sealed value is longer than its plaintext); masked
    // credentials sent back keep the stored values.
    const apiCheckDefaults = openApiRequest(stored.apiCheckDefaults, box);
    if (given.apiCheckDefaults) given.apiCheckDefaults = unmaskApiRequest(given.apiCheckDefaults, apiCheckDefaults);
    const environmentVariables = stored.environmentVariables === null ? null : openVariables(stored.environmentVariables, box);
    const { id: _id, accountId: _a, created_at: _c, updated_at: _u, ...storedBody } = { ...stored, apiCheckDefaults, environmentVariables };
    const parsed = parse(CheckGroupCreateSchema, mergeDefined(storedBody, given));
    checkTargetFields(await policyForAccount(this.deps.targetPolicy, accountId), parsed, null);
    await this.checkScripts(accountId, parsed);
    const channels = await this.deps.storage.alertChannels.listAll(accountId);
    checkChannelIds(parsed.alertChannelSubscriptions, channels);
    const group = found(
      await this.deps.storage.checkGroups.update(accountId, stored.id, {
        ...parsed,
        environmentVariables: given.environmentVariables === undefined
          ? stored.environmentVariables
          : sealVariables(parsed.environmentVariables, box, stored.environmentVariables),
        apiCheckDefaults: sealApiRequest(parsed.apiCheckDefaults, box),
        id: stored.id,
        created_at: stored.created_at,
        updated_at: nowIso(this.deps),
      }),
      'Check group',
    );
    if (given.alertChannelSubscriptions !== undefined) await this.syncSubscriptions(accountId, group);
    // Members follow the group's activation and locations from their next run.
    for (const member of await this.deps.storage.checks.listByGroup(accountId, group.id)) {
      await syncSchedule(this.deps, accountId, member, group);
    }
    return toResponse(group, box);
  }

  async get(accountId: string, rawId: unknown): Promise<CheckGroupResponse> {
    return toResponse(await this.getRecord(accountId, rawId), this.deps.secretBox);
  }

  async getRecord(accountId: string, rawId: unknown): Promise<CheckGroup> {
    return found(await this.deps.storage.checkGroups.get(accountId, numericId(rawId)), 'Check group');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<CheckGroupResponse>> {
    return mapPage(await this.deps.storage.checkGroups.list(accountId, pageOptions(rawQuery)), (g) => toResponse(g, this.deps.secretBox));
  }

  /** A group that still has checks is not deleted (409). */
  async delete(accountId: string, rawId: unknown): Promise<void> {
    const group = await this.getRecord(accountId, rawId);
    const members = await this.deps.storage.checks.listByGroup(accountId, group.id);
    if (members.length > 0) {
      throw new ConflictError(`Check group ${group.id} still has ${members.length} check(s); move or delete them first`);
    }
    await this.deps.storage.checkGroups.delete(accountId, group.id);
    await this.deps.storage.alertSubscriptions.deleteByTarget(accountId, { groupId: group.id });
  }

  async listChecks(accountId: string, rawId: unknown, rawQuery: unknown): Promise<Page<CheckResponse>> {
    const group = await this.getRecord(accountId, rawId);
    const page = slicePage(await this.deps.storage.checks.listByGroup(accountId, group.id), pageOptions(rawQuery));
    return { ...page, items: await checkResponses(this.deps.storage, accountId, page.items, this.deps.secretBox) };
  }

  private async syncSubscriptions(accountId: string, group: CheckGroup): Promise<void> {
    await this.deps.storage.alertSubscriptions.replaceForTarget(accountId, { groupId: group.id }, group.alertChannelSubscriptions.map((s) => ({
      alertChannelId: s.alertChannelId, checkId: null, groupId: group.id, activated: s.activated,
    })));
  }
}
