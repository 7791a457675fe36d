import { CheckResultsQuerySchema, type CheckResult, type CheckResultResponse } from '../model/check-result.js';
import type { CheckStatus, CheckStatusResponse } from '../model/check-status.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import type { ServiceDeps } from './deps.js';
import { found, stringId, stripAccount } from './support.js';

export function toResultResponse(r: CheckResult): CheckResultResponse {
  return stripAccount(r);
}

export class CheckResultService {
  constructor(private readonly deps: ServiceDeps) {}

  /** GET /v1/check-results/{checkId}: newest first. */
  async list(accountId: string, rawCheckId: unknown, rawQuery: unknown): Promise<Page<CheckResultResponse>> {
    const checkId = stringId(rawCheckId, 'checkId');
    found(await this.deps.storage.checks.get(accountId, checkId), 'Check');
    const q = parse(CheckResultsQuerySchema, rawQuery ?? {}, 'query');
    const page = await this.deps.storage.checkResults.listByCheck(accountId, checkId, {
      limit: q.limit,
      offset: (q.page - 1) * q.limit,
      ...(q.from ? { from: new Date(q.from) } : {}),
      ...(q.to ? { to: new Date(q.to) } : {}),
      ...(q.resultType ? { resultType: q.resultType } : {}),
    });
    return { ...page, items: page.items.map(toResultResponse) };
  }

  /** One result; `checkId`, when known, lets the store find a scheduled run without a scan. */
  async get(accountId: string, rawId: unknown, checkId?: string): Promise<CheckResultResponse> {
    return toResultResponse(found(await this.deps.storage.checkResults.get(accountId, stringId(rawId), checkId), 'Check result'));
  }
}

const NAME_KEY = '{"name":';
const COMMA = 44;

export class CheckStatusService {
  constructor(private readonly deps: ServiceDeps) {}

  /** Every check of the account: its status, or a "no runs yet" one. */
  async list(accountId: string): Promise<CheckStatusResponse[]> {
    const [checks, statuses] = await Promise.all([
      this.deps.storage.checks.listSummaries(accountId),
      this.deps.storage.checkStatuses.list(accountId),
    ]);
    const byCheck = new Map<string, CheckStatus>();
    for (const s of statuses) byCheck.set(s.checkId, s);
    // One copy of each status (without its account, with the check's current name); thousands of
    // them are answered at once, so no further spreading per row.
    return checks.map((c) => {
      const s = byCheck.get(c.id);
      if (!s) return noRunsYet(c);
      const { accountId: _accountId, ...status } = s;
      status.name = c.name;
      return status;
    });
  }

  /**
   * The statuses of `list` as the JSON text of an array, written once: a status stored under its
   * check's current name is its stored document as it is (the store writes the document with
   * JSON.stringify, so its text is what JSON.stringify of the status would give); any other is
   * written from the parsed status. Stores that cannot hand their documents over answer through
   * `list`.
   */
  async listJson(accountId: string): Promise<string> {
    const repository = this.deps.storage.checkStatuses;
    if (typeof repository.listDocuments !== 'function') return JSON.stringify(await this.list(accountId));
    const [checks, documents] = await Promise.all([
      this.deps.storage.checks.listSummaries(accountId),
      repository.listDocuments(accountId),
    ]);
    const byCheck = new Map<string, string>();
    for (const d of documents) byCheck.set(d.checkId, d.json);
    const items = checks.map((c) => {
      const json = byCheck.get(c.id);
      if (json === undefined) return JSON.stringify(noRunsYet(c));
      // The name comes first in a stored status; one stored under another name (the check was
      // renamed since) is written again with the current one.
      const name = JSON.stringify(c.name);
      if (json.startsWith(NAME_KEY) && json.startsWith(name, NAME_KEY.length) && json.charCodeAt(NAME_KEY.length + name.length) === COMMA) return json;
      const { accountId: _accountId, ...status } = JSON.parse(json) as CheckStatus;
      status.name = c.name;
      return JSON.stringify(status);
    });
    return `[${items.join(',')}]`;
  }

  async get(accountId: string, rawCheckId: unknown): Promise<CheckStatusResponse> {
    const check = found(await this.deps.storage.checks.get(accountId, stringId(rawCheckId, 'checkId')), 'Check');
    const status = await this.deps.storage.checkStatuses.get(accountId, check.id);
    return status ? { ...stripAccount(status), name: check.name } : noRunsYet(check);
  }
}

function noRunsYet(check: { id: string; name: string; created_at: string }): CheckStatusResponse {
  const status: Omit<CheckStatus, 'accountId'> = {
    name: check.name,
    checkId: check.id,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    longestRun: null,
    shortestRun: null,
    lastRunLocation: null,
    lastCheckRunId: null,
    sslDaysRemaining: null,
    created_at: check.created_at,
    updated_at: null,
  };
  return status;
}
