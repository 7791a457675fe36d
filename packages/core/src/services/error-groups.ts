import {
  ErrorGroupListQuerySchema,
  ErrorGroupPatchSchema,
  type ErrorGroup,
  type ErrorGroupResponse,
  type PwtMetadata,
  type TestSessionErrorGroup,
  type TestSessionErrorGroupResponse,
} from '../model/error-group.js';
import { parse } from '../model/parse.js';
import { cleanErrorMessage, hashErrorMessage } from '../rules/error-message.js';
import { applyErrorGroupPatch, recordErrorOccurrence } from '../rules/transitions.js';
import type { ServiceDeps } from './deps.js';
import { found, stringId, stripAccount } from './support.js';

export class ErrorGroupService {
  constructor(private readonly deps: ServiceDeps) {}

  private get storage() {
    return this.deps.storage;
  }

  /** GET /v1/error-groups/{id}: a check's group, or a test project's (both take UUIDs, so an id names one of them). */
  async get(accountId: string, rawId: unknown): Promise<ErrorGroupResponse | TestSessionErrorGroupResponse> {
    const target = await this.find(accountId, stringId(rawId));
    return target.kind === 'check' ? stripAccount(target.group) : stripAccount(target.group);
  }

  /** PATCH /v1/error-groups/{id}: archivedUntilNextEvent and archiveForEver, on either kind of group. */
  async patch(accountId: string, rawId: unknown, body: unknown): Promise<ErrorGroupResponse | TestSessionErrorGroupResponse> {
    const id = stringId(rawId);
    const patch = parse(ErrorGroupPatchSchema, body);
    const target = await this.find(accountId, id);
    if (target.kind === 'check') {
      const { accountId: _a, ...rest } = applyErrorGroupPatch(target.group, patch);
      return stripAccount(found(await this.storage.errorGroups.update(accountId, id, rest), 'Error group'));
    }
    const { accountId: _a, ...rest } = applyErrorGroupPatch(target.group, patch);
    return stripAccount(found(await this.storage.testSessionErrorGroups.update(accountId, id, rest), 'Error group'));
  }

  /** The group with this id in the account: a check's first, then a test project's; else 404. */
  private async find(
    accountId: string,
    id: string,
  ): Promise<{ kind: 'check'; group: ErrorGroup } | { kind: 'test-session'; group: TestSessionErrorGroup }> {
    const group = await this.storage.errorGroups.get(accountId, id);
    if (group) return { kind: 'check', group };
    return { kind: 'test-session', group: found(await this.storage.testSessionErrorGroups.get(accountId, id), 'Error group') };
  }

  /** GET /v1/error-groups/checks/{checkId}: a page of the check's groups. */
  async listByCheck(accountId: string, rawCheckId: unknown, rawQuery: unknown): Promise<ErrorGroupResponse[]> {
    const checkId = stringId(rawCheckId, 'checkId');
    found(await this.storage.checks.get(accountId, checkId), 'Check');
    const q = parse(ErrorGroupListQuerySchema, rawQuery ?? {}, 'query');
    const page = await this.storage.errorGroups.listByCheck(accountId, checkId, { limit: q.limit, offset: (q.page - 1) * q.limit });
    return page.items.map(stripAccount);
  }

  /** GET /v1/test-session-error-groups/projects/{projectId}. */
  async listByProject(accountId: string, rawProjectId: unknown): Promise<TestSessionErrorGroupResponse[]> {
    const projectId = stringId(rawProjectId, 'projectId');
    return (await this.storage.testSessionErrorGroups.listByProject(accountId, projectId)).map(stripAccount);
  }

  /** A failed run's error, grouped by its cleaned message; a new occurrence unarchives the group. */
  async recordOccurrence(accountId: string, checkId: string, rawMessage: string, at: string): Promise<ErrorGroup> {
    const cleaned = cleanErrorMessage(rawMessage);
    const hash = hashErrorMessage(cleaned);
    const existing = await this.storage.errorGroups.findByHash(accountId, checkId, hash);
    const next = recordErrorOccurrence(existing, { raw: rawMessage, cleaned, hash, at });
    if (existing) {
      const { accountId: _a, ...rest } = existing;
      return found(await this.storage.errorGroups.update(accountId, existing.id, { ...rest, ...next }), 'Error group');
    }
    return this.storage.errorGroups.insert(accountId, { ...next, id: this.deps.ids.uuid(), checkId, rootCauseAnalyses: [] });
  }

  /** An error of a test session's run, grouped per project with its environments and test metadata. */
  async recordTestSessionOccurrence(
    accountId: string,
    occurrence: { projectId: string | null; environment: string | null; raw: string; at: string; pwtMetadata: PwtMetadata },
  ): Promise<TestSessionErrorGroup> {
    const cleaned = cleanErrorMessage(occurrence.raw);
    const hash = hashErrorMessage(cleaned);
    const existing = await this.storage.testSessionErrorGroups.findByHash(accountId, occurrence.projectId, hash);
    const next = recordErrorOccurrence(existing, { raw: occurrence.raw, cleaned, hash, at: occurrence.at });
    const environments = new Set(existing?.environments ?? []);
    if (occurrence.environment) environments.add(occurrence.environment);
    const pwtMetadata = [...(existing?.pwtMetadata ?? [])];
    if (!pwtMetadata.some((m) => JSON.stringify(m) === JSON.stringify(occurrence.pwtMetadata))) pwtMetadata.push(occurrence.pwtMetadata);
    const fields = { ...next, environments: [...environments], pwtMetadata };
    if (existing) {
      const { accountId: _a, ...rest } = existing;
      return found(await this.storage.testSessionErrorGroups.update(accountId, existing.id, { ...rest, ...fields }), 'Error group');
    }
    return this.storage.testSessionErrorGroups.insert(accountId, {
      ...fields,
      id: this.deps.ids.uuid(),
      projectId: occurrence.projectId,
      rootCauseAnalyses: [],
    });
  }
}
