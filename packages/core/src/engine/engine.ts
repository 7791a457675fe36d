import { hostname } from 'node:os';
import type { CheckGroup } from '../model/check-group.js';
import type { CheckSession } from '../model/check-session.js';
import type { Cancel } from '../ports/clock.js';
import type { RunSource } from '../ports/runner.js';
import type { ScheduledJob, ServedLocations } from '../ports/storage.js';
import { ALERT_TICK_LOCATION, nextDueIn, plannedEntries, runLocations, SSL_CHECK_LOCATION } from '../rules/schedule-plan.js';
import type { SessionLauncher } from '../services/check-sessions.js';
import { engineInstruments, type EngineInstruments } from './instruments.js';
import { MinHeap } from './min-heap.js';
import { RETENTION_LOCATION, RetentionJob, type RetentionOptions } from './retention-job.js';
import { RunPipeline, type PipelineServices, type RunOutcome } from './run-pipeline.js';

export interface EngineOptions {
  /**
   * Runs at the same time in this process. Default 100: most runs wait on the network and the
   * store, and a runner that needs fewer at once (a browser pool) sets its own `concurrency`.
   */
  concurrency?: number;
  /**
   * How long a claimed slot belongs to this process. A process that dies loses its slots to the
   * others after this; a run (with its retries) is kept inside it. Default 120 s, or the longest
   * time limit of a registered runner plus 30 s where that is longer.
   */
  leaseMs?: number;
  /** Slots due within this much are claimed ahead and started on time. Default 1 s. */
  lookaheadMs?: number;
  /** How often the shared schedule is read for new due slots. Default 500 ms. */
  pollMs?: number;
  /** Most slots claimed at once. Default 500. */
  claimBatch?: number;
  /** Time limit of one attempt. Default 30 s. */
  runTimeoutMs?: number;
  /** How long stop() lets running jobs finish before it aborts them. Default 30 s. */
  stopDeadlineMs?: number;
  /** This process's name on the leases it holds. Default host:pid:random. */
  owner?: string;
  /** Retention of check results (see RetentionOptions); false turns it off in this process. Default: on, 90 days, hourly. */
  retention?: RetentionOptions | false;
}

export interface EngineServices extends PipelineServices {
  serves: ServedLocations;
}

interface ReadyJob {
  due: number;
  /** Session runs of a group: at most `limit` of them at once, lower groupOrder first. */
  group?: { id: number; order: number; limit: number };
  seq?: number;
  spec: {
    accountId: string;
    checkId: string;
    location: string;
    runSource: RunSource;
    session?: { checkSessionId: string; sequenceId: string; projectId?: string | null; environment?: string | null };
  };
  claim?: ScheduledJob;
}

export type EngineState = 'stopped' | 'running' | 'stopping';

/**
 * The scheduler and run loop of one process. Due slots are claimed from the shared schedule (so
 * several processes on one database run each slot once), held in one priority queue by due time
 * with one timer for the earliest, and run through the pipeline with bounded concurrency.
 */
export class Engine implements SessionLauncher {
  readonly owner: string;
  private readonly pipeline: RunPipeline;
  private readonly meter: EngineInstruments;
  private readonly queue = new MinHeap<ReadyJob>((a, b) => a.due - b.due);
  /** Session runs wait here, ordered by groupOrder, until their group has room. */
  private sessionQueue: ReadyJob[] = [];
  private pendingLaunches = 0;
  private readonly groupRunning = new Map<number, number>();
  private readonly running = new Map<string, { controller: AbortController; promise: Promise<void>; session?: string; sequence?: string }>();
  private dispatchTimer: Cancel | null = null;
  private dispatchAt = Infinity;
  private pollTimer: Cancel | null = null;
  private polling = false;
  private current: EngineState = 'stopped';
  private readonly o: Required<Omit<EngineOptions, 'owner' | 'retention'>>;
  /** Retention of check results, run from its own entry of the shared schedule. */
  readonly retention: RetentionJob;
  private serial = 0;
  /** Running jobs that wait for their runner's turn: they hold no engine slot meanwhile. */
  private waitingForRunner = 0;
  /** Claimed slots whose run could not be recorded because the store was away; given back once it answers. */
  private unfinished: ScheduledJob[] = [];

  constructor(
    private readonly services: EngineServices,
    options: EngineOptions = {},
  ) {
    this.o = {
      concurrency: options.concurrency ?? 100,
      leaseMs: options.leaseMs ?? Math.max(120_000, ...[...services.deps.runners.values()].map((r) => (r.timeoutMs ?? 0) + 30_000)),
      lookaheadMs: options.lookaheadMs ?? 1_000,
      pollMs: options.pollMs ?? 500,
      claimBatch: options.claimBatch ?? 500,
      runTimeoutMs: options.runTimeoutMs ?? 30_000,
      stopDeadlineMs: options.stopDeadlineMs ?? 30_000,
    };
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${services.deps.ids.uuid().slice(0, 8)}`;
    this.pipeline = new RunPipeline(services, { runTimeoutMs: this.o.runTimeoutMs });
    this.retention = new RetentionJob(services.deps, options.retention);
    this.meter = engineInstruments(services.deps.metrics);
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
   * every lease this process holds, so another process takes its slots at once.
   */
  async stop(deadlineMs = this.o.stopDeadlineMs): Promise<void> {
    if (this.current !== 'running') return;
    this.current = 'stopping';
    this.pollTimer?.();
    this.pollTimer = null;
    this.dispatchTimer?.();
    this.dispatchTimer = null;
    this.queue.clear();
    this.sessionQueue = [];
    this.unfinished = [];
    const all = () => Promise.allSettled([...this.running.values()].map((r) => r.promise));
    if (this.running.size > 0) {
      let cancel: Cancel = () => {};
      const deadline = new Promise<void>((resolve) => {
        cancel = this.deps.clock.setTimer(new Date(this.now() + deadlineMs), resolve);
      });
      await Promise.race([all(), deadline]);
      cancel();
      for (const r of this.running.values()) r.controller.abort(new Error('engine stopping'));
      await all();
    }
    await this.deps.storage.schedule.release(this.owner).catch((err: unknown) => {
      this.deps.logger.warn('engine: could not release leases', { error: String(err) });
    });
    this.current = 'stopped';
  }

  /**
   * SessionLauncher: a session's sequences run at once, through the same pipeline; the runs of a
   * group's checks keep the group's concurrency and start in the checks' groupOrder.
   */
  launch(session: CheckSession): void {
    if (this.current !== 'running') return;
    this.pendingLaunches++;
    void this.groupSlot(session)
      .then((group) => this.enqueueSession(session, group))
      .catch((err: unknown) => {
        this.deps.logger.warn('engine: could not read the group of a session', { error: String(err) });
        this.enqueueSession(session, undefined);
      })
      .finally(() => {
        this.pendingLaunches--;
        this.dispatch();
      });
  }

  private async groupSlot(session: CheckSession): Promise<ReadyJob['group']> {
    const check = await this.deps.storage.checks.get(session.accountId, session.checkId);
    if (!check || check.groupId === null) return undefined;
    const group = await this.deps.storage.checkGroups.get(session.accountId, check.groupId);
    if (!group) return undefined;
    return { id: group.id, order: check.groupOrder ?? Number.MAX_SAFE_INTEGER, limit: Math.max(1, group.concurrency) };
  }

  private enqueueSession(session: CheckSession, group: ReadyJob['group']): void {
    for (const seq of session.sequences) {
      this.sessionQueue.push({
        due: this.now(),
        seq: ++this.serial,
        ...(group ? { group } : {}),
        spec: {
          accountId: session.accountId,
          checkId: session.checkId,
          location: seq.runLocation,
          runSource: session.runSource,
          session: {
            checkSessionId: session.checkSessionId, sequenceId: seq.sequenceId, projectId: session.projectId, environment: session.environment,
          },
        },
      });
    }
    this.sessionQueue.sort((a, b) => (a.group?.order ?? Number.MAX_SAFE_INTEGER) - (b.group?.order ?? Number.MAX_SAFE_INTEGER) || a.seq! - b.seq!);
  }

  /** SessionLauncher: cancelled sequences stop; queued ones never start. */
  cancel(session: CheckSession, sequenceIds: string[] | undefined): void {
    const chosen = sequenceIds ? new Set(sequenceIds) : null;
    const hit = (sid: string | undefined, seq: string | undefined) =>
      sid === session.checkSessionId && (chosen === null || (seq !== undefined && chosen.has(seq)));
    this.queue.removeWhere((j) => hit(j.spec.session?.checkSessionId, j.spec.session?.sequenceId));
    this.sessionQueue = this.sessionQueue.filter((j) => !hit(j.spec.session?.checkSessionId, j.spec.session?.sequenceId));
    for (const r of this.running.values()) if (hit(r.session, r.sequence)) r.controller.abort(new Error('cancelled'));
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

  private async poll(): Promise<void> {
    if (this.current !== 'running' || this.polling) return;
    this.polling = true;
    try {
      await this.giveBack();
      const claimed = await this.deps.storage.schedule.claimDue(
        new Date(this.now() + this.o.lookaheadMs),
        this.services.serves,
        this.o.claimBatch,
        this.o.leaseMs,
        this.owner,
      );
      if (claimed.length > 0) this.meter.claims.inc({}, claimed.length);
      for (const job of claimed) {
        if (job.reclaimed) {
          this.meter.leaseExpiries.inc();
          this.deps.logger.info('engine: claimed a slot whose lease had run out', { accountId: job.accountId, checkId: job.checkId, location: job.location, dueAt: job.dueAt });
        }
        this.queue.push({
          due: Date.parse(job.dueAt),
          claim: job,
          spec: { accountId: job.accountId, checkId: job.checkId, location: job.location, runSource: 'SCHEDULER' },
        });
      }
      // A full batch means more is due: claim again at once.
      if (claimed.length >= this.o.claimBatch) queueMicrotask(() => void this.poll());
    } catch (err) {
      // The database is away: keep going, the next poll tries again.
      this.meter.claimFailures.inc();
      this.deps.logger.warn('engine: claiming due slots failed', { error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.polling = false;
    }
    if (this.current !== 'running') return;
    this.dispatch();
    this.pollTimer?.();
    this.pollTimer = this.deps.clock.setTimer(new Date(this.now() + this.o.pollMs), () => void this.poll());
  }

  /**
   * Makes the slots whose run the store's outage interrupted due again at their own time, so they
   * run as soon as it is back rather than when their lease runs out (a result already stored makes
   * the run again a duplicate, which completes what the first one left undone).
   */
  private async giveBack(): Promise<void> {
    while (this.unfinished.length > 0) {
      const claim = this.unfinished[0]!;
      await this.deps.storage.schedule.complete(claim, new Date(claim.dueAt));
      this.unfinished.shift();
    }
  }

  /** Starts every due job that fits, then sets the one timer for the next. */
  private dispatch(): void {
    if (this.current !== 'running') return;
    const now = this.now();
    while (this.occupied < this.o.concurrency) {
      const top = this.queue.peek();
      if (!top || top.due > now) break;
      this.queue.pop();
      this.start1(top);
    }
    // Session runs wait while launches of the same trigger are still being read, so order holds.
    if (this.pendingLaunches === 0) {
      for (let i = 0; i < this.sessionQueue.length && this.occupied < this.o.concurrency;) {
        const job = this.sessionQueue[i]!;
        if (job.group && (this.groupRunning.get(job.group.id) ?? 0) >= job.group.limit) {
          i++;
          continue;
        }
        this.sessionQueue.splice(i, 1);
        this.start1(job);
      }
    }
    const next = this.queue.peek();
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
    const key = `${++this.serial}`;
    const controller = new AbortController();
    const groupId = job.group?.id;
    if (groupId !== undefined) this.groupRunning.set(groupId, (this.groupRunning.get(groupId) ?? 0) + 1);
    const mustEndBy = job.claim ? new Date(Date.parse(job.claim.leaseUntil) - 1_000) : undefined;
    const claim = job.claim;
    // A run waiting for its runner's turn (a browser pool) leaves its engine slot to runs of other types.
    let waiting = false;
    const onRunnerWait = (now: boolean) => {
      if (now === waiting) return;
      waiting = now;
      this.waitingForRunner += now ? 1 : -1;
      if (now) this.dispatch();
    };
    if (claim) this.meter.schedulerLag.observe({}, Math.max(0, this.now() - job.due) / 1000);
    const special = claim?.location === ALERT_TICK_LOCATION ? this.pipeline.tick.bind(this.pipeline)
      : claim?.location === SSL_CHECK_LOCATION ? this.pipeline.certificate.bind(this.pipeline)
        : claim?.location === RETENTION_LOCATION ? () => this.retention.run(mustEndBy!, controller.signal)
          : null;
    const work = claim && special
      ? special(claim.accountId, claim.checkId).then((next) => this.deps.storage.schedule.complete(claim, next).then(() => undefined))
      : this.pipeline
        .run({ ...job.spec, dueAt: new Date(job.due), mustEndBy, onRunnerWait }, controller.signal)
        .then((outcome) => (claim ? this.complete(claim, outcome) : undefined));
    const promise = work
      .catch((err: unknown) => {
        if (claim && (err as { code?: string } | null)?.code === 'UNAVAILABLE') this.unfinished.push(claim);
        this.deps.logger.error('engine: run failed', {
          accountId: job.spec.accountId, checkId: job.spec.checkId, location: job.spec.location, runSource: job.spec.runSource,
          checkSessionId: job.spec.session?.checkSessionId ?? null, error: err instanceof Error ? err.message : String(err),
        });
      })
      .finally(() => {
        onRunnerWait(false);
        this.running.delete(key);
        if (groupId !== undefined) this.groupRunning.set(groupId, (this.groupRunning.get(groupId) ?? 1) - 1);
        this.dispatch();
      });
    this.running.set(key, {
      controller,
      promise,
      ...(job.spec.session ? { session: job.spec.session.checkSessionId, sequence: job.spec.session.sequenceId } : {}),
    });
  }

  /** Moves the slot's entry on to the check's next run in that location (or drops it). */
  private async complete(claim: ScheduledJob, outcome: RunOutcome): Promise<void> {
    // Cut short by stop(): the slot keeps its time, and stop() gives its lease back.
    if (outcome.kind === 'skipped' && outcome.reason === 'stopped') return;
    // A deleted or deactivated check leaves the schedule; a paused one keeps its slots.
    const keep = outcome.kind === 'ran' || outcome.reason === 'paused' || outcome.reason === 'cancelled' || outcome.reason === 'duplicate' || outcome.reason === 'busy';
    let next: Date | null = null;
    if (keep && outcome.forRun) {
      const { check, group } = outcome.forRun;
      next = nextDueIn(check, runLocations(check, group, this.deps.defaultLocation), claim.location, this.deps.clock.now());
    }
    await this.deps.storage.schedule.complete(claim, next);
  }
}
