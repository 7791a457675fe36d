/*
 * The options of an engine (EngineOptions) and their defaults: concurrency, lease, claim look
 * ahead and batch, time limits, and the kinds of schedule entries a process claims.
 */
import type { Runner } from '../ports/runner.js';
import type { JobKind } from '../ports/storage.js';
import type { RetentionOptions } from './retention-job.js';

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
  /** Most slots claimed at once (fewer while every slot is taken). Default 500. */
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

/** The engine's options with their defaults filled in (owner, retention and kinds are resolved where they are used). */
export type ResolvedEngineOptions = Required<Omit<EngineOptions, 'owner' | 'retention' | 'kinds'>>;

/** Fills in the defaults; the lease grows to cover the longest time limit of a registered runner. */
export function resolveEngineOptions(options: EngineOptions, runners: Iterable<Runner>): ResolvedEngineOptions {
  return {
    concurrency: options.concurrency ?? 100,
    leaseMs: options.leaseMs ?? Math.max(120_000, ...[...runners].map((r) => (r.timeoutMs ?? 0) + 30_000)),
    lookaheadMs: options.lookaheadMs ?? 1_000,
    pollMs: options.pollMs ?? 500,
    claimBatch: options.claimBatch ?? 500,
    runTimeoutMs: options.runTimeoutMs ?? 30_000,
    stopDeadlineMs: options.stopDeadlineMs ?? 30_000,
  };
}
