import { ConflictError, ValidationError } from '../errors.js';
import type { CheckGroup } from '../model/check-group.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import { SnippetCreateSchema, SnippetUpdateSchema, type Snippet, type SnippetResponse } from '../model/snippet.js';
import type { SnippetLookup } from '../ports/runner.js';
import { apiScriptSyntaxError } from '../runner-kit/script-isolation.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, mapPage, mergeDefined, numericId, pageOptions, stripAccount } from './support.js';

/** The script fields of a group or a snippet that do not compile, as validation issues. */
export function scriptIssues(fields: Record<string, string | null | undefined>): { path: string; message: string }[] {
  return Object.entries(fields).flatMap(([path, code]) => {
    const problem = typeof code === 'string' && code.trim() !== '' ? apiScriptSyntaxError(code) : null;
    return problem ? [{ path, message: `is not valid JavaScript: ${problem}` }] : [];
  });
}

const SNIPPET_FIELDS = ['setupSnippetId', 'tearDownSnippetId'] as const;

/**
 * Snippets (`/v1/snippets`): code a check group runs in the setup or teardown phase of its API
 * checks by id. The code is compiled (not run) when stored, so that a syntax error shows at once.
 */
export class SnippetService {
  constructor(private readonly deps: ServiceDeps) {}

  async create(accountId: string, body: unknown): Promise<SnippetResponse> {
    const input = parse(SnippetCreateSchema, body);
    const issues = scriptIssues({ script: input.script });
    if (issues.length) throw new ValidationError(issues);
    return stripAccount(await this.deps.storage.snippets.insert(accountId, { ...input, created_at: nowIso(this.deps), updated_at: null }));
  }

  /** PUT /v1/snippets/{id}: given fields replace the stored ones. */
  async update(accountId: string, rawId: unknown, body: unknown): Promise<SnippetResponse> {
    const stored = await this.getRecord(accountId, rawId);
    const given = parse(SnippetUpdateSchema, body);
    const { id, accountId: _a, created_at, updated_at: _u, ...storedBody } = stored;
    const input = parse(SnippetCreateSchema, mergeDefined(storedBody, given));
    const issues = scriptIssues({ script: input.script });
    if (issues.length) throw new ValidationError(issues);
    const updated = await this.deps.storage.snippets.update(accountId, id, { ...input, id, created_at, updated_at: nowIso(this.deps) });
    return stripAccount(found(updated, 'Snippet'));
  }

  async get(accountId: string, rawId: unknown): Promise<SnippetResponse> {
    return stripAccount(await this.getRecord(accountId, rawId));
  }

  private async getRecord(accountId: string, rawId: unknown): Promise<Snippet> {
    return found(await this.deps.storage.snippets.get(accountId, numericId(rawId)), 'Snippet');
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<SnippetResponse>> {
    return mapPage(await this.deps.storage.snippets.list(accountId, pageOptions(rawQuery)), stripAccount);
  }

  /** A snippet that a group still runs is not deleted (409), as a group that still has checks is not. */
  async delete(accountId: string, rawId: unknown): Promise<void> {
    const snippet = await this.getRecord(accountId, rawId);
    const users = (await this.deps.storage.checkGroups.listAll(accountId))
      .filter((g) => g.setupSnippetId === snippet.id || g.tearDownSnippetId === snippet.id);
    if (users.length > 0) {
      throw new ConflictError(`Snippet ${snippet.id} is still used by check group(s) ${users.map((g) => g.id).join(', ')}; set their setupSnippetId / tearDownSnippetId to another snippet or null first`);
    }
    await this.deps.storage.snippets.delete(accountId, snippet.id);
  }

  /** A group's setupSnippetId and tearDownSnippetId name snippets of its own account (400 otherwise, as for other ids in a body). */
  async checkGroupSnippets(accountId: string, group: Pick<CheckGroup, (typeof SNIPPET_FIELDS)[number]>): Promise<void> {
    const issues: { path: string; message: string }[] = [];
    for (const field of SNIPPET_FIELDS) {
      const id = group[field];
      if (id !== null && !(await this.deps.storage.snippets.get(accountId, id))) {
        issues.push({ path: field, message: 'is not a snippet of this account' });
      }
    }
    if (issues.length) throw new ValidationError(issues);
  }

  /** The account's snippets as one run reads them (its job's `snippets`). */
  lookupFor(accountId: string): SnippetLookup {
    return {
      get: async (id) => {
        const s = await this.deps.storage.snippets.get(accountId, id);
        return s ? { id: s.id, name: s.name, script: s.script } : null;
      },
    };
  }
}
