import {
  createVigil,
  type CheckSessionResponse,
  type EngineOptions,
  type Vigil,
  type VigilStorage,
} from '@vigil/core';
import { type CheckPlan, type Plan } from './engine-model-plan.js';
import { ProcessLife, StoreTraffic } from './process-storage.js';
import { SharedClock, type ClockView } from './shared-clock.js';
import { checkBody, collectingLogger, countingIds, ModelRunner, ModelTransport, servesOf, settle, watchStarts, WATCHED } from './engine-model-world-parts.js';

export const T0 = Date.parse('2026-05-01T12:00:00.000Z');
const SECRET = 'd'.repeat(64);

/**
 * Small enough that a case takes a fraction of a second, and chosen so that the oracle can be
 * exact: a slot's run, even one taken over after its process died (a lease, then a poll, then the
 * run inside a new lease), ends before the next slot of its location is due (10 s at the least),
 * and a retry still fits in a lease after a first attempt that finished early.
 */
export const ENGINE: Required<Pick<EngineOptions, 'leaseMs' | 'runTimeoutMs' | 'lookaheadMs' | 'pollMs'>> = {
  leaseMs: 5_000,
  runTimeoutMs: 1_000,
  lookaheadMs: 1_000,
  pollMs: 500,
};
export const ALERTS = { pollMs: 1_000, leaseMs: 3_000, sendTimeoutMs: 1_000, backoffBaseMs: 1_000 };
/** After the last event: leases of dead processes run out, sessions end, the outbox empties. */
const DRAIN_MS = 30_000;
const DRAIN_CAP_MS = 600_000;

/** One call of a runner: who ran what, when. */
export interface Invocation {
  seq: number;
  process: string;
  checkId: string;
  scheduled: boolean;
  dueAt: string;
  location: string;
  attempt: number;
  checkSessionId: string | null;
  sequenceId: string | null;
  at: number;
}

export interface Delivery {
  process: string;
  outboxId: string;
  alertType: string;
  checkId: string;
  at: number;
}

export interface ModelProcess {
  name: string;
  slot: number;
  life: ProcessLife;
  clock: ClockView;
  vigil: Vigil;
  diedAt: number | null;
}

export interface ModelCheck {
  index: number;
  plan: CheckPlan;
  id: string;
  groupId: number | null;
}

export interface ModelWorld {
  plan: Plan;
  clock: SharedClock;
  traffic: StoreTraffic;
  storage: VigilStorage;
  accountId: string;
  checks: ModelCheck[];
  groups: { id: number; concurrency: number }[];
  processes: ModelProcess[];
  triggers: { at: number; sessions: CheckSessionResponse[] }[];
  cancels: { at: number; checkSessionId: string; sequenceIds: string[] | null }[];
  invocations: Invocation[];
  /** Session runs in the order each process's engine started them (before any of their work). */
  sessionStarts: { process: string; checkSessionId: string; sequenceId: string; seq: number }[];
  deliveries: Delivery[];
  /** Most session runs of one group running at once in one process, against the group's limit. */
  groupPeaks: Map<string, { most: number; limit: number }>;
  /** When events stopped (the horizon) and when the model stopped. */
  horizonAt: number;
  endAt: number;
  /** What the processes logged, newest last (shown when a case fails). */
  log: string[];
  /** Unexpected errors of the driver's own calls. */
  errors: string[];
}

/**
 * Runs one plan: makes its checks on `storage`, starts its processes at T0, plays its events
 * (triggers, cancels, crashes) until the horizon, then lets everything run out, and answers what
 * happened for the oracle.
 */
export async function runModel(plan: Plan, storage: VigilStorage): Promise<ModelWorld> {
  const clock = new SharedClock(T0);
  const traffic = new StoreTraffic(() => clock.ms, (repo, method) => WATCHED.has(`${repo}.${method}`));
  const ids = countingIds();
  const log: string[] = [];
  const logger = (name: string) => collectingLogger(log, () => clock.ms, { process: name });
  // The API's process: makes the checks and triggers and cancels sessions. It runs nothing and
  // never dies; it tells a live engine of what it triggers and cancels, as a host's API would.
  const api = createVigil({
    storage: traffic.view(storage, new ProcessLife('api')), secretKey: SECRET, clock: clock.view(), ids, logger: logger('api'),
  });
  const account = await api.accounts.ensure('model');
  const channel = await api.alertChannels.create(account.id, { type: 'WEBHOOK', config: { name: 'ops', url: 'https://hooks.example.com/vigil' } });
  const world: ModelWorld = {
    plan, clock, traffic, storage, accountId: account.id, checks: [], groups: [], processes: [], triggers: [], cancels: [],
    invocations: [], sessionStarts: [], deliveries: [], groupPeaks: new Map(), horizonAt: T0 + plan.horizonMs, endAt: T0, log, errors: [],
  };
  for (const [i, g] of plan.groups.entries()) {
    const group = await api.checkGroups.create(account.id, { name: `group ${i}`, concurrency: g.concurrency, tags: [`group-${i}`] });
    world.groups.push({ id: group.id, concurrency: g.concurrency });
  }
  for (const [index, c] of plan.checks.entries()) {
    const created = await api.checks.create(account.id, 'TCP', checkBody(world, c, index, channel.id));
    world.checks.push({ index, plan: c, id: created.id, groupId: created.groupId ?? null });
  }

  const generation = new Map<number, number>();
  const current = new Map<number, ModelProcess>();
  const restartAt = new Map<number, number>();
  const restartDelay = new Map<number, number>();
  const start = (slot: number) => {
    const n = (generation.get(slot) ?? 0) + 1;
    generation.set(slot, n);
    const name = `p${slot}.${n}`;
    const life = new ProcessLife(name);
    const view = clock.view();
    let proc: ModelProcess;
    const vigil = createVigil({
      storage: traffic.view(storage, life), secretKey: SECRET, clock: view, ids, logger: logger(name),
      runners: [new ModelRunner(world, () => proc)],
      transports: [new ModelTransport((alert) => world.deliveries.push({
        process: name, outboxId: alert.id, alertType: alert.alertType, checkId: alert.check.id, at: clock.ms,
      }))],
      serves: servesOf(plan, slot),
      engine: { ...ENGINE, owner: name },
      alerts: { ...ALERTS, owner: `${name}:alerts` },
    });
    watchStarts(world, name, vigil);
    proc = { name, slot, life, clock: view, vigil, diedAt: null };
    life.whenDead(() => {
      view.kill();
      proc.diedAt = clock.ms;
    });
    world.processes.push(proc);
    current.set(slot, proc);
    vigil.start().catch((err: unknown) => world.errors.push(`${name} did not start: ${String(err)}`));
  };
  const live = () => [...current.values()].filter((p) => !p.life.dead);
  const tellApi = () => api.checkSessions.setLauncher(live()[0]?.vigil.engine);

  for (let slot = 0; slot < plan.processes; slot++) start(slot);
  let next = 0;
  let draining = false;
  let lastSessionLook = 0;
  for (;;) {
    await settle(traffic);
    const now = clock.ms;
    // A dead process is replaced after its restart delay.
    for (const [slot, proc] of current) {
      if (proc.life.dead && !restartAt.has(slot)) restartAt.set(slot, proc.diedAt! + (restartDelay.get(slot) ?? 0));
    }
    const restart = [...restartAt].find(([, at]) => at <= now);
    if (restart) {
      restartAt.delete(restart[0]);
      start(restart[0]);
      continue;
    }
    if (clock.fireNext()) {
      // Together: every timer due at this instant fires before any of their work goes on.
      if (plan.together) while (clock.fireNext());
      continue;
    }
    const event = plan.events[next];
    if (event && T0 + event.at <= now) {
      next++;
      tellApi();
      await apply(event);
      continue;
    }
    if (!draining && now >= world.horizonAt) {
      // No crash after the horizon: what is left runs out in peace.
      draining = true;
      for (const p of current.values()) p.life.disarm();
    }
    if (draining && now - lastSessionLook >= 5_000) {
      lastSessionLook = now;
      if (now >= world.horizonAt + DRAIN_MS && (await allSessionsFinal(world))) break;
      if (now >= world.horizonAt + DRAIN_CAP_MS) break;
    }
    const wake = Math.min(
      clock.nextAt(),
      event ? T0 + event.at : Infinity,
      ...restartAt.values(),
      draining ? lastSessionLook + 5_000 : world.horizonAt,
    );
    clock.moveTo(Math.max(now, wake));
  }
  world.endAt = clock.ms;
  // The model is over: every process stops here, dead as the crashed ones.
  for (const p of current.values()) p.life.kill();
  await settle(traffic);
  return world;

  async function apply(event: Plan['events'][number]): Promise<void> {
    const at = clock.ms;
    if (event.kind === 'crash') {
      const proc = current.get(event.process % plan.processes);
      if (!proc || proc.life.dead) return;
      restartDelay.set(proc.slot, event.restartAfterMs);
      proc.life.crashAfter(event.afterCalls, event.lastReaches, event.onceItClaims);
      return;
    }
    if (event.kind === 'trigger') {
      const target = event.target === 'all'
        ? undefined
        : 'group' in event.target
          ? { matchTags: [[`group-${event.target.group}`]] }
          : { checkId: event.target.checks.map((i) => world.checks[i]!.id) };
      try {
        const { sessions } = await api.checkSessions.trigger(world.accountId, target ? { target } : {});
        world.triggers.push({ at, sessions });
      } catch (err) {
        // Nothing active matches: a 404 for the caller.
        if ((err as { code?: string }).code !== 'NOT_FOUND') world.errors.push(`trigger failed: ${String(err)}`);
        world.triggers.push({ at, sessions: [] });
      }
      return;
    }
    const sessions = world.triggers.length ? world.triggers[event.trigger % world.triggers.length]!.sessions : [];
    const session = sessions.length ? sessions[event.session % sessions.length]! : null;
    if (!session) return;
    const sequenceIds = event.oneSequence ? [session.sequences[0]!.sequenceId] : null;
    await api.checkSessions.cancel(world.accountId, session.checkSessionId, sequenceIds ? { sequenceId: sequenceIds } : {});
    world.cancels.push({ at, checkSessionId: session.checkSessionId, sequenceIds });
  }
}

async function allSessionsFinal(world: ModelWorld): Promise<boolean> {
  for (const t of world.triggers) {
    for (const s of t.sessions) {
      const stored = await world.storage.checkSessions.get(world.accountId, s.checkSessionId);
      if (stored && !['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'].includes(stored.status)) return false;
    }
  }
  return true;
}
