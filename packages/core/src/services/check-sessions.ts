import { NotFoundError, ValidationError } from '../errors.js';
import {
  CheckSessionCancelSchema,
  CheckSessionTriggerSchema,
  CompletionQuerySchema,
  type CheckSession,
  type CheckSessionResponse,
} from '../model/check-session.js';
import { isUuid } from '../model/primitives.js';
import { parse } from '../model/parse.js';
import { effectiveCheckSettings } from '../rules/group-defaults.js';
import { sessionEntries } from '../rules/schedule-plan.js';
import { selectRunLocations } from '../rules/schedule.js';
import { selectSessionTargets } from '../rules/session-targets.js';
import { cancelSession, completeSequence, isFinalStatus, startSequence } from '../rules/transitions.js';
import { toResultResponse } from './check-results.js';
import type { Check } from '../model/check.js';
import type { VigilStorage } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';
import { found } from './support.js';

/**
 * The engine, told of sessions: their runs are in the shared schedule already (any process that
 * serves their locations runs them); `launch` makes this process look for them at once.
 */
export interface SessionLauncher {
  launch(session: CheckSession): void;
  cancel?(session: CheckSession, sequenceIds: string[] | undefined): void;
}

const POLL_MS = 250;
/**
 * How often a race-free change of a session reads again when another writer changed it meanwhile:
 * each round one writer wins, so a session of N sequences ending at once needs up to N.
 */
const SESSION_TRIES = 200;

/**
 * Changes a stored session race-free: `change` is applied to the session as stored and written
 * only while it is still that session, else read again; sequences of one session ending at once
 * (and a cancel beside them) each count. Answers the session as it now is, null when it is gone.
 */
export async function changeSession(
  storage: VigilStorage,
  accountId: string,
  checkSessionId: string,
  change: (session: CheckSession) => CheckSession,
): Promise<CheckSession | null> {
  for (let tries = 0; tries < SESSION_TRIES; tries++) {
    const session = await storage.checkSessions.get(accountId, checkSessionId);
    if (!session) return null;
    const next = change(session);
    if (next === session) return session;
    const { accountId: _a, ...rest } = next;
    if (await storage.checkSessions.replace(accountId, session, rest)) return next;
  }
  throw new Error(`check session ${checkSessionId} kept changing under its writers (${SESSION_TRIES} tries)`);
}

function sessionId(raw: unknown): string {
  if (typeof raw !== 'string' || !isUuid(raw)) {
    throw new ValidationError([{ path: 'checkSessionId', message: 'must be a UUID' }], 'params');
  }
  return raw;
}

export class CheckSessionService {
  constructor(
    private readonly deps: ServiceDeps,
    private launcher?: SessionLauncher,
  ) {}

  /** The engine attaches itself here when it starts. */
  setLauncher(launcher: SessionLauncher | undefined): void {
    this.launcher = launcher;
  }

  private get storage() {
    return this.deps.storage;
  }

  private async toResponse(session: CheckSession): Promise<CheckSessionResponse> {
    const { accountId, ...rest } = session;
    const page = await this.storage.checkResults.listByCheck(accountId, session.checkId, {
      limit: 100, offset: 0, checkSessionId: session.checkSessionId, countTotal: false,
    });
    return { ...rest, results: page.items.map(toResultResponse) };
  }

  /**
   * The checks a trigger chooses from. Checks named by id are read alone (a trigger of one check
   * does not read the account's thousands); ids match whatever their letter case, so when one is
   * not found as written or in lower case, every check is read.
   */
  private async targetChecks(accountId: string, ids: string[] | undefined): Promise<Check[]> {
    if (!ids) return this.storage.checks.listAll(accountId);
    const found = await this.storage.checks.listByIds(accountId, [...new Set(ids.flatMap((id) => [id, id.toLowerCase()]))]);
    const seen = new Set(found.map((c) => c.id.toLowerCase()));
    return ids.every((id) => seen.has(id.toLowerCase())) ? found : this.storage.checks.listAll(accountId);
  }

  /**
   * POST /v1/check-sessions/trigger: one session per matching check, each with one sequence per
   * run location (all of them with runParallel, else the first). Answers at once. Every session is
   * stored before any of its runs is scheduled, and their runs are scheduled together, so an
   * engine sees them all at once and starts a group's in groupOrder.
   */
  async trigger(accountId: string, body: unknown): Promise<{ sessions: CheckSessionResponse[] }> {
    const input = parse(CheckSessionTriggerSchema, body ?? {});
    const [checks, groups, account] = await Promise.all([
      this.targetChecks(accountId, input.target?.checkId),
      this.storage.checkGroups.listAll(accountId),
      this.storage.accounts.get(accountId),
    ]);
    const groupById = new Map(groups.map((g) => [g.id, g]));
    const targets = selectSessionTargets(checks, groupById, input.target);
    if (targets.length === 0) throw new NotFoundError('No checks match the target');
    const now = this.deps.clock.now().toISOString();
    const created: CheckSession[] = [];
    for (const check of targets) {
      const group = check.groupId === null ? null : groupById.get(check.groupId) ?? null;
      const effective = effectiveCheckSettings(check, group, { alertSettings: account?.alertSettings ?? check.alertSettings });
      // Slot 0: without runParallel an on-demand run goes to the first candidate location.
      const runLocations = selectRunLocations({ ...effective, runParallel: check.runParallel }, 0, this.deps.defaultLocation);
      const session = await this.storage.checkSessions.insert(accountId, {
        checkSessionId: this.deps.ids.uuid(),
        checkId: check.id,
        checkType: check.checkType,
        name: check.name,
        status: 'STARTED',
        startedAt: now,
        stoppedAt: null,
        timeElapsed: null,
        runLocations,
        runSource: input.projectId ? 'TEST' : 'TRIGGER_API',
        projectId: input.projectId ?? null,
        environment: input.environment ?? null,
        sequences: runLocations.map((runLocation) => ({ sequenceId: this.deps.ids.uuid(), runLocation, status: 'STARTED' as const })),
      });
      created.push(session);
    }
    const at = this.deps.clock.now();
    await this.storage.schedule.ensure(created.flatMap((session) => sessionEntries(session, at)));
    for (const session of created) this.launcher?.launch(session);
    return { sessions: await Promise.all(created.map((session) => this.toResponse(session))) };
  }

  async get(accountId: string, rawId: unknown): Promise<CheckSessionResponse> {
    return this.toResponse(await this.getRecord(accountId, rawId));
  }

  async getRecord(accountId: string, rawId: unknown): Promise<CheckSession> {
    return found(await this.storage.checkSessions.get(accountId, sessionId(rawId)), 'Check session');
  }

  /**
   * GET .../completion: waits up to maxWaitSeconds for the session to be final. `done` false means
   * it is still running (the HTTP layer answers 408).
   */
  async completion(
    accountId: string,
    rawId: unknown,
    rawQuery: unknown,
    signal?: AbortSignal,
  ): Promise<{ done: boolean; session: CheckSessionResponse }> {
    const id = sessionId(rawId);
    const { maxWaitSeconds } = parse(CompletionQuerySchema, rawQuery ?? {}, 'query');
    const deadline = this.deps.clock.now().getTime() + maxWaitSeconds * 1000;
    for (;;) {
      const session = found(await this.storage.checkSessions.get(accountId, id), 'Check session');
      if (isFinalStatus(session.status)) return { done: true, session: await this.toResponse(session) };
      const now = this.deps.clock.now().getTime();
      // A caller that went away (the HTTP client hung up) stops the poll early.
      if (now >= deadline || signal?.aborted) return { done: false, session: await this.toResponse(session) };
      await new Promise<void>((resolve) => {
        const cancel = this.deps.clock.setTimer(new Date(Math.min(deadline, now + POLL_MS)), done);
        function done() {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }
        function onAbort() {
          cancel();
          done();
        }
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  /** POST .../cancel: the listed (or all) in-progress sequences end CANCELLED; a final session stays. */
  async cancel(accountId: string, rawId: unknown, body: unknown): Promise<CheckSessionResponse> {
    const session = await this.getRecord(accountId, rawId);
    const { sequenceId } = parse(CheckSessionCancelSchema, body ?? {});
    const now = this.deps.clock.now();
    let changed = false;
    const saved = found(await changeSession(this.storage, accountId, session.checkSessionId, (s) => {
      const next = cancelSession(s, sequenceId, now);
      changed = next !== s;
      return next;
    }), 'Check session');
    if (changed) this.launcher?.cancel?.(saved, sequenceId);
    return this.toResponse(saved);
  }

  /** The engine started a sequence's run. */
  async startSequence(accountId: string, checkSessionId: string, sequenceId: string): Promise<CheckSession> {
    const session = await this.getRecord(accountId, checkSessionId);
    return found(await changeSession(this.storage, accountId, session.checkSessionId, (s) => startSequence(s, sequenceId)), 'Check session');
  }

  /** The engine finished a sequence's run. */
  async completeSequence(
    accountId: string,
    checkSessionId: string,
    sequenceId: string,
    outcome: 'PASSED' | 'FAILED' | 'DEGRADED' | 'TIMED_OUT',
  ): Promise<CheckSession> {
    const session = await this.getRecord(accountId, checkSessionId);
    const now = this.deps.clock.now();
    return found(await changeSession(this.storage, accountId, session.checkSessionId, (s) => completeSequence(s, sequenceId, outcome, now)), 'Check session');
  }
}
