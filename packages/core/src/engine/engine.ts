/*
 * The engine of one process: it claims due entries of the shared schedule, starts each claimed
 * job on time with bounded concurrency, and re-arms the entry of a job that fails or hangs. The
 * claimed jobs' bookkeeping is in claimed-jobs.ts, the admission of sessions' runs in group order
 * in session-admission.ts, the handler of each job kind in job-handlers.ts, and what a run does
 * in run-pipeline.ts.
 */
import { hostname } from 'node:os';
import type { CheckGroup } from '../model/check-group.js';
import type { CheckSession } from '../model/check-session.js';
import type { Cancel } from '../ports/clock.js';
import { hasCode } from '../errors.js';
import { JOB_KINDS, type JobKind } from '../model/schedule-entry.js';
import type { ScheduledJob, ServedLocations } from '../ports/storage.js';
import { plannedEntries } from '../rules/schedule-plan.js';
import type { SessionLauncher } from '../services/check-sessions.js';
import { ClaimedJobs, errorText, type ReadyJob } from './claimed-jobs.js';
import { resolveEngineOptions, type EngineOptions, type ResolvedEngineOptions } from './engine-options.js';
import { engineInstruments, type EngineInstruments } from './instruments.js';
import { JobHandlers } from './job-handlers.js';
import { RetentionJob } from './retention-job.js';
import { RunPipeline, type PipelineServices } from './run-pipeline.js';
import { CANCELLED, STOPPING } from './run-spec.js';
import { admitSessions, giveBackSessions } from './session-admission.js';
import { JobControllers } from './job-controllers.js';
import { SharedTimers } from './shared-timers.js';

export interface EngineServices extends PipelineServices {
  serves: ServedLocations;
}

export type EngineState = 'stopped' | 'running' | 'stopping';

/**
 * The scheduler and run loop of one process. Due entries are claimed from the shared schedule (so
 * several processes on one database run each once), held in one priority queue by due time with
 * one timer for the earliest, and handed to the handler of their kind with bounded concurrency.
 * Whatever a handler throws or however long it hangs, its entry completes and re-arms, and a
 * session's sequence ends.
 */
export class Engine implements SessionLauncher {
  readonly owner: string;
  private readonly pipeline: RunPipeline;
  private readonly meter: EngineInstruments;
  /** The claimed jobs this process holds, queued or running. */
  private readonly jobs: ClaimedJobs;
  /** Running jobs by a key of their own (in start order). */
  private readonly running = new Map<string, { controller: AbortController; promise: Promise<void>; session?: string; sequence?: string }>();
  /** Running jobs' abort controllers, shared by the jobs of one lease end (job-controllers.ts). */
  private readonly controllers = new JobControllers();
  private dispatchTimer: Cancel | null = null;
  private dispatchAt = Infinity;
  private pollTimer: Cancel | null = null;
  private polling = false;
  private pollAgain = false;
  /** The claim in flight, if any (stop() waits for it). */
  private claiming: Promise<void> = Promise.resolve();
  private current: EngineState = 'stopped';
  private readonly o: ResolvedEngineOptions;
  private readonly kinds: JobKind[];
  private readonly startMarginMs: number;
  /** Retention of check results, run from its own entry of the shared schedule. */
  readonly retention: RetentionJob;
  private startedJobs = 0;
  /** Running jobs that wait for their runner's turn: they hold no engine slot meanwhile. */
  private waitingForRunner = 0;
  private readonly handlers: JobHandlers;
  /** The jobs' lease watches: one timer for all the jobs of a claim. */
  private readonly watches: SharedTimers;

  constructor(
    private readonly services: EngineServices,
    options: EngineOptions = {},
  ) {
    this.o = resolveEngineOptions(options, services.deps.runners.values());
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${services.deps.ids.uuid().slice(0, 8)}`;
    this.pipeline = new RunPipeline(services, { runTimeoutMs: this.o.runTimeoutMs });
    // A job starts only with the time for its longest attempt left (see hasTimeFor).
    const longestAttempt = Math.max(this.o.runTimeoutMs, ...[...services.deps.runners.values()].map((r) => r.timeoutMs ?? 0));
    this.startMarginMs = Math.min(longestAttempt + 2_000, this.o.leaseMs - this.o.lookaheadMs - 1_500);
    this.retention = new RetentionJob(services.deps, options.retention);
    const able = (kind: JobKind) => (kind !== 'retention' || this.retention.enabled) && (kind !== 'certificate' || services.deps.certificateProbe != null);
    this.kinds = (options.kinds ?? JOB_KINDS).filter(able);
    this.meter = engineInstruments(services.deps.metrics);
    this.jobs = new ClaimedJobs(services.deps, this.meter);
    this.handlers = new JobHandlers(services.deps, this.pipeline, this.retention);
    this.watches = new SharedTimers(services.deps.clock);
  }

  get state(): EngineState {
    return this.current;
  }

  /** Jobs running now (those waiting for their runner's turn included). */
  get active(): number {
    return this.running.size;
  }

  /** Engine slots taken: running jobs less those waiting for their runner's turn. */
  private get occupied(): number {
    return this.running.size - this.waitingForRunner;
  }

  private get deps() {
    return this.services.deps;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** Makes sure every check has its schedule entries, then starts claiming. */
  async start(): Promise<void> {
    if (this.current !== 'stopped') return;
    this.current = 'running';
    await this.reconcile();
    if (this.current !== 'running') return;
    await this.poll();
  }

  /**
   * Stops claiming, lets running jobs finish for up to the deadline, aborts the rest and releases
   * every lease this process holds, so another process takes its entries (sessions' runs included) at once.
   */
  async stop(deadlineMs = this.o.stopDeadlineMs): Promise<void> {
    if (this.current !== 'running') return;
    this.current = 'stopping';
    this.pollTimer?.();
    this.pollTimer = null;
    this.dispatchTimer?.();
    this.dispatchTimer = null;
    // A claim in flight lands first, so what it claims is released below, not held for a lease.
    await this.claiming;
    this.jobs.clearQueued();
    const all = () => Promise.allSettled([...this.running.values()].map((r) => r.promise));
    if (this.running.size > 0) {
      let cancel: Cancel = () => {};
      // A deadline of 0 aborts at once (not at the clock's next timer).
      if (deadlineMs > 0) {
        const deadline = new Promise<void>((resolve) => {
          cancel = this.deps.clock.setTimer(new Date(this.now() + deadlineMs), resolve);
        });
        await Promise.race([all(), deadline]);
        cancel();
      }
      for (const r of this.running.values()) r.controller.abort(STOPPING);
      // A job that does not answer its abort (a store call that never returns) keeps no lease:
      // after as long again, the leases go back all the same.
      const again = new Promise<void>((resolve) => {
        cancel = this.deps.clock.setTimer(new Date(this.now() + Math.max(deadlineMs, 1_000)), resolve);
      });
      await Promise.race([all(), again]);
      cancel();
    }
    await this.deps.storage.schedule.release(this.owner).catch((err: unknown) => {
      this.deps.logger.warn('engine: could not release leases', { error: errorText(err) });
    });
    this.current = 'stopped';
  }

  /**
   * SessionLauncher: the session's runs are in the shared schedule already (the session service
   * put them there); this process looks for them at once rather than at its next poll.
   */
  launch(_session: CheckSession): void {
    if (this.current !== 'running') return;
    this.pollSoon();
  }

  /** SessionLauncher: cancelled sequences running here stop; queued ones never start. */
  cancel(session: CheckSession, sequenceIds: string[] | undefined): void {
    const chosen = sequenceIds ? new Set(sequenceIds) : null;
    const hit = (sid: string | undefined, seq: string | undefined) =>
      sid === session.checkSessionId && (chosen === null || (seq !== undefined && chosen.has(seq)));
    const dropped = this.jobs.sessionQueue.filter((j) => hit(j.claim.session?.checkSessionId, j.claim.session?.sequenceId));
    for (const job of dropped) {
      this.jobs.forget(job);
      void this.deps.storage.schedule.complete(job.claim, null).catch((err: unknown) => {
        // Its lease runs out; the next claim finds the sequence ended and completes it.
        this.deps.logger.warn('engine: could not remove a cancelled session run', { checkId: job.claim.checkId, error: errorText(err) });
      });
    }
    for (const r of this.running.values()) if (hit(r.session, r.sequence)) r.controller.abort(CANCELLED);
  }

  private async reconcile(): Promise<void> {
    const { storage, defaultLocation } = this.deps;
    const groups = new Map<string, Map<number, CheckGroup>>();
    const groupOf = async (accountId: string, id: number | null) => {
      if (id === null) return null;
      let byId = groups.get(accountId);
      if (!byId) groups.set(accountId, (byId = new Map((await storage.checkGroups.listAll(accountId)).map((g) => [g.id, g]))));
      return byId.get(id) ?? null;
    };
    const now = this.deps.clock.now();
    const retention = this.retention.entry(now);
    if (retention) await storage.schedule.ensure([retention]);
    let after: string | null = null;
    for (;;) {
      const page = await storage.checks.scan(after, 5_000);
      if (page.length === 0) break;
      const entries = [];
      for (const check of page) entries.push(...plannedEntries(check.accountId, check, await groupOf(check.accountId, check.groupId), defaultLocation, now));
      if (entries.length) await storage.schedule.ensure(entries);
      after = page[page.length - 1]!.id;
    }
  }

  /** Claims again as soon as the current claim (if any) is over. */
  private pollSoon(): void {
    if (this.current !== 'running') return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    queueMicrotask(() => void this.poll());
  }

  private async poll(): Promise<void> {
    if (this.current !== 'running' || this.polling) return;
    this.polling = true;
    this.pollAgain = false;
    let more = false;
    let claimed: () => void = () => {};
    this.claiming = new Promise<void>((resolve) => (claimed = resolve));
    try {
      await this.jobs.giveBackUnfinished();
      const room = this.jobs.claimRoom(this.occupied, this.o);
      const claimed = room === 0 ? [] : await this.deps.storage.schedule.claimDue(
        new Date(this.now() + this.o.lookaheadMs),
        this.services.serves,
        room,
        this.o.leaseMs,
        this.owner,
        this.kinds,
      );
      const sessions = this.jobs.take(claimed);
      if (sessions.length > 0) await admitSessions(this.jobs, this.deps, sessions);
      // A whole batch means more is due: claim again at once. A busy process's smaller claim
      // filled its queue (or went back, as a session run it could not read): its next poll will do.
      more = room === this.o.claimBatch && claimed.length >= room;
    } catch (err) {
      // The database is away: keep going, the next poll tries again.
      this.meter.claimFailures.inc();
      this.deps.logger.warn('engine: claiming due entries failed', { error: errorText(err) });
    } finally {
      this.polling = false;
      claimed();
    }
    if (this.current !== 'running') return;
    this.dispatch();
    await this.giveBackWaitingSessions();
    if (this.current !== 'running') return;
    this.pollTimer?.();
    this.pollTimer = null;
    if (more || this.pollAgain) queueMicrotask(() => void this.poll());
    else this.pollTimer = this.deps.clock.setTimer(new Date(this.now() + this.o.pollMs), () => void this.poll());
  }

  /**
   * Session runs still waiting for room when too little of their lease is left to start go back to
   * the schedule, due as they were, so no lease runs out while they wait; a later poll claims them
   * again, and the queue keeps them in groupOrder whenever they were claimed.
   */
  private async giveBackWaitingSessions(): Promise<void> {
    const late = this.jobs.sessionQueue.filter((j) => !this.hasTimeFor(j));
    if (late.length > 0) giveBackSessions(this.jobs, late);
  }

  /**
   * Whether a claimed job still has the time to run before another process may take its entry
   * over (claims look `lookaheadMs` ahead): its longest attempt and two seconds, or, with a lease
   * shorter than that, nearly the whole lease. A job without it is given back rather than started.
   */
  private hasTimeFor(job: ReadyJob): boolean {
    return this.takeoverAt(job.claim) - this.now() >= this.startMarginMs;
  }

  /** When another process's claim may take the entry over. */
  private takeoverAt(claim: ScheduledJob): number {
    return Date.parse(claim.leaseUntil) - this.o.lookaheadMs;
  }

  /** Starts every due job that fits, then sets the one timer for the next. */
  private dispatch(): void {
    if (this.current !== 'running') return;
    const now = this.now();
    while (this.occupied < this.o.concurrency) {
      const top = this.jobs.queue.peek();
      if (!top || top.due > now) break;
      this.jobs.queue.pop();
      if (this.hasTimeFor(top)) this.start1(top);
      else this.jobs.giveBackClaim(top.claim);
    }
    for (let i = 0; i < this.jobs.sessionQueue.length && this.occupied < this.o.concurrency;) {
      const job = this.jobs.sessionQueue[i]!;
      // While session runs are admitted, runs of groups wait: the poll dispatches once all are in order.
      if (this.jobs.groupFull(job) || (this.jobs.admitting && job.session?.group !== undefined)) {
        i++;
        continue;
      }
      if (!this.hasTimeFor(job)) {
        giveBackSessions(this.jobs, [job]);
        continue;
      }
      this.jobs.sessionQueue.splice(i, 1);
      this.start1(job);
    }
    const next = this.jobs.queue.peek();
    if (!next || this.occupied >= this.o.concurrency) {
      this.dispatchTimer?.();
      this.dispatchTimer = null;
      this.dispatchAt = Infinity;
      return;
    }
    if (this.dispatchTimer && this.dispatchAt === next.due) return;
    this.dispatchTimer?.();
    this.dispatchAt = next.due;
    this.dispatchTimer = this.deps.clock.setTimer(new Date(Math.max(next.due, now)), () => {
      this.dispatchTimer = null;
      this.dispatchAt = Infinity;
      this.dispatch();
    });
  }

  private start1(job: ReadyJob): void {
    const key = `${++this.startedJobs}`;
    const { claim } = job;
    const takeover = this.takeoverAt(claim);
    const { controller, release } = this.controllers.take(takeover - 500, claim.kind === 'session' || claim.session !== undefined);
    const ended = this.jobs.started(job);
    // A run waiting for its runner's turn (a browser pool) leaves its engine slot to runs of other types.
    let waiting = false;
    const onRunnerWait = (now: boolean) => {
      if (now === waiting) return;
      waiting = now;
      this.waitingForRunner += now ? 1 : -1;
      if (now) this.dispatch();
    };
    if (claim.kind === 'run') this.meter.schedulerLag.observe({}, Math.max(0, this.now() - job.due) / 1000);
    // Every process claims with its look ahead (claimDue(now + lookaheadMs)), so another one may
    // take the entry over lookaheadMs before leaseUntil: the job ends a second before that (its
    // attempts have time limits, it started with the time for one, and retries stop in time).
    const mustEndBy = new Date(takeover - 1_000);
    // One still going half a second before the takeover hangs (a plugin or the store never
    // answered): it is given up while this process still holds its entry, which completes and
    // re-arms (a session's sequence ends), rather than being run by two processes at once.
    let cancelWatch: Cancel = () => {};
    const watch = new Promise<never>((_, reject) => {
      cancelWatch = this.watches.at(takeover - 500, () => {
        const err = new Error(`it did not finish within its lease of ${Math.round(this.o.leaseMs / 1000)} s`);
        controller.abort(err);
        reject(err);
      });
    });
    const work = this.handlers.handle(job, { signal: controller.signal, mustEndBy, onRunnerWait });
    const promise = Promise.race([work, watch])
      .then((next) => (next === 'leave' ? undefined : this.deps.storage.schedule.complete(claim, next).then(() => undefined)))
      .catch((err: unknown) => this.failed(job, err))
      .finally(() => {
        cancelWatch();
        release();
        onRunnerWait(false);
        this.running.delete(key);
        ended();
        this.dispatch();
      });
    // The handler may go on after its watch gave it up; what it throws then is logged by failed() already.
    work.catch(() => {});
    this.running.set(key, {
      controller,
      promise,
      ...(claim.session ? { session: claim.session.checkSessionId, sequence: claim.session.sequenceId } : {}),
    });
  }

  /**
   * A job that threw or outlived its lease: logged once with its check, then its entry re-arms (a
   * session's sequence ends as an errored run naming the cause). Only a store that is away leaves
   * the entry to be given back once it answers.
   */
  private async failed(job: ReadyJob, err: unknown): Promise<void> {
    const { claim } = job;
    const unavailable = hasCode(err, 'UNAVAILABLE');
    this.deps.logger.error('engine: job failed', {
      kind: claim.kind, accountId: claim.accountId, checkId: claim.checkId, location: claim.location,
      checkSessionId: claim.session?.checkSessionId ?? null, error: errorText(err),
    });
    if (unavailable) {
      this.jobs.unfinished.push(claim);
      return;
    }
    try {
      await this.deps.storage.schedule.complete(claim, await this.handlers.recover(job, err));
    } catch (again) {
      // Its lease runs out and another claim takes the entry up.
      this.deps.logger.warn('engine: could not re-arm an entry after its job failed', { kind: claim.kind, checkId: claim.checkId, error: errorText(again) });
    }
  }
}
