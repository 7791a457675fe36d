import { Cron } from 'croner';
import type { ScheduleEntry } from '../ports/storage.js';
import type { ServiceDeps } from '../services/deps.js';

/** Its one schedule entry belongs to no account or check; the shared schedule's lease makes one process run it. */
const ENTRY = { kind: 'retention', accountId: '', checkId: '', location: '' } as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface RetentionOptions {
  /** When the job runs: a cron pattern (croner syntax, five or six fields) in `timezone`. Default `'17 * * * *'`, hourly. */
  cron?: string;
  /** IANA time zone of `cron`. Default `UTC`. */
  timezone?: string;
  /**
   * Days raw check results are kept; older ones are rolled up by hour (where the store keeps
   * roll-ups) and deleted. `null` keeps them for ever. Default 90, which covers every range the
   * analytics and reporting API offers (lastMonth reaches 62 days back).
   */
  days?: number | null;
  /**
   * An account's own retention in days, for a host whose plans differ: a number, `null` to keep
   * the account's results for ever, `undefined` for `days`. An error, or a number that is not
   * positive, skips the account for that run (nothing of it is deleted) and is logged.
   */
  retentionFor?: (accountId: string) => number | null | undefined | Promise<number | null | undefined>;
  /** Results taken per call to the store, each call one transaction. Default 20,000. */
  batch?: number;
  /**
   * Days the outbox keeps what it delivered (alerts and subscriber emails, given-up and dropped
   * ones too) and the delivery log its attempts; `null` keeps them for ever. Default 30.
   */
  deliveredDays?: number | null;
  /**
   * Days hourly roll-ups are kept (where the store keeps them and can prune them): analytics over
   * older ranges finds nothing. `null` keeps them for ever. Default 400, a year and a month, so a
   * month compares with the same month a year before.
   */
  rollupDays?: number | null;
}

export interface RetentionReport {
  /** Accounts that lost results. */
  accounts: number;
  deleted: number;
  /** Hourly roll-ups written: of hours retention deleted, and of hours that closed since the last run. */
  rolledUp: number;
  /** False when the deadline came first; the next run goes on from there. */
  finished: boolean;
  /** Delivered outbox messages and logged delivery attempts removed. */
  outbox: { messages: number; attempts: number };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`engine.retention.${name} must be a positive number, got ${value}`);
  return value;
}

/**
 * Retention of check results, scheduled by the engine. Its entry in the shared schedule is due at
 * the cron pattern's times; whichever process claims it (the schedule's lease makes that one
 * process) prunes every account up to its window, a batch at a time, and stops in time to keep the
 * lease: a run cut short makes the entry due again at once, so the next claim goes on.
 */
export class RetentionJob {
  readonly enabled: boolean;
  private readonly cron: Cron | null;
  private readonly days: number | null;
  private readonly deliveredDays: number | null;
  private readonly rollupDays: number | null;
  private readonly batch: number;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly options: RetentionOptions | false = {},
  ) {
    this.enabled = options !== false;
    const o = options === false ? {} : options;
    this.days = o.days === null ? null : positive('days', o.days ?? 90);
    this.deliveredDays = o.deliveredDays === null ? null : positive('deliveredDays', o.deliveredDays ?? 30);
    this.rollupDays = o.rollupDays === null ? null : positive('rollupDays', o.rollupDays ?? 400);
    this.batch = Math.floor(positive('batch', o.batch ?? 20_000));
    if (options === false) {
      this.cron = null;
      return;
    }
    try {
      this.cron = new Cron(o.cron ?? '17 * * * *', { timezone: o.timezone ?? 'UTC' });
      // A time zone is only read when a time is computed.
      this.cron.nextRun(new Date(0));
    } catch (err) {
      throw new TypeError(`engine.retention: ${(err as Error).message}`);
    }
  }

  /** The job's next run strictly after `after`. */
  nextRun(after: Date): Date {
    return this.cron?.nextRun(after) ?? new Date(after.getTime() + HOUR);
  }

  /** The entry `ensure` adds to the schedule (an existing entry keeps its time). */
  entry(now: Date): ScheduleEntry | null {
    return this.enabled ? { ...ENTRY, dueAt: this.nextRun(now).toISOString() } : null;
  }

  /**
   * The claimed entry's work: prune until `deadline` (or until `signal` aborts, when the engine
   * stops), then answer when the entry is next due. A process with retention off that claims the
   * entry (another process set it up) passes it on an hour later and deletes nothing.
   */
  async run(deadline: Date, signal?: AbortSignal): Promise<Date> {
    const now = this.deps.clock.now();
    if (!this.enabled) return new Date(now.getTime() + HOUR);
    const report = await this.prune(deadline, signal);
    return report.finished ? this.nextRun(this.deps.clock.now()) : this.deps.clock.now();
  }

  /** Days an account's results are kept, or null for ever; undefined when it is to be skipped. */
  private async daysFor(accountId: string): Promise<number | null | undefined> {
    const own = this.options === false ? undefined : this.options.retentionFor;
    if (!own) return this.days;
    try {
      const days = await own(accountId);
      if (days === undefined) return this.days;
      if (days === null || (Number.isFinite(days) && days > 0)) return days;
      this.deps.logger.warn('retention: retentionFor answered no positive number of days; the account is skipped', { accountId, days: String(days) });
    } catch (err) {
      this.deps.logger.warn('retention: retentionFor failed; the account is skipped', { accountId, error: err instanceof Error ? err.message : String(err) });
    }
    return undefined;
  }

  /** The account's heartbeat pings received before its results' cut-off, each check's newest kept. */
  private async prunePings(accountId: string, before: Date, timeLeft: () => boolean, took: (ms: number) => void, report: RetentionReport): Promise<void> {
    const { clock, logger, storage } = this.deps;
    if (!storage.heartbeats.prunePings) return;
    if (!timeLeft()) {
      report.finished = false;
      return;
    }
    let deleted = 0;
    try {
      for (;;) {
        const t0 = clock.now().getTime();
        const step = await storage.heartbeats.prunePings(accountId, before, this.batch);
        took(clock.now().getTime() - t0);
        deleted += step;
        if (step < this.batch) break;
        if (!timeLeft()) {
          report.finished = false;
          break;
        }
      }
    } catch (err) {
      logger.warn('retention: pruning an account\'s heartbeat pings failed; the next run tries again', { accountId, error: err instanceof Error ? err.message : String(err) });
    }
    if (deleted > 0) logger.info('retention: removed heartbeat pings', { accountId, before: before.toISOString(), deleted });
  }

  /**
   * The account's closed hours rolled up by the store (where it keeps roll-ups), raw results kept:
   * each run takes the hours that closed since the last, so analytics over long ranges read one
   * row an hour. Answers the roll-ups written; a store error is logged and the next run retries.
   */
  private async rollUp(accountId: string, timeLeft: () => boolean, took: (ms: number) => void, report: RetentionReport): Promise<number> {
    const { clock, logger, storage } = this.deps;
    if (!storage.checkResults.rollUp) return 0;
    const before = new Date(Math.floor(clock.now().getTime() / HOUR) * HOUR);
    let after: Date | null = null;
    let rolledUp = 0;
    try {
      for (;;) {
        const t0 = clock.now().getTime();
        const step = await storage.checkResults.rollUp(accountId, after, before, this.batch);
        took(clock.now().getTime() - t0);
        rolledUp += step.rolledUp;
        if (step.done) break;
        after = step.next;
        if (!timeLeft()) {
          report.finished = false;
          break;
        }
      }
    } catch (err) {
      logger.warn('retention: rolling an account up failed; the next run tries again', { accountId, error: err instanceof Error ? err.message : String(err) });
    }
    return rolledUp;
  }

  /**
   * Every account's results before the earliest cut-off (the longest retention) dropped by a store
   * that keeps them in whole time ranges, in one call. Not done while any account keeps its
   * results for ever or is skipped (its retentionFor failed): nothing of it may go. A store error
   * is logged and the per-account pass goes on.
   */
  private async dropBefore(
    cutOffs: ReadonlyMap<string, { before: Date | null }>,
    timeLeft: () => boolean,
    took: (ms: number) => void,
    report: RetentionReport,
  ): Promise<void> {
    const { clock, logger, storage } = this.deps;
    if (!storage.checkResults.dropBefore || cutOffs.size === 0) return;
    let earliest: Date | null = null;
    for (const { before } of cutOffs.values()) {
      if (before === null) return;
      if (earliest === null || before < earliest) earliest = before;
    }
    if (earliest === null) return;
    if (!timeLeft()) {
      report.finished = false;
      return;
    }
    try {
      const t0 = clock.now().getTime();
      const { deleted, rolledUp } = await storage.checkResults.dropBefore(earliest);
      took(clock.now().getTime() - t0);
      if (deleted > 0 || rolledUp > 0) logger.info('retention: dropped whole ranges of check results', { before: earliest.toISOString(), deleted, rolledUp });
      report.deleted += deleted;
      report.rolledUp += rolledUp;
    } catch (err) {
      logger.warn('retention: dropping whole ranges of check results failed; the next run tries again', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * One pass over every account: results that started before now minus the account's retention
   * (rounded down to the hour, so nothing inside the window goes) are rolled up and deleted; then
   * the hours that closed since the last run are rolled up, their raw results kept (an account
   * whose results are kept for ever too). It starts no batch that might end past `deadline`, nor
   * any after `signal` aborts. A store that drops whole time ranges (`dropBefore`) is first given
   * every account's results at once, up to the longest retention's cut-off, when no account keeps
   * its results for ever or is skipped; the per-account pass then removes what it kept.
   */
  async prune(deadline: Date = new Date(8.64e15), signal?: AbortSignal): Promise<RetentionReport> {
    const { clock, logger, storage } = this.deps;
    const report: RetentionReport = { accounts: 0, deleted: 0, rolledUp: 0, finished: true, outbox: { messages: 0, attempts: 0 } };
    let slowest = 0;
    const timeLeft = () => !signal?.aborted && clock.now().getTime() + Math.max(1_000, 2 * slowest) < deadline.getTime();
    if (storage.checkResults.maintain) {
      try {
        await storage.checkResults.maintain(clock.now());
      } catch (err) {
        logger.warn('retention: the store\'s upkeep failed; the next run tries again', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    // Every account's cut-off, asked of retentionFor once a pass: `before` null keeps the
    // account's results for ever (days null) or skips it (days undefined).
    const cutOffs = new Map<string, { days: number | null | undefined; before: Date | null }>();
    for (const accountId of await storage.accounts.listIds()) {
      if (!timeLeft()) {
        report.finished = false;
        break;
      }
      const days = await this.daysFor(accountId);
      cutOffs.set(accountId, { days, before: days == null ? null : new Date(Math.floor((clock.now().getTime() - days * DAY) / HOUR) * HOUR) });
    }
    if (report.finished) await this.dropBefore(cutOffs, timeLeft, (ms) => (slowest = Math.max(slowest, ms)), report);
    for (const [accountId, { days, before }] of cutOffs) {
      if (!timeLeft()) {
        report.finished = false;
        break;
      }
      if (days === undefined) continue;
      const account = { deleted: 0, rolledUp: 0 };
      try {
        for (; before !== null; ) {
          const t0 = clock.now().getTime();
          const step = await storage.checkResults.prune(accountId, before, this.batch);
          slowest = Math.max(slowest, clock.now().getTime() - t0);
          account.deleted += step.deleted;
          account.rolledUp += step.rolledUp;
          if (step.done) break;
          if (!timeLeft()) {
            report.finished = false;
            break;
          }
        }
      } catch (err) {
        logger.warn('retention: pruning an account failed; the next run tries again', { accountId, error: err instanceof Error ? err.message : String(err) });
      }
      if (before !== null && report.finished) await this.prunePings(accountId, before, timeLeft, (ms) => (slowest = Math.max(slowest, ms)), report);
      if (account.deleted > 0) {
        logger.info('retention: removed check results', { accountId, before: before?.toISOString(), days, ...account });
        report.accounts++;
        report.deleted += account.deleted;
      }
      report.rolledUp += account.rolledUp;
      if (report.finished) report.rolledUp += await this.rollUp(accountId, timeLeft, (ms) => (slowest = Math.max(slowest, ms)), report);
      if (report.finished && this.rollupDays !== null && storage.checkResults.pruneRollups) {
        try {
          await storage.checkResults.pruneRollups(accountId, new Date(Math.floor((clock.now().getTime() - this.rollupDays * DAY) / HOUR) * HOUR));
        } catch (err) {
          logger.warn('retention: pruning an account\'s roll-ups failed; the next run tries again', { accountId, error: err instanceof Error ? err.message : String(err) });
        }
      }
      if (!report.finished) break;
    }
    if (report.finished && this.deliveredDays !== null && storage.outbox.pruneDelivered) {
      const before = new Date(clock.now().getTime() - this.deliveredDays * DAY);
      try {
        for (;;) {
          if (!timeLeft()) {
            report.finished = false;
            break;
          }
          const t0 = clock.now().getTime();
          const step = await storage.outbox.pruneDelivered(before, this.batch);
          slowest = Math.max(slowest, clock.now().getTime() - t0);
          report.outbox.messages += step.messages;
          report.outbox.attempts += step.attempts;
          if (step.messages < this.batch && step.attempts < this.batch) break;
        }
      } catch (err) {
        logger.warn('retention: pruning the outbox failed; the next run tries again', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    const level = report.deleted > 0 || report.outbox.messages > 0 ? 'info' : 'debug';
    logger[level]('retention: run done', { ...report });
    return report;
  }
}
