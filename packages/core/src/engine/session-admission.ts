/*
 * Session admission and group order: the claimed runs of check sessions are read (their session
 * and group) and queued in groupOrder, and when they must go back to the schedule they go back
 * with the runs of their group queued behind them, so no run starts before one ordered ahead.
 */
import { isFinalSessionStatus } from '../model/check-session.js';
import type { ScheduledJob } from '../ports/storage.js';
import type { ServiceDeps } from '../services/deps.js';
import { errorText, type ClaimedJobs, type GroupSlot, type ReadyJob } from './claimed-jobs.js';

/**
 * Reads what the claimed session runs need (their session and group) and queues them in
 * groupOrder; a run whose session is gone or whose sequence ended already (cancelled) is done.
 * Until they are all queued in order, `jobs.admitting` holds back the queued runs of groups.
 */
export async function admitSessions(jobs: ClaimedJobs, deps: ServiceDeps, claims: readonly ScheduledJob[]): Promise<void> {
  const groups = new Map<string, GroupSlot | undefined>();
  jobs.admitting = true;
  try {
    for (const claim of claims) {
      try {
        await admitSession(jobs, deps, claim, groups);
      } catch (err) {
        // This one goes back as it was; the others of the claim are admitted all the same.
        deps.logger.warn('engine: could not read what a session run needs', { checkId: claim.checkId, checkSessionId: claim.session?.checkSessionId ?? null, error: errorText(err) });
        jobs.giveBackClaim(claim);
      }
    }
    const order = (j: ReadyJob) => j.session?.group?.order ?? Number.MAX_SAFE_INTEGER;
    jobs.sessionQueue.sort((a, b) => order(a) - order(b) || a.session!.startedAt.localeCompare(b.session!.startedAt) || a.seq - b.seq);
  } finally {
    jobs.admitting = false;
  }
}

async function admitSession(jobs: ClaimedJobs, deps: ServiceDeps, claim: ScheduledJob, groups: Map<string, GroupSlot | undefined>): Promise<void> {
  const { storage } = deps;
  const ref = claim.session!;
  const session = await storage.checkSessions.get(claim.accountId, ref.checkSessionId);
  const sequence = session?.sequences.find((s) => s.sequenceId === ref.sequenceId);
  if (!session || !sequence || sequence.status === 'CANCELLED') {
    await storage.schedule.complete(claim, null);
    return;
  }
  const key = `${claim.accountId}:${claim.checkId}`;
  if (!groups.has(key)) groups.set(key, await groupSlot(deps, claim.accountId, claim.checkId));
  const group = groups.get(key);
  jobs.hold(jobs.sessionQueue, {
    due: Date.parse(claim.dueAt),
    claim,
    seq: jobs.nextSeq(),
    session: {
      runSource: session.runSource, projectId: session.projectId ?? null, environment: session.environment ?? null, startedAt: session.startedAt,
      // Ended by a process that died before it removed the entry: what it may have left
      // undone (the alert step) is finished from the stored result; nothing runs again.
      ended: isFinalSessionStatus(sequence.status),
      ...(group ? { group } : {}),
    },
  });
}

async function groupSlot(deps: ServiceDeps, accountId: string, checkId: string): Promise<GroupSlot | undefined> {
  const check = await deps.storage.checks.get(accountId, checkId);
  if (!check || check.groupId === null) return undefined;
  const group = await deps.storage.checkGroups.get(accountId, check.groupId);
  if (!group) return undefined;
  return { id: `${accountId}:${group.id}`, order: check.groupOrder ?? Number.MAX_SAFE_INTEGER, limit: Math.max(1, group.concurrency) };
}

/**
 * Gives back queued session runs, each with the runs of its group queued behind it: claimed
 * later, those would still have the time to start, and must not start before it (groupOrder).
 * They come back together at the next claim and are queued in order again.
 */
export function giveBackSessions(jobs: ClaimedJobs, late: readonly ReadyJob[]): void {
  const from = new Map<string, number>();
  for (const job of late) {
    const id = job.session?.group?.id;
    const at = jobs.sessionQueue.indexOf(job);
    if (id !== undefined && at >= 0 && at < (from.get(id) ?? Infinity)) from.set(id, at);
  }
  const back = jobs.sessionQueue.filter((j, k) => late.includes(j) || (j.session?.group !== undefined && k >= (from.get(j.session.group.id) ?? Infinity)));
  jobs.sessionQueue = jobs.sessionQueue.filter((j) => !back.includes(j));
  for (const job of back) jobs.giveBackClaim(job.claim);
}
