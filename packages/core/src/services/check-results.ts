import { CheckResultsQuerySchema, type CheckResult, type CheckResultResponse } from '../model/check-result.js';
import type { CheckStatus, CheckStatusResponse } from '../model/check-status.js';
import { parse } from '../model/parse.js';
import type { Page } from '../model/primitives.js';
import type { CheckStatusDocument } from '../ports/storage-results.js';
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
const OPEN = 91;
const CLOSE = 93;
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
    return (await this.listJsonBytes(accountId)).toString('utf8');
  }

  /**
   * `listJson` as UTF-8 bytes, as the API sends it: a store may hand its documents over as bytes.
   * Each entry is written straight into one buffer of the list's exact size (joining 10,000
   * documents into one string and encoding that takes about 20 times as long).
   */
  async listJsonBytes(accountId: string): Promise<Buffer> {
    const repository = this.deps.storage.checkStatuses;
    if (typeof repository.listWithChecks !== 'function') return Buffer.from(JSON.stringify(await this.list(accountId)));
    const entries = await repository.listWithChecks(accountId);
    const items = new Array<string | Uint8Array>(entries.length);
    let size = entries.length + 1;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const item = typeof entry === 'string' || entry instanceof Uint8Array ? entry : statusJson(entry);
      items[i] = item;
      size += typeof item === 'string' ? Buffer.byteLength(item) : item.length;
    }
    const out = Buffer.allocUnsafe(Math.max(size, 2));
    let at = 0;
    out[at++] = OPEN;
    for (let i = 0; i < items.length; i++) {
      if (i > 0) out[at++] = COMMA;
      const item = items[i]!;
      if (typeof item === 'string') at += out.write(item, at);
      else {
        out.set(item, at);
        at += item.length;
      }
    }
    out[at++] = CLOSE;
    return out.subarray(0, at);
  }

  async get(accountId: string, rawCheckId: unknown): Promise<CheckStatusResponse> {
    const check = found(await this.deps.storage.checks.get(accountId, stringId(rawCheckId, 'checkId')), 'Check');
    const status = await this.deps.storage.checkStatuses.get(accountId, check.id);
    return status ? { ...stripAccount(status), name: check.name } : noRunsYet(check);
  }
}

/**
 * A check's status as JSON text from its stored document: the document as it is when stored under
 * the check's current name (the name comes first in a stored status), else written again with it.
 */
function statusJson(entry: CheckStatusDocument): string {
  const { json } = entry;
  if (json === null) return JSON.stringify(noRunsYet({ id: entry.checkId, name: entry.name, created_at: entry.created_at }));
  const name = JSON.stringify(entry.name);
  if (json.startsWith(NAME_KEY) && json.startsWith(name, NAME_KEY.length) && json.charCodeAt(NAME_KEY.length + name.length) === COMMA) return json;
  const { accountId: _accountId, ...status } = JSON.parse(json) as CheckStatus;
  status.name = entry.name;
  return JSON.stringify(status);
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
