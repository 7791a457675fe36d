import type { CheckResult, ScheduledJob } from '@vigil/core';
import { effectiveRetryStrategy, nextRetry, runLocations } from '@vigil/core/internals';
import { outcomeOf } from './engine-model-plan.js';
import { ENGINE, type ModelCheck, type ModelWorld } from './engine-model-world.js';
import { DEFAULT_LOCATION, failed, nextPlace, FAILURE_KIND, CANCELLED_MESSAGE, Violations, type ModelStats, emptyStats, type Oracle, type Stored } from './engine-model-oracle-kit.js';
import { checkScheduledRuns, checkSessions, checkStatuses, checkGroupOrder } from './engine-model-oracle-runs.js';
import { checkAlertStates, checkTakenInOnce, checkDeliveries } from './engine-model-oracle-alerts.js';

export { emptyStats, type ModelStats } from './engine-model-oracle-kit.js';

/*
 * What the model promises, checked after every case. Words used below:
 *
 * - A check's slots in a location are the times nextDueIn gives (phase + k * period; without
 *   runParallel slot k belongs to location k mod n). Its run entry starts at the first slot after
 *   the check was made and, each time a run completes, moves to the first slot after that moment.
 * - A slot is owed (it must have run, once) when it is due before the end less MARGIN_MS, its
 *   check is active, and the entry reached it. The entry may pass over a slot only when the run
 *   before it was still going at that slot's time because a process died under it (its slot then
 *   waited for a lease to run out): that is the engine's rule for a run late past its next slot.
 * - "Ran once" means one FINAL result whose id is slotResultId(check, location, dueAt, attempt),
 *   whatever process ran it and however often it was started; a retry in another location
 *   (sameRegion false, doubleCheck) is stored under its slot's location and records where it ran.
 * - A session sequence ends with one FINAL result (none when it was cancelled before it ran), and
 *   its status is what that result says, or CANCELLED when a cancel reached it.
 * - Alert states are written compare-and-set: their steps form one chain from no state; each step
 *   is evaluateRun of the run (or round) it takes in, or evaluateTick between runs, at the time of
 *   the step; every run and complete round is taken in exactly once; every alert a step queued is
 *   delivered, first deliveries in the order queued; an alert is sent again only when the process
 *   that sent it died before the store heard it was delivered.
 * - Reminders: a failing check owed a reminder gets it within its interval plus one tick (a
 *   minute) plus SLACK_MS, whatever the processes serve.
 */

/** Answers every broken promise of the case (empty when it kept them all), and adds to `stats`. */
export async function checkModel(world: ModelWorld, stats: ModelStats = emptyStats()): Promise<string[]> {
  const v = new Violations();
  for (const e of world.errors) v.add(e);
  const { storage, accountId } = world;
  // Crashes only: every process is stopped dead at the end, after everything it owed was due.
  const crashed = (p: ModelWorld['processes'][number]) => p.diedAt !== null && p.diedAt < world.endAt;
  const deaths = world.processes.filter(crashed).map((p) => p.diedAt!);
  const diedBetween = (from: number, to: number) => deaths.some((d) => d >= from && d <= to);
  /** Whether a process serves no location (a retry in another region then stays where it is). */
  const servesNone = (processName: string) => world.plan.serves === 'split' && processName.startsWith('p1.');

  const stored: Stored = new Map();
  for (const c of world.checks) {
    const check = (await storage.checks.get(accountId, c.id))!;
    const group = check.groupId === null ? null : await storage.checkGroups.get(accountId, check.groupId);
    const results = (await storage.checkResults.listByCheck(accountId, c.id, { limit: 100_000, offset: 0 })).items;
    stored.set(c.id, { check, group, results });
  }
  const resultById = new Map<string, CheckResult>();
  for (const s of stored.values()) for (const r of s.results) resultById.set(r.id, r);

  /**
   * The attempts of one run, oldest first: where each ran, what it returned (as the plan says),
   * how long it took, and that a retry followed exactly when the strategy (and the lease) allowed.
   */
  const checkAttempts = (c: ModelCheck, label: string, rows: CheckResult[], run: {
    scheduled: boolean; dueAt: string; location: string; cancelled: boolean; stayMayHappen: boolean;
  }) => {
    const { check, group } = stored.get(c.id)!;
    const strategy = effectiveRetryStrategy(check, group);
    const places = runLocations(check, group, DEFAULT_LOCATION);
    const first = rows[0];
    if (!first) return;
    let previous: CheckResult | null = null;
    for (const [i, row] of rows.entries()) {
      const last = i === rows.length - 1;
      const at = `${label} attempt ${i + 1}`;
      if (row.attempts !== i + 1) v.add(`${at}: stored as attempt ${row.attempts}`);
      if (row.resultType !== (last ? 'FINAL' : 'ATTEMPT')) v.add(`${at}: stored as ${row.resultType}`);
      if (!previous) {
        if (row.runLocation !== run.location) v.add(`${at}: ran in ${row.runLocation}, not ${run.location}`);
      } else {
        const moved = strategy && !strategy.sameRegion && !check.runParallel ? nextPlace(places, previous.runLocation) : previous.runLocation;
        const ok = row.runLocation === moved || (run.stayMayHappen && row.runLocation === previous.runLocation);
        if (!ok) v.add(`${at}: ran in ${row.runLocation}, the retry should have gone to ${moved}`);
        if (row.runLocation !== previous.runLocation) stats.retriesElsewhere++;
      }
      const outcome = outcomeOf(c.plan, c.index, { scheduled: run.scheduled, dueAt: run.dueAt, location: row.runLocation, attempt: i + 1 });
      const took = Date.parse(row.stoppedAt) - Date.parse(row.startedAt);
      if (outcome.kind === 'hang') stats.hung++;
      // A cancel ends the run where it is (an attempt cut short, no retry after it).
      if (last && run.cancelled && (row.errorMessage === CANCELLED_MESSAGE || failed(row))) break;
      const as = { pass: !failed(row), fail: row.hasFailures && !row.hasErrors && row.errorMessage === 'Connection refused',
        throw: row.hasErrors && row.errorMessage === 'The runner failed: the model runner broke',
        hang: row.hasFailures && !row.hasErrors && row.errorMessage === `The run did not finish within its time limit of ${ENGINE.runTimeoutMs / 1000} s` }[outcome.kind];
      if (!as) v.add(`${at}: the runner did ${outcome.kind}, the result says ${row.hasErrors ? 'error' : row.hasFailures ? 'failure' : 'pass'} (${row.errorMessage})`);
      const should = outcome.kind === 'hang' ? ENGINE.runTimeoutMs : outcome.ms;
      if (took !== should) v.add(`${at}: took ${took} ms, the runner took ${should} ms`);
      const decision = nextRetry(strategy, {
        retriesSoFar: i, elapsedMs: Date.parse(row.stoppedAt) - Date.parse(first.startedAt), failureKind: FAILURE_KIND[outcome.kind],
      });
      if (!last) {
        const nextRow = rows[i + 1]!;
        if (!failed(row)) v.add(`${at}: passed, yet was retried`);
        else if (!decision.retry) v.add(`${at}: retried although the strategy says ${decision.reason}`);
        else if (Date.parse(nextRow.startedAt) - Date.parse(row.stoppedAt) !== decision.delayMs) {
          v.add(`${at}: the retry started ${Date.parse(nextRow.startedAt) - Date.parse(row.stoppedAt)} ms after it, not ${decision.delayMs} ms`);
        }
      } else if (failed(row) && decision.retry) {
        // Cut short only because a retry would end past the lease (the earliest a lease can end).
        const retryEnds = Date.parse(row.stoppedAt) + decision.delayMs + ENGINE.runTimeoutMs;
        const earliestEnd = Date.parse(run.dueAt) - ENGINE.lookaheadMs + ENGINE.leaseMs - 1_000;
        if (retryEnds <= earliestEnd) v.add(`${at}: failed and was not retried, though the strategy and the lease allowed it`);
      }
      previous = row;
    }
  };

  const o: Oracle = { world, v, stats, storage, accountId, crashed, deaths, diedBetween, servesNone, stored, resultById, checkAttempts };
  const { finalRoundsOf } = await checkScheduledRuns(o);
  const { cancelled, sessionTakeIns } = await checkSessions(o);
  await checkStatuses(o, cancelled);
  checkGroupOrder(o);
  const { queued, queuedOrder, takenIn } = await checkAlertStates(o, finalRoundsOf, cancelled);
  checkTakenInOnce(o, finalRoundsOf, sessionTakeIns, takenIn);
  const { byId } = await checkDeliveries(o, queued, queuedOrder);
  stats.cases++;
  stats.crashes += deaths.length;
  if (deaths.length) stats.withCrash++;
  stats.takenOver += world.traffic.calls.filter((c) => c.method === 'claimDue' && (c.result as ScheduledJob[]).some((j) => j.reclaimed)).length;
  stats.scheduledRuns += [...stored.values()].reduce((n, s) => n + s.results.filter((r) => r.runSource === 'SCHEDULER' && r.resultType === 'FINAL').length, 0);
  stats.sessions += world.triggers.reduce((n, t) => n + t.sessions.length, 0);
  stats.cancelled += world.cancels.length;
  stats.alerts += queued.size;
  stats.reminders += [...queued.values()].filter((m) => m.alertType === 'ALERT_FAILURE_REMAIN').length;
  stats.sentAgain += world.deliveries.length - byId.size;
  return v.list;
}
