/*
 * The engine's bookkeeping of claimed schedule entries: the queue of claimed jobs by due time, the
 * queue of claimed session runs (kept in groupOrder by session-admission.ts), the entries this
 * process holds (so an entry runs once at a time here), the running count of each group, and the
 * claims given back to the schedule.
 */
import type { RunSource } from '../ports/runner.js';
import type { ScheduledJob } from '../ports/storage.js';
import type { ServiceDeps } from '../services/deps.js';
import type { EngineInstruments } from './instruments.js';
import { MinHeap } from './min-heap.js';

/** A claimed schedule entry waiting in this process for its time (a run) or its turn (a session's run). */
export interface ReadyJob {
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
export interface GroupSlot {
  /** The group, as account and group id. */
  id: string;
  order: number;
  limit: number;
}

/** An entry's identity in the schedule: kind, check, location and (for a session's run) sequence. */
const entryKey = (e: ScheduledJob) => `${e.kind}|${e.checkId}|${e.location}|${e.session?.sequenceId ?? ''}`;

export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class ClaimedJobs {
  /** Claimed jobs other than session runs, by due time. */
  readonly queue = new MinHeap<ReadyJob>((a, b) => a.due - b.due);
  /** Claimed session runs, ordered by groupOrder, until their group (and the engine) has room. */
  sessionQueue: ReadyJob[] = [];
  /**
   * Whether claimed session runs are being admitted (their session and group read, one claim after
   * another): until they are all queued and sorted, no run of a group starts, since a run of a
   * lower groupOrder may still be on its way in (or out and in again, claimed anew).
   */
  admitting = false;
  /**
   * The entries this process holds (queued or running), by identity. A claim of an entry held
   * already (its lease ran out while it waited, and this process claimed it again) takes the
   * queued one's place, or is left to the running one: an entry is run once at a time here.
   */
  private readonly held = new Map<string, { job: ReadyJob; running: boolean }>();
  /** Session runs running now, by group. */
  private readonly groupRunning = new Map<string, number>();
  /** Claimed entries whose job could not be recorded because the store was away; given back once it answers. */
  unfinished: ScheduledJob[] = [];
  private serial = 0;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'storage' | 'logger'>,
    private readonly meter: EngineInstruments,
  ) {}

  /** A number that orders jobs by when they were claimed. */
  nextSeq(): number {
    return ++this.serial;
  }

  /**
   * Takes in the entries of a claim: queues each by due time, or leaves it to the job of this
   * process that runs it already. Answers the session runs among them, which wait for admission.
   */
  take(claimed: readonly ScheduledJob[]): ScheduledJob[] {
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
      else this.hold(this.queue, { due: Date.parse(job.dueAt), claim: job, seq: this.nextSeq() });
    }
    return sessions;
  }

  /**
   * How many entries the next claim takes: a batch (`claimBatch`) while the process has a free
   * slot; with every slot taken, only enough for the jobs it holds already (due now or claimed
   * ahead) to fill its slots once, none while as many wait. A busy process so leaves due entries to
   * processes that can start them, instead of holding them under its lease while they wait.
   */
  claimRoom(occupied: number, o: { concurrency: number; claimBatch: number }): number {
    if (occupied < o.concurrency) return o.claimBatch;
    const waiting = this.queue.size + this.sessionQueue.length;
    return Math.max(0, Math.min(o.claimBatch, o.concurrency - waiting));
  }

  /** Queues a claimed job and notes that this process holds its entry. */
  hold(queue: MinHeap<ReadyJob> | ReadyJob[], job: ReadyJob): void {
    this.held.set(entryKey(job.claim), { job, running: false });
    queue.push(job);
  }

  /** Drops a queued job (its entry was claimed again, or goes back). */
  forget(job: ReadyJob): void {
    this.queue.removeWhere((j) => j === job);
    this.sessionQueue = this.sessionQueue.filter((j) => j !== job);
    if (this.held.get(entryKey(job.claim))?.job === job) this.held.delete(entryKey(job.claim));
  }

  /** Whether the group of a session run has as many running as it may. */
  groupFull(job: ReadyJob): boolean {
    const group = job.session?.group;
    return group !== undefined && (this.groupRunning.get(group.id) ?? 0) >= group.limit;
  }

  /** Notes that a job starts; answers what to call when it is over. */
  started(job: ReadyJob): () => void {
    const entry = entryKey(job.claim);
    this.held.set(entry, { job, running: true });
    const groupId = job.session?.group?.id;
    if (groupId !== undefined) this.groupRunning.set(groupId, (this.groupRunning.get(groupId) ?? 0) + 1);
    return () => {
      if (this.held.get(entry)?.job === job) this.held.delete(entry);
      if (groupId !== undefined) this.groupRunning.set(groupId, (this.groupRunning.get(groupId) ?? 1) - 1);
    };
  }

  /** Puts a claimed entry back as it was, due at its own time, for the next claim. */
  giveBackClaim(claim: ScheduledJob): void {
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
  async giveBackUnfinished(): Promise<void> {
    while (this.unfinished.length > 0) {
      const claim = this.unfinished[0]!;
      await this.deps.storage.schedule.complete(claim, new Date(claim.dueAt));
      this.unfinished.shift();
    }
  }

  /** Forgets every queued job (stop() releases their leases); running ones stay held until they end. */
  clearQueued(): void {
    for (const [key, h] of this.held) if (!h.running) this.held.delete(key);
    this.queue.clear();
    this.sessionQueue = [];
    this.unfinished = [];
  }
}
