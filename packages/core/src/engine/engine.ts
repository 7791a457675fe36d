/*
 * The engine of one process: claims, the queues of claimed jobs, the handler of each job kind, and
 * what a job that fails or hangs leaves behind. One file, because these share the claimed jobs'
 * bookkeeping (held entries, group slots, leases); what a run does is in run-pipeline.ts.
 */
import { hostname } from 'node:os';
import type { CheckGroup } from '../model/check-group.js';
import type { CheckSession } from '../model/check-session.js';
import type { Cancel } from '../ports/clock.js';
import type { RunSource } from '../ports/runner.js';
import { isFinalSessionStatus } from '../model/check-session.js';
import { JOB_KINDS, type JobKind, type ScheduledJob, type ServedLocations } from '../ports/storage.js';
import { ALERT_TICK_MS, nextDueIn, plannedEntries, runLocations } from '../rules/schedule-plan.js';
import type { SessionLauncher } from '../services/check-sessions.js';
import { engineInstruments, type EngineInstruments } from './instruments.js';
import { MinHeap } from './min-heap.js';
import { RetentionJob, type RetentionOptions } from './retention-job.js';
import { FAILED_CERTIFICATE_RETRY_MS } from './certificate-look.js';
import { RunPipeline, type PipelineServices } from './run-pipeline.js';
import { CANCELLED, STOPPING } from './run-spec.js';

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
  /**
   * The kinds of schedule entries this process claims. Default every kind it can do: not
   * `retention` when retention is off here, not `certificate` without a certificate probe (so
   * those entries go to a process that does them). A command that only runs the check sessions it
   * starts takes `['session']`.
   */
  kinds?: JobKind[];
}

export interface EngineServices extends PipelineServices {
  serves: ServedLocations;
}

/** A claimed schedule entry waiting in this process for its time (a run) or its turn (a session's run). */
interface ReadyJob {
  due: number;
  claim: ScheduledJob;
  seq: number;
  /** A session's run: what the pipeline needs of its session, and its group's limit and order. */
  session?: {
    runSource: RunSource;
    projectId: string | null;
    environment: string | null;
    startedAt: string;
    ended: boolean;
    group?: GroupSlot;
  };
}

/** A session run's group: at most `limit` of its runs at once, lower `order` (groupOrder) first. */
interface GroupSlot {
  /** The group, as account and group id. */
  id: string;
  order: number;
  limit: number;
}

/** What a job's handler asks of its entry: move it to a time, remove it (null), or leave it as it is. */
type Next = Date | null | 'leave';

interface JobContext {
  signal: AbortSignal;
  /** When the job must be over: a second before another process may take its entry over (see start1). */
  mustEndBy: Date;
  onRunnerWait: (waiting: boolean) => void;
}

type JobHandler = (job: ReadyJob, ctx: JobContext) => Promise<Next>;

export type EngineState = 'stopped' | 'running' | 'stopping';

/** An entry's identity in the schedule: kind, check, location and (for a session's run) sequence. */
const entryKey = (e: ScheduledJob) => `${e.kind}|${e.checkId}|${e.location}|${e.session?.sequenceId ?? ''}`;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

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
  private readonly queue = new MinHeap<ReadyJob>((a, b) => a.due - b.due);
  /** Claimed session runs, ordered by groupOrder, until their group (and the engine) has room. */
  private sessionQueue: ReadyJob[] = [];
  private readonly groupRunning = new Map<string, number>();
  private readonly running = new Map<string, { controller: AbortController; promise: Promise<void>; session?: string; sequence?: string }>();
  private dispatchTimer: Cancel | null = null;
  private dispatchAt = Infinity;
  private pollTimer: Cancel | null = null;
  private polling = false;
  private pollAgain = false;
  /**
   * The entries this process holds (queued or running), by identity. A claim of an entry held
   * already (its lease ran out while it waited, and this process claimed it again) takes the
   * queued one's place, or is left to the running one: an entry is run once at a time here.
   */
  private readonly held = new Map<string, { job: ReadyJob; running: boolean }>();
  /** The claim in flight, if any (stop() waits for it). */
  private claiming: Promise<void> = Promise.resolve();
  private current: EngineState = 'stopped';
  private readonly o: Required<Omit<EngineOptions, 'owner' | 'retention' | 'kinds'>>;
  private readonly kinds: JobKind[];
  private readonly startMarginMs: number;
  /** Retention of check results, run from its own entry of the shared schedule. */
  readonly retention: RetentionJob;
  private serial = 0;
  /** Running jobs that wait for their runner's turn: they hold no engine slot meanwhile. */
  private waitingForRunner = 0;
  /** Claimed entries whose job could not be recorded because the store was away; given back once it answers. */
  private unfinished: ScheduledJob[] = [];
  private readonly handlers: Record<JobKind, JobHandler>;

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
    // A job starts only with the time for its longest attempt left (see hasTimeFor).
    const longestAttempt = Math.max(this.o.runTimeoutMs, ...[...services.deps.runners.values()].map((r) => r.timeoutMs ?? 0));
    this.startMarginMs = Math.min(longestAttempt + 2_000, this.o.leaseMs - this.o.lookaheadMs - 1_500);
    this.retention = new RetentionJob(services.deps, options.retention);
    const able = (kind: JobKind) => (kind !== 'retention' || this.retention.enabled) && (kind !== 'certificate' || services.deps.certificateProbe != null);
    this.kinds = (options.kinds ?? JOB_KINDS).filter(able);
    this.meter = engineInstruments(services.deps.metrics);
    this.handlers = {
      run: (job, ctx) => this.runSlot(job, ctx),
      session: (job, ctx) => this.runSession(job, ctx),
      'alert-tick': (job) => this.pipeline.tick(job.claim.accountId, job.claim.checkId),
      certificate: (job) => this.pipeline.certificate(job.claim.accountId, job.claim.checkId),
      retention: (_job, ctx) => this.retention.run(ctx.mustEndBy, ctx.signal),
    };
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
    for (const [key, h] of this.held) if (!h.running) this.held.delete(key);
    this.queue.clear();
    this.sessionQueue = [];
    this.unfinished = [];
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
    const dropped = this.sessionQueue.filter((j) => hit(j.claim.session?.checkSessionId, j.claim.session?.sequenceId));
    for (const job of dropped) {
      this.forget(job);
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
      await this.giveBack();
      const claimed = await this.deps.storage.schedule.claimDue(
        new Date(this.now() + this.o.lookaheadMs),
        this.services.serves,
        this.o.claimBatch,
        this.o.leaseMs,
        this.owner,
        this.kinds,
      );
      if (claimed.length > 0) this.meter.claims.inc({}, claimed.length);
      const sessions: ScheduledJob[] = [];
      for (const job of claimed) {
        if (job.reclaimed) {
          this.meter.leaseExpiries.inc();
          this.deps.logger.info('engine: claimed an entry whose lease had run out', {
            kind: job.kind, accountId: job.accountId, checkId: job.checkId, location: job.location, dueAt: job.dueAt,
            checkSessionId: job.session?.checkSessionId ?? null,
          });
        }
        const mine = this.held.get(entryKey(job));
        if (mine?.running) continue;
        if (mine) this.forget(mine.job);
        if (job.kind === 'session') sessions.push(job);
        else this.hold(this.queue, { due: Date.parse(job.dueAt), claim: job, seq: ++this.serial });
      }
      if (sessions.length > 0) await this.admitSessions(sessions);
      // A full batch means more is due: claim again at once.
      more = claimed.length >= this.o.claimBatch;
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
   * Reads what the claimed session runs need (their session and group) and queues them in
   * groupOrder; a run whose session is gone or whose sequence ended already (cancelled) is done.
   */
  private async admitSessions(claims: ScheduledJob[]): Promise<void> {
    const groups = new Map<string, GroupSlot | undefined>();
    for (const claim of claims) {
      try {
        await this.admitSession(claim, groups);
      } catch (err) {
        // This one goes back as it was; the others of the claim are admitted all the same.
        this.deps.logger.warn('engine: could not read what a session run needs', { checkId: claim.checkId, checkSessionId: claim.session?.checkSessionId ?? null, error: errorText(err) });
        this.giveBackClaim(claim);
      }
    }
    const order = (j: ReadyJob) => j.session?.group?.order ?? Number.MAX_SAFE_INTEGER;
    this.sessionQueue.sort((a, b) => order(a) - order(b) || a.session!.startedAt.localeCompare(b.session!.startedAt) || a.seq - b.seq);
  }

  private async admitSession(claim: ScheduledJob, groups: Map<string, GroupSlot | undefined>): Promise<void> {
    const { storage } = this.deps;
    const ref = claim.session!;
    const session = await storage.checkSessions.get(claim.accountId, ref.checkSessionId);
    const sequence = session?.sequences.find((s) => s.sequenceId === ref.sequenceId);
    if (!session || !sequence || sequence.status === 'CANCELLED') {
      await storage.schedule.complete(claim, null);
      return;
    }
    const key = `${claim.accountId}:${claim.checkId}`;
    if (!groups.has(key)) groups.set(key, await this.groupSlot(claim.accountId, claim.checkId));
    const group = groups.get(key);
    this.hold(this.sessionQueue, {
      due: Date.parse(claim.dueAt),
      claim,
      seq: ++this.serial,
      session: {
        runSource: session.runSource, projectId: session.projectId ?? null, environment: session.environment ?? null, startedAt: session.startedAt,
        // Ended by a process that died before it removed the entry: what it may have left
        // undone (the alert step) is finished from the stored result; nothing runs again.
        ended: isFinalSessionStatus(sequence.status),
        ...(group ? { group } : {}),
      },
    });
  }

  private async groupSlot(accountId: string, checkId: string): Promise<GroupSlot | undefined> {
    const check = await this.deps.storage.checks.get(accountId, checkId);
    if (!check || check.groupId === null) return undefined;
    const group = await this.deps.storage.checkGroups.get(accountId, check.groupId);
    if (!group) return undefined;
    return { id: `${accountId}:${group.id}`, order: check.groupOrder ?? Number.MAX_SAFE_INTEGER, limit: Math.max(1, group.concurrency) };
  }

  /**
   * Session runs still waiting for room when too little of their lease is left to start go back to
   * the schedule, due as they were, so no lease runs out while they wait; a later poll claims them
   * again, and the queue keeps them in groupOrder whenever they were claimed.
   */
  private async giveBackWaitingSessions(): Promise<void> {
    const late = this.sessionQueue.filter((j) => !this.hasTimeFor(j));
    if (late.length > 0) this.giveBackSessions(late);
  }

  /**
   * Gives back queued session runs, each with the runs of its group queued behind it: claimed
   * later, those would still have the time to start, and must not start before it (groupOrder).
   * They come back together at the next claim and are queued in order again.
   */
  private giveBackSessions(late: ReadyJob[]): void {
    const from = new Map<string, number>();
    for (const job of late) {
      const id = job.session?.group?.id;
      const at = this.sessionQueue.indexOf(job);
      if (id !== undefined && at >= 0 && at < (from.get(id) ?? Infinity)) from.set(id, at);
    }
    const back = this.sessionQueue.filter((j, k) => late.includes(j) || (j.session?.group !== undefined && k >= (from.get(j.session.group.id) ?? Infinity)));
    this.sessionQueue = this.sessionQueue.filter((j) => !back.includes(j));
    for (const job of back) this.giveBackClaim(job.claim);
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

  /** Queues a claimed job and notes that this process holds its entry. */
  private hold(queue: MinHeap<ReadyJob> | ReadyJob[], job: ReadyJob): void {
    this.held.set(entryKey(job.claim), { job, running: false });
    queue.push(job);
  }

  /** Drops a queued job (its entry was claimed again, or goes back). */
  private forget(job: ReadyJob): void {
    this.queue.removeWhere((j) => j === job);
    this.sessionQueue = this.sessionQueue.filter((j) => j !== job);
    if (this.held.get(entryKey(job.claim))?.job === job) this.held.delete(entryKey(job.claim));
  }

  /** Puts a claimed entry back as it was, due at its own time, for the next claim. */
  private giveBackClaim(claim: ScheduledJob): void {
    const mine = this.held.get(entryKey(claim));
    if (mine && mine.job.claim === claim) this.held.delete(entryKey(claim));
    void this.deps.storage.schedule.complete(claim, new Date(claim.dueAt)).catch((err: unknown) => {
      // Its lease runs out instead.
      this.deps.logger.warn('engine: could not give a claimed entry back', { kind: claim.kind, checkId: claim.checkId, error: errorText(err) });
    });
  }

  /**
   * Makes the entries whose job the store's outage interrupted due again at their own time, so they
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
      if (this.hasTimeFor(top)) this.start1(top);
      else this.giveBackClaim(top.claim);
    }
    for (let i = 0; i < this.sessionQueue.length && this.occupied < this.o.concurrency;) {
      const job = this.sessionQueue[i]!;
      const group = job.session?.group;
      if (group && (this.groupRunning.get(group.id) ?? 0) >= group.limit) {
        i++;
        continue;
      }
      if (!this.hasTimeFor(job)) {
        this.giveBackSessions([job]);
        continue;
      }
      this.sessionQueue.splice(i, 1);
      this.start1(job);
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
    const { claim } = job;
    const entry = entryKey(claim);
    this.held.set(entry, { job, running: true });
    const groupId = job.session?.group?.id;
    if (groupId !== undefined) this.groupRunning.set(groupId, (this.groupRunning.get(groupId) ?? 0) + 1);
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
    const takeover = this.takeoverAt(claim);
    const mustEndBy = new Date(takeover - 1_000);
    // One still going half a second before the takeover hangs (a plugin or the store never
    // answered): it is given up while this process still holds its entry, which completes and
    // re-arms (a session's sequence ends), rather than being run by two processes at once.
    let cancelWatch: Cancel = () => {};
    const watch = new Promise<never>((_, reject) => {
      cancelWatch = this.deps.clock.setTimer(new Date(takeover - 500), () => {
        const err = new Error(`it did not finish within its lease of ${Math.round(this.o.leaseMs / 1000)} s`);
        controller.abort(err);
        reject(err);
      });
    });
    const work = this.handlers[claim.kind](job, { signal: controller.signal, mustEndBy, onRunnerWait });
    const promise = Promise.race([work, watch])
      .then((next) => (next === 'leave' ? undefined : this.deps.storage.schedule.complete(claim, next).then(() => undefined)))
      .catch((err: unknown) => this.failed(job, err))
      .finally(() => {
        cancelWatch();
        onRunnerWait(false);
        this.running.delete(key);
        if (this.held.get(entry)?.job === job) this.held.delete(entry);
        if (groupId !== undefined) this.groupRunning.set(groupId, (this.groupRunning.get(groupId) ?? 1) - 1);
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
    const unavailable = (err as { code?: string } | null)?.code === 'UNAVAILABLE';
    this.deps.logger.error('engine: job failed', {
      kind: claim.kind, accountId: claim.accountId, checkId: claim.checkId, location: claim.location,
      checkSessionId: claim.session?.checkSessionId ?? null, error: errorText(err),
    });
    if (unavailable) {
      this.unfinished.push(claim);
      return;
    }
    try {
      await this.deps.storage.schedule.complete(claim, await this.recover(job, err));
    } catch (again) {
      // Its lease runs out and another claim takes the entry up.
      this.deps.logger.warn('engine: could not re-arm an entry after its job failed', { kind: claim.kind, checkId: claim.checkId, error: errorText(again) });
    }
  }

  /** When a failed job's entry is due again (null: it is done). */
  private async recover(job: ReadyJob, err: unknown): Promise<Date | null> {
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
