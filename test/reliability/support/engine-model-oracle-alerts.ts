/** The oracle's promises about alerts: the chain of alert states, runs taken in once, and deliveries. */
import type { AlertState, CheckResult, NewOutboxMessage } from '@vigil/core';
import { ALERT_TICK_MS, channelWantsAlert, evaluateRun, evaluateTick, INITIAL_ALERT_STATE, runLocations } from '@vigil/core/internals';
import { alwaysFails } from './engine-model-plan.js';
import { SLACK_MS, DEFAULT_LOCATION, iso, roundId, canonical, latestPerLocation, CANCELLED_MESSAGE, type Transition, type Oracle } from './engine-model-oracle-kit.js';

/** Alert states: one chain of steps per check, each the rule's answer for what it took in. */
export async function checkAlertStates(o: Oracle, finalRoundsOf: Map<string, CheckResult[][]>, cancelled: (sessionId: string, sequenceId: string) => boolean) {
  const { world, v, stats, storage, accountId, stored, resultById } = o;
  const transitions: Transition[] = world.traffic.calls
    // A step that wrote: transition answered true, or transitionAndLease the messages it leased.
    .filter((call) => call.repo === 'alertStates'
      && ((call.method === 'transition' && call.result === true) || (call.method === 'transitionAndLease' && Array.isArray(call.result))))
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
  return { queued, queuedOrder, takenIn };
}

/** Every run and complete round taken in once. */
export function checkTakenInOnce(o: Oracle, finalRoundsOf: Map<string, CheckResult[][]>, sessionTakeIns: { checkId: string; id: string }[], takenIn: Map<string, number>) {
  const { world, v, stored } = o;
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
}

/** Deliveries: all of them, each once (unless its sender died before recording it), in order. */
export async function checkDeliveries(o: Oracle, queued: Map<string, NewOutboxMessage & { at: number }>, queuedOrder: Map<string, string[]>) {
  const { world, v, storage, accountId, crashed } = o;
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
  return { byId };
}
