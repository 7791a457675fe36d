/** The oracle's promises about runs: scheduled slots, sessions, check statuses and the order of a group's session runs. */
import { isFinalSessionStatus, slotResultId, type Check, type CheckResult, type ScheduledJob } from '@vigil/core';
import { nextDueIn, runLocations } from '@vigil/core/internals';
import { outcomeOf } from './engine-model-plan.js';
import { ENGINE, T0 } from './engine-model-world.js';
import { MARGIN_MS, MAX_ATTEMPTS, DEFAULT_LOCATION, iso, failed, CANCELLED_MESSAGE, SEQUENCE_ENDED, type Oracle } from './engine-model-oracle-kit.js';

/** Scheduled runs: each run entry's path through its slots, and the results of those slots. */
export async function checkScheduledRuns(o: Oracle) {
  const { world, v, storage, accountId, diedBetween, stored, resultById, checkAttempts } = o;
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
  return { finalRoundsOf };
}

/** Sessions: every one final, each sequence ended by one result that says what its runs did. */
export async function checkSessions(o: Oracle) {
  const { world, v, storage, accountId, deaths, servesNone, stored, checkAttempts } = o;
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
  return { cancelled, sessionTakeIns };
}

/** Check statuses: written compare-and-set by every run that counts, the newest run winning. */
export async function checkStatuses(o: Oracle, cancelled: (sessionId: string, sequenceId: string) => boolean) {
  const { world, v, storage, accountId, stored } = o;
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
}

/** Group limits and order of session runs (per process, as the engine keeps them). */
export function checkGroupOrder(o: Oracle) {
  const { world, v, stats, stored } = o;
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
}
