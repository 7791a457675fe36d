import { createHash } from 'node:crypto';
import {
  ALERT_TICK_MS,
  channelWantsAlert,
  effectiveRetryStrategy,
  evaluateRun,
  evaluateTick,
  INITIAL_ALERT_STATE,
  isFinalSessionStatus,
  nextDueIn,
  nextRetry,
  runLocations,
  slotResultId,
  type AlertState,
  type Check,
  type CheckGroup,
  type CheckResult,
  type NewOutboxMessage,
  type RetryFailureKind,
  type ScheduledJob,
} from '@vigil/core';
import { alwaysFails, outcomeOf, type Outcome } from './engine-model-plan.js';
import { ALERTS, ENGINE, T0, type ModelCheck, type ModelWorld } from './engine-model-world.js';

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

/** Slots due this close to the end may still be under way (a lease, a crash, a poll). */
const MARGIN_MS = 20_000;
/** How late a reminder or a delivery may be: a dead process's lease, a poll, a restart. */
const SLACK_MS = 2 * ENGINE.leaseMs + ALERTS.leaseMs + 2_000;
const MAX_ATTEMPTS = 5;
const DEFAULT_LOCATION = 'us-east-1';

const iso = (ms: number) => new Date(ms).toISOString();
const failed = (r: { hasFailures: boolean; hasErrors: boolean }) => r.hasFailures || r.hasErrors;

/** The engine's id of a round (runParallel slot, or a session of several sequences): see run-pipeline. */
function roundId(checkId: string, of: string): string {
  const h = createHash('sha256').update(`round|${checkId}|${of}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** JSON with sorted keys and without undefined: states read back from any store compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v);
}

/** The location after `current` (round robin), as a retry in another region goes. */
function nextPlace(places: readonly string[], current: string): string {
  if (places.length === 0 || (places.length === 1 && places[0] === current)) return current;
  return places[(places.indexOf(current) + 1) % places.length]!;
}

function latestPerLocation(results: readonly CheckResult[]): CheckResult[] {
  const by = new Map<string, CheckResult>();
  for (const r of results) {
    const seen = by.get(r.runLocation);
    if (!seen || r.startedAt > seen.startedAt) by.set(r.runLocation, r);
  }
  return [...by.values()];
}

const FAILURE_KIND: Record<Outcome['kind'], RetryFailureKind> = { pass: 'OTHER', fail: 'NETWORK_ERROR', throw: 'OTHER', hang: 'TIMEOUT' };
const CANCELLED_MESSAGE = 'The run was cancelled';
const SEQUENCE_ENDED = /^(The run could not be completed|The run was skipped|The check was deleted)/;

/** What a case exercised, summed over a run to show the model covers what it claims to. */
export interface ModelStats {
  cases: number;
  withCrash: number;
  crashes: number;
  takenOver: number;
  scheduledRuns: number;
  retriesElsewhere: number;
  sessions: number;
  cancelled: number;
  hung: number;
  alerts: number;
  reminders: number;
  sentAgain: number;
  /** Session runs of a group that had to wait for room (the ones whose order is checked). */
  waitedForGroup: number;
  rounds: number;
}

export const emptyStats = (): ModelStats => ({
  cases: 0, withCrash: 0, crashes: 0, takenOver: 0, scheduledRuns: 0, retriesElsewhere: 0, sessions: 0, cancelled: 0, hung: 0, alerts: 0, reminders: 0, sentAgain: 0, waitedForGroup: 0, rounds: 0,
});

class Violations {
  readonly list: string[] = [];
  add(message: string): void {
    if (this.list.length < 40) this.list.push(message);
  }
}

interface Transition {
  checkId: string;
  expected: AlertState | null;
  next: AlertState;
  messages: NewOutboxMessage[];
  at: number;
  process: string;
}

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

  const stored = new Map<string, { check: Check; group: CheckGroup | null; results: CheckResult[] }>();
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

  // Scheduled runs: each run entry's path through its slots, and the results of those slots.
  const completes = world.traffic.calls
    .filter((call) => call.repo === 'schedule' && call.method === 'complete' && call.result === true && (call.args[0] as ScheduledJob).kind === 'run');
  const finalRoundsOf = new Map<string, CheckResult[][]>();
  for (const c of world.checks) {
    const { check, group, results } = stored.get(c.id)!;
    const active = check.activated && (group?.activated ?? true);
    const locations = runLocations(check, group, DEFAULT_LOCATION);
    const scheduled = results.filter((r) => r.runSource === 'SCHEDULER');
    if (!active) {
      if (scheduled.length) v.add(`check ${c.index} is not active, yet has ${scheduled.length} scheduled results`);
      continue;
    }
    const slotOf = new Map<string, { location: string; dueAt: number; attempt: number }>();
    const finals = new Map<string, CheckResult[]>();
    const visited = new Set<string>();
    const entries = await storage.schedule.list(accountId, c.id);
    for (const location of locations) {
      // Its slots from the first (due or not) to the end.
      const grid = [nextDueIn(check, locations, location, new Date(T0))!.getTime()];
      for (;;) {
        const t = nextDueIn(check, locations, location, new Date(grid.at(-1)!))!.getTime();
        if (t > world.endAt + ENGINE.lookaheadMs) break;
        grid.push(t);
      }
      for (const t of grid) for (let a = 1; a <= MAX_ATTEMPTS; a++) slotOf.set(slotResultId(c.id, location, new Date(t), a), { location, dueAt: t, attempt: a });
      // The entry's path: from its first slot, moved on by each completed run.
      let at = grid[0]!;
      const moves = completes.filter((call) => (call.args[0] as ScheduledJob).checkId === c.id && (call.args[0] as ScheduledJob).location === location);
      for (const move of moves) {
        const job = move.args[0] as ScheduledJob;
        const next = move.args[1] as Date | null;
        const label = `check ${c.index} in ${location}`;
        if (Date.parse(job.dueAt) !== at) v.add(`${label}: a run of ${job.dueAt} completed while its entry was at ${iso(at)}`);
        visited.add(`${location}|${job.dueAt}`);
        if (next === null) {
          v.add(`${label}: its entry was removed after the run of ${job.dueAt}`);
          break;
        }
        const rule = nextDueIn(check, locations, location, new Date(move.at))!.getTime();
        if (next.getTime() !== rule) v.add(`${label}: after the run of ${job.dueAt} (done at ${iso(move.at)}) the entry went to ${next.toISOString()}, not ${iso(rule)}`);
        for (const skipped of grid.filter((t) => t > Date.parse(job.dueAt) && t < next.getTime())) {
          if (skipped <= world.endAt - MARGIN_MS && !diedBetween(Date.parse(job.dueAt) - ENGINE.lookaheadMs, move.at)) {
            v.add(`${label}: the slot ${iso(skipped)} was passed over (its previous run ended at ${iso(move.at)}, no process died meanwhile)`);
          }
        }
        at = next.getTime();
      }
      if (at <= world.endAt - MARGIN_MS) v.add(`check ${c.index} in ${location}: its entry is still at ${iso(at)} at the end (${iso(world.endAt)})`);
      const entry = entries.find((e) => e.kind === 'run' && e.location === location);
      if (!entry) v.add(`check ${c.index} in ${location}: no run entry at the end (its schedule is not armed)`);
      else if (Date.parse(entry.dueAt) !== at) v.add(`check ${c.index} in ${location}: its entry is at ${entry.dueAt}, its runs moved it to ${iso(at)}`);
    }
    for (const e of entries.filter((x) => x.kind === 'run' && !locations.includes(x.location))) v.add(`check ${c.index}: a run entry in ${e.location}, not one of its locations`);
    for (const r of scheduled) {
      const slot = slotOf.get(r.id);
      if (!slot) {
        v.add(`check ${c.index}: a scheduled result (${r.runLocation}, ${r.startedAt}) of no slot`);
        continue;
      }
      if (r.resultType === 'FINAL') {
        const key = `${slot.location}|${iso(slot.dueAt)}`;
        finals.set(key, [...(finals.get(key) ?? []), r]);
      }
    }
    for (const key of visited) {
      const got = finals.get(key) ?? [];
      if (got.length !== 1) v.add(`check ${c.index}: the slot ${key} ran ${got.length} times`);
    }
    for (const [key, got] of finals) {
      if (!visited.has(key) && got.length > 1) v.add(`check ${c.index}: the slot ${key} ran ${got.length} times`);
      if (got.length !== 1) continue;
      const [location, dueAt] = key.split('|') as [string, string];
      const slotRows = [...slotOf].filter(([, s]) => s.location === location && iso(s.dueAt) === dueAt).map(([id]) => resultById.get(id)).filter((r): r is CheckResult => !!r);
      slotRows.sort((a, b) => a.attempts - b.attempts);
      checkAttempts(c, `check ${c.index} slot ${key}`, slotRows, { scheduled: true, dueAt, location, cancelled: false, stayMayHappen: false });
    }
    if (check.runParallel && locations.length > 1) {
      const rounds: CheckResult[][] = [];
      const byDue = new Map<string, CheckResult[]>();
      for (const [key, got] of finals) byDue.set(key.split('|')[1]!, [...(byDue.get(key.split('|')[1]!) ?? []), ...got]);
      for (const [dueAt, got] of byDue) if (got.length === locations.length) rounds.push(got.map((r) => ({ ...r, dueAt } as CheckResult & { dueAt: string })));
      finalRoundsOf.set(c.id, rounds);
    }
  }

  // Sessions: every one final, each sequence ended by one result that says what its runs did.
  const cancelled = (sessionId: string, sequenceId: string) =>
    world.cancels.some((x) => x.checkSessionId === sessionId && (x.sequenceIds === null || x.sequenceIds.includes(sequenceId)));
  const sessionTakeIns: { checkId: string; id: string }[] = [];
  for (const { sessions } of world.triggers) {
    for (const response of sessions) {
      const session = await storage.checkSessions.get(accountId, response.checkSessionId);
      const c = world.checks.find((x) => x.id === response.checkId)!;
      const label = `session ${response.checkSessionId.slice(0, 8)} of check ${c.index}`;
      if (!session) {
        v.add(`${label}: gone`);
        continue;
      }
      if (!isFinalSessionStatus(session.status)) v.add(`${label}: still ${session.status} at the end`);
      const rows = stored.get(c.id)!.results.filter((r) => r.checkSessionId === session.checkSessionId);
      for (const seq of session.sequences) {
        const mine = rows.filter((r) => r.sequenceId === seq.sequenceId).sort((a, b) => a.attempts - b.attempts || a.startedAt.localeCompare(b.startedAt));
        const finals = mine.filter((r) => r.resultType === 'FINAL');
        const wasCancelled = cancelled(session.checkSessionId, seq.sequenceId);
        const at = `${label} in ${seq.runLocation}`;
        if (finals.length > 1) v.add(`${at}: ${finals.length} final results (${finals.map((f) => `${f.runLocation} ${f.errorMessage ?? 'passed'}`).join('; ')})`);
        if (finals.length === 0 && !(wasCancelled && seq.status === 'CANCELLED')) v.add(`${at}: no final result, status ${seq.status}`);
        const final = finals[0];
        if (!final) continue;
        if (final.errorMessage && SEQUENCE_ENDED.test(final.errorMessage)) {
          v.add(`${at}: ended without its run: ${final.errorMessage}`);
          continue;
        }
        if (finals.length === 1) {
          checkAttempts(c, at, mine, {
            scheduled: false, dueAt: session.startedAt, location: seq.runLocation, cancelled: wasCancelled,
            stayMayHappen: world.invocations.some((i) => i.sequenceId === seq.sequenceId && servesNone(i.process)),
          });
        }
        const abortedByCancel = final.errorMessage === CANCELLED_MESSAGE;
        if (abortedByCancel && !wasCancelled) v.add(`${at}: cancelled, though nobody cancelled it`);
        if (seq.status === 'CANCELLED') {
          if (!wasCancelled) v.add(`${at}: CANCELLED, though nobody cancelled it`);
        } else {
          const lastOutcome = outcomeOf(c.plan, c.index, { scheduled: false, dueAt: session.startedAt, location: final.runLocation, attempt: final.attempts });
          const status = !failed(final) ? 'PASSED' : lastOutcome.kind === 'hang' ? 'TIMED_OUT' : 'FAILED';
          // A sequence ended from its stored result by another process (its first died) cannot
          // tell a timeout from another failure: FAILED then.
          const recovered = status === 'TIMED_OUT' && seq.status === 'FAILED' && deaths.length > 0;
          if (seq.status !== status && !recovered) v.add(`${at}: ended ${seq.status}, its run says ${status}`);
        }
        // A run its cancel reached is not taken in; one a cancel missed (it ran in another process) is.
        if (session.sequences.length === 1 && seq.status !== 'CANCELLED') sessionTakeIns.push({ checkId: c.id, id: final.id });
      }
    }
  }

  // Check statuses: written compare-and-set by every run that counts, the newest run winning.
  for (const c of world.checks) {
    const { results } = stored.get(c.id)!;
    const ended = new Map<string, string>();
    for (const { sessions } of world.triggers) {
      for (const s of sessions.filter((x) => x.checkId === c.id)) {
        const session = await storage.checkSessions.get(accountId, s.checkSessionId);
        for (const q of session?.sequences ?? []) ended.set(q.sequenceId, q.status);
      }
    }
    // A cancelled sequence's run changes no status.
    const counted = results.filter((r) => r.resultType === 'FINAL' && (r.runSource === 'SCHEDULER' || ended.get(r.sequenceId ?? '') !== 'CANCELLED'));
    const status = await storage.checkStatuses.get(accountId, c.id);
    if (counted.length === 0) {
      if (status) v.add(`check ${c.index}: a status, though no run counts`);
      continue;
    }
    const newest = Math.max(...counted.map((r) => Date.parse(r.stoppedAt)));
    const latest = counted.filter((r) => Date.parse(r.stoppedAt) === newest);
    const shown = latest.find((r) => r.id === status?.lastCheckRunId);
    if (!status || !shown) {
      v.add(`check ${c.index}: its status shows run ${status?.lastCheckRunId ?? 'none'}, not its newest (${latest.map((r) => `${r.runLocation} ${r.stoppedAt}`).join(', ')})`);
    } else if (status.hasFailures !== shown.hasFailures || status.hasErrors !== shown.hasErrors) {
      v.add(`check ${c.index}: its status says failures ${status.hasFailures}, errors ${status.hasErrors}, its newest run ${shown.hasFailures}, ${shown.hasErrors}`);
    }
    const times = counted.map((r) => r.responseTime);
    if (status && (status.longestRun !== Math.max(...times) || status.shortestRun !== Math.min(...times))) {
      v.add(`check ${c.index}: its status says runs took ${status.shortestRun}..${status.longestRun} ms, they took ${Math.min(...times)}..${Math.max(...times)} ms`);
    }
  }

  // Group limits and order of session runs (per process, as the engine keeps them).
  for (const [key, peak] of world.groupPeaks) if (peak.most > peak.limit) v.add(`group ${key}: ${peak.most} session runs at once, its concurrency is ${peak.limit}`);
  // When a process starts a session run, no run of its group that comes first (a lower groupOrder,
  // or the same from an older session) waits in that process's queue: claimed there, and neither
  // started nor given back since.
  const runOf = new Map<string, { groupId: number; order: number; startedAt: string; label: string }>();
  for (const [t, trigger] of world.triggers.entries()) {
    for (const response of trigger.sessions) {
      const check = stored.get(response.checkId)!.check;
      if (check.groupId === null) continue;
      for (const q of response.sequences) {
        runOf.set(q.sequenceId, {
          groupId: check.groupId, order: check.groupOrder ?? Number.MAX_SAFE_INTEGER, startedAt: response.startedAt,
          label: `trigger ${t} check ${world.checks.find((c) => c.id === check.id)!.index} in ${q.runLocation}`,
        });
      }
    }
  }
  // Whom each session run waits for, over time: the process whose claim of it answered last, until
  // it starts or leaves the schedule (a run given back to be claimed again still waits), on the
  // order of events of the store traffic.
  const events = new Map<string, { seq: number; process: string | null }[]>();
  const note = (sequenceId: string | undefined, seq: number, process: string | null) => {
    if (sequenceId && runOf.has(sequenceId)) events.set(sequenceId, [...(events.get(sequenceId) ?? []), { seq, process }]);
  };
  for (const call of world.traffic.calls) {
    if (call.method === 'claimDue') for (const j of call.result as ScheduledJob[]) note(j.session?.sequenceId, call.answered, call.process);
    if (call.method === 'complete' && call.args[1] === null) note((call.args[0] as ScheduledJob).session?.sequenceId, call.issued, null);
  }
  for (const s of world.sessionStarts) note(s.sequenceId, s.seq, null);
  for (const list of events.values()) list.sort((a, b) => a.seq - b.seq);
  const waitingIn = (process: string, sequenceId: string, at: number): boolean => {
    let owner: string | null = null;
    let over = false;
    for (const e of events.get(sequenceId) ?? []) {
      if (e.seq >= at) break;
      if (e.process === null) over = true;
      else if (!over) owner = e.process;
    }
    return !over && owner === process;
  };
  for (const x of world.sessionStarts) {
    const mine = runOf.get(x.sequenceId);
    if (!mine) continue;
    let waited = false;
    for (const [sequenceId, other] of runOf) {
      if (sequenceId === x.sequenceId || other.groupId !== mine.groupId || !waitingIn(x.process, sequenceId, x.seq)) continue;
      waited = true;
      const first = other.order < mine.order || (other.order === mine.order && other.startedAt < mine.startedAt);
      if (first) v.add(`${x.process} started ${mine.label} (groupOrder ${mine.order}) while ${other.label} (groupOrder ${other.order}) waited in its queue`);
    }
    // Another run of its group waited beside it: the order between them was up to the engine.
    if (waited) stats.waitedForGroup++;
  }

  // Alert states: one chain of steps per check, each the rule's answer for what it took in.
  const transitions: Transition[] = world.traffic.calls
    .filter((call) => call.repo === 'alertStates' && call.method === 'transition' && call.result === true)
    .map((call) => ({
      checkId: call.args[1] as string, expected: call.args[2] as AlertState | null, next: call.args[3] as AlertState,
      messages: call.args[4] as NewOutboxMessage[], at: call.at, process: call.process,
    }));
  const channel = (await storage.alertChannels.listAll(accountId))[0]!;
  const queuedOrder = new Map<string, string[]>();
  const queued = new Map<string, NewOutboxMessage & { at: number }>();
  const takenIn = new Map<string, number>();
  for (const c of world.checks) {
    const { check } = stored.get(c.id)!;
    const mine = transitions.filter((t) => t.checkId === c.id);
    const chain: Transition[] = [];
    let state: AlertState | null = null;
    const left = new Set(mine);
    for (;;) {
      const key = canonical(state);
      const from = [...left].filter((t) => canonical(t.expected) === key);
      if (from.length > 1) v.add(`check ${c.index}: ${from.length} alert-state steps from one state (compare-and-set broken)`);
      const step = from[0];
      if (!step) break;
      left.delete(step);
      chain.push(step);
      state = step.next;
    }
    if (left.size > 0) v.add(`check ${c.index}: ${left.size} alert-state steps off the chain`);
    const settings = check.alertSettings;
    const ctx = (at: number) => ({ settings, runParallel: check.runParallel, muted: false, silenced: false, now: new Date(at) });
    const wants = (types: readonly string[]) => types.filter((t) => channelWantsAlert(channel, t as never, null));
    const roundsById = new Map((finalRoundsOf.get(c.id) ?? []).map((round) => [roundId(c.id, (round[0] as CheckResult & { dueAt: string }).dueAt), round]));
    const sessionRounds = new Map<string, CheckResult[]>();
    for (const { sessions } of world.triggers) {
      for (const s of sessions) {
        if (s.checkId !== c.id || s.sequences.length < 2) continue;
        // The runs of its sequences that were not cancelled (a cancelled run tells nothing of the check).
        const session = await storage.checkSessions.get(accountId, s.checkSessionId);
        const kept = new Set(session?.sequences.filter((q) => q.status !== 'CANCELLED').map((q) => q.sequenceId));
        sessionRounds.set(roundId(c.id, s.checkSessionId), latestPerLocation(stored.get(c.id)!.results.filter((r) => r.checkSessionId === s.checkSessionId && r.resultType === 'FINAL' && kept.has(r.sequenceId!))));
      }
    }
    for (const step of chain) {
      const previous = step.expected ?? INITIAL_ALERT_STATE;
      const runId = step.next.lastRunId ?? null;
      const label = `check ${c.index} alert step at ${iso(step.at)}`;
      let expectState: AlertState;
      let expectAlerts: string[];
      if (runId !== (step.expected?.lastRunId ?? null)) {
        takenIn.set(runId!, (takenIn.get(runId!) ?? 0) + 1);
        const single = resultById.get(runId!);
        if (!single) stats.rounds++;
        const round = single ? [single] : roundsById.get(runId!) ?? sessionRounds.get(runId!);
        if (!round) {
          v.add(`${label}: took in ${runId}, which is no stored run or complete round`);
          continue;
        }
        if (round.some((r) => r.errorMessage === CANCELLED_MESSAGE)) v.add(`${label}: took in a cancelled run`);
        const evaluated = evaluateRun(previous, round.length === 1 ? round[0]! : round, ctx(step.at));
        expectState = { ...evaluated.state, incidentId: step.next.incidentId ?? null, lastRunId: runId };
        expectAlerts = evaluated.alerts;
      } else {
        const evaluated = evaluateTick(previous, ctx(step.at));
        expectState = evaluated.state;
        expectAlerts = evaluated.alerts;
      }
      // What it remembers of the runs it took in is the pipeline's, not the rule's.
      const { recentRunIds, ...rest } = step.next;
      if (runId !== (step.expected?.lastRunId ?? null) && !recentRunIds?.includes(runId!)) v.add(`${label}: took in ${runId} without remembering it`);
      const { recentRunIds: _kept, ...expectRest } = expectState;
      if (canonical(expectRest) !== canonical(rest)) v.add(`${label}: stored ${canonical(rest)}, the rule says ${canonical(expectRest)}`);
      const types = step.messages.map((m) => m.alertType);
      if (canonical(types) !== canonical(wants(expectAlerts))) v.add(`${label}: queued ${types.join(',') || 'nothing'}, the rule says ${wants(expectAlerts).join(',') || 'nothing'}`);
      for (const m of step.messages) {
        if (queued.has(m.id)) continue;
        queued.set(m.id, { ...m, at: step.at });
        queuedOrder.set(c.id, [...(queuedOrder.get(c.id) ?? []), m.id]);
      }
    }

    // Reminders of a check that only fails: owed on time, by ticks whatever `serves` says.
    const reminders = c.plan.reminders;
    if (reminders && alwaysFails(c.plan) && chain.length > 0) {
      const intervalMs = reminders.interval * 60_000;
      let lastAlert: number | null = null;
      let sent = 0;
      for (const step of chain) {
        const types = step.messages.map((m) => m.alertType);
        if (types.includes('ALERT_FAILURE_REMAIN')) {
          if (lastAlert !== null && step.at - lastAlert > intervalMs + ALERT_TICK_MS + SLACK_MS) {
            v.add(`check ${c.index}: reminder ${sent + 1} came ${step.at - lastAlert} ms after the alert before it (interval ${intervalMs} ms)`);
          }
          sent++;
          lastAlert = step.at;
        } else if (types.includes('ALERT_FAILURE')) {
          lastAlert = step.at;
          sent = 0;
        }
      }
      const owed = reminders.amount === 100000 || sent < reminders.amount;
      if (lastAlert !== null && owed && world.endAt - lastAlert > intervalMs + ALERT_TICK_MS + SLACK_MS) {
        v.add(`check ${c.index}: no reminder since ${iso(lastAlert)} (interval ${intervalMs} ms, ${sent} of ${reminders.amount} sent, end ${iso(world.endAt)})`);
      }
    }
    const finalState = chain.at(-1)?.next;
    if (finalState && finalState.status !== 'PASSING') {
      const entries = await storage.schedule.list(accountId, c.id);
      const tick = entries.find((e) => e.kind === 'alert-tick');
      if (!tick) v.add(`check ${c.index}: ${finalState.status} at the end, with no alert tick armed`);
      else if (Date.parse(tick.dueAt) < world.endAt - SLACK_MS) v.add(`check ${c.index}: its alert tick is stuck at ${tick.dueAt}`);
    }
  }

  // Every run and complete round taken in once.
  for (const [id, n] of takenIn) if (n > 1) v.add(`run ${id} taken in ${n} times`);
  for (const c of world.checks) {
    const { check, group, results } = stored.get(c.id)!;
    const single = !check.runParallel || runLocations(check, group, DEFAULT_LOCATION).length < 2;
    if (single) {
      for (const r of results) {
        if (r.runSource === 'SCHEDULER' && r.resultType === 'FINAL' && !takenIn.has(r.id)) v.add(`check ${c.index}: its run ${r.runLocation} ${r.startedAt} was never taken in`);
      }
    }
    for (const round of finalRoundsOf.get(c.id) ?? []) {
      const id = roundId(c.id, (round[0] as CheckResult & { dueAt: string }).dueAt);
      if (!takenIn.has(id)) v.add(`check ${c.index}: its round of ${(round[0] as CheckResult & { dueAt: string }).dueAt} was never taken in`);
    }
  }
  for (const s of sessionTakeIns) {
    if (!takenIn.has(s.id)) v.add(`check ${world.checks.find((c) => c.id === s.checkId)!.index}: its session run ${s.id} was never taken in`);
  }

  // Deliveries: all of them, each once (unless its sender died before recording it), in order.
  const pending = await storage.outbox.pending(accountId);
  for (const m of pending) v.add(`alert ${m.alertType} of ${m.checkId} (${m.id}) never delivered`);
  const confirmed = new Set(world.traffic.calls
    .filter((call) => call.repo === 'outbox' && call.method === 'markDelivered' && call.result === true)
    .map((call) => `${call.process}:alerts|${call.args[0] as string}`));
  const byId = new Map<string, typeof world.deliveries>();
  for (const d of world.deliveries) byId.set(d.outboxId, [...(byId.get(d.outboxId) ?? []), d]);
  for (const [id, sends] of byId) {
    const message = queued.get(id);
    if (!message) v.add(`delivered ${id}, which no alert step queued`);
    for (let k = 1; k < sends.length; k++) {
      const before = sends[k - 1]!;
      const sender = world.processes.find((p) => p.name === before.process)!;
      const excused = crashed(sender) && !confirmed.has(`${before.process}:alerts|${id}`);
      if (!excused) v.add(`alert ${before.alertType} ${id} delivered again by ${sends[k]!.process} at ${iso(sends[k]!.at)} (first by ${before.process} at ${iso(before.at)})`);
    }
    if (message && sends[0]!.at - message.at > SLACK_MS) v.add(`alert ${message.alertType} ${id} delivered ${sends[0]!.at - message.at} ms after it was queued`);
  }
  for (const [id, m] of queued) if (!byId.has(id)) v.add(`alert ${m.alertType} ${id} queued at ${iso(m.at)} never reached the transport`);
  for (const c of world.checks) {
    const order = queuedOrder.get(c.id) ?? [];
    const firsts = world.deliveries.filter((d) => d.checkId === c.id && byId.get(d.outboxId)![0] === d).map((d) => d.outboxId);
    if (canonical(firsts) !== canonical(order.filter((id) => byId.has(id)))) v.add(`check ${c.index}: alerts delivered out of the order queued`);
  }
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
