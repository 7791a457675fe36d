/*
 * The engine's job handlers, one per kind of schedule entry (a slot's run, a session's run, an
 * alert tick, a certificate look, retention), each answering what becomes of its entry; and, for
 * a job that failed, when its entry is due again.
 */
import { ALERT_TICK_MS, nextDueIn, runLocations } from '../rules/schedule-plan.js';
import type { ServiceDeps } from '../services/deps.js';
import { FAILED_CERTIFICATE_RETRY_MS } from './certificate-look.js';
import { errorText, type ReadyJob } from './claimed-jobs.js';
import type { RetentionJob } from './retention-job.js';
import type { RunPipeline } from './run-pipeline.js';

/** What a job's handler asks of its entry: move it to a time, remove it (null), or leave it as it is. */
export type Next = Date | null | 'leave';

export interface JobContext {
  signal: AbortSignal;
  /** When the job must be over: a second before another process may take its entry over (see Engine.start1). */
  mustEndBy: Date;
  onRunnerWait: (waiting: boolean) => void;
}

export class JobHandlers {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly pipeline: RunPipeline,
    private readonly retention: RetentionJob,
  ) {}

  /** Runs a claimed job by its kind. */
  handle(job: ReadyJob, ctx: JobContext): Promise<Next> {
    const { claim } = job;
    switch (claim.kind) {
      case 'run':
        return this.runSlot(job, ctx);
      case 'session':
        return this.runSession(job, ctx);
      case 'alert-tick':
        return this.pipeline.tick(claim.accountId, claim.checkId);
      case 'certificate':
        return this.pipeline.certificate(claim.accountId, claim.checkId);
      case 'retention':
        return this.retention.run(ctx.mustEndBy, ctx.signal);
    }
  }

  /** When a failed job's entry is due again (null: it is done); a session's sequence ends FAILED naming the cause. */
  async recover(job: ReadyJob, err: unknown): Promise<Date | null> {
    const { claim } = job;
    const now = this.deps.clock.now();
    switch (claim.kind) {
      case 'run':
        return this.pipeline.nextSlot(claim.accountId, claim.checkId, claim.location, now);
      case 'session':
        await this.pipeline.failSequence(claim.accountId, claim.session!, claim.location, `The run could not be completed: ${errorText(err)}`);
        return null;
      case 'alert-tick':
        return new Date(now.getTime() + ALERT_TICK_MS);
      case 'certificate':
        return new Date(now.getTime() + FAILED_CERTIFICATE_RETRY_MS);
      case 'retention': {
        const entry = this.retention.entry(now);
        return entry ? new Date(entry.dueAt) : null;
      }
    }
  }

  /** A check's slot in one location: run, then moved on to the check's next run there (or dropped). */
  private async runSlot(job: ReadyJob, ctx: JobContext): Promise<Next> {
    const { claim } = job;
    const outcome = await this.pipeline.run({
      accountId: claim.accountId, checkId: claim.checkId, location: claim.location, runSource: 'SCHEDULER',
      dueAt: new Date(job.due), mustEndBy: ctx.mustEndBy, onRunnerWait: ctx.onRunnerWait,
    }, ctx.signal);
    // Cut short by stop(): the slot keeps its time, and stop() gives its lease back.
    if (outcome.kind === 'skipped' && outcome.reason === 'stopped') return 'leave';
    // A deleted or deactivated check leaves the schedule; a paused one keeps its slots.
    const keep = outcome.kind === 'ran' || outcome.reason === 'paused' || outcome.reason === 'cancelled' || outcome.reason === 'duplicate' || outcome.reason === 'busy';
    if (!keep || !outcome.forRun) return null;
    const { check, group } = outcome.forRun;
    return nextDueIn(check, runLocations(check, group, this.deps.defaultLocation), claim.location, this.deps.clock.now());
  }

  /** One sequence of a check session: run once; whatever stops it from running ends the sequence errored. */
  private async runSession(job: ReadyJob, ctx: JobContext): Promise<Next> {
    const { claim } = job;
    const ref = claim.session!;
    const s = job.session!;
    const spec = {
      accountId: claim.accountId, checkId: claim.checkId, location: claim.location, runSource: s.runSource,
      dueAt: new Date(job.due), mustEndBy: ctx.mustEndBy, onRunnerWait: ctx.onRunnerWait,
      session: { ...ref, projectId: s.projectId, environment: s.environment },
    };
    if (s.ended) {
      await this.pipeline.finishEndedSessionRun(spec);
      return null;
    }
    const outcome = await this.pipeline.run(spec, ctx.signal);
    if (outcome.kind === 'ran') return null;
    switch (outcome.reason) {
      case 'cancelled':
      // Stored by a process that died before it ended the sequence: ended now from that result.
      case 'duplicate':
        return null;
      // Left for another process: stop() gives the lease back.
      case 'stopped':
        return 'leave';
      // No runner of its type was free in time: it waits for the next claim.
      case 'busy':
        return this.deps.clock.now();
      case 'gone':
        this.deps.logger.warn('engine: a session run ended without running: its check is gone', { accountId: claim.accountId, checkId: claim.checkId, checkSessionId: ref.checkSessionId });
        await this.pipeline.failSequence(claim.accountId, ref, claim.location, 'The check was deleted before its run');
        return null;
      default:
        this.deps.logger.warn('engine: a session run ended without running', { accountId: claim.accountId, checkId: claim.checkId, checkSessionId: ref.checkSessionId, reason: outcome.reason });
        await this.pipeline.failSequence(claim.accountId, ref, claim.location, `The run was skipped (${outcome.reason})`);
        return null;
    }
  }
}
