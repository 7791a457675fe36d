import { createHash } from 'node:crypto';
import {
  createVigil,
  type AlertMessage,
  type AlertTransport,
  type CheckSessionResponse,
  type EngineOptions,
  type IdGenerator,
  type Logger,
  type LogMeta,
  type Runner,
  type RunJob,
  type RunResult,
  type ServedLocations,
  type Vigil,
  type VigilStorage,
} from '@vigil/core';
import { failResult, FakeTransport, passResult } from '@vigil/core/testing';
import { outcomeOfJob, type CheckPlan, type Plan } from './engine-model-plan.js';
import { ProcessLife, StoreTraffic } from './process-storage.js';
import { SharedClock, type ClockView } from './shared-clock.js';

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

/** Ids from a counter: a case replays with the same ids (and so the same phases). */
function countingIds(): IdGenerator {
  let n = 0;
  const hex = () => createHash('sha256').update(`model-id-${n++}`).digest('hex');
  return {
    uuid: () => {
      const h = hex();
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
    token: () => hex().slice(0, 32),
  };
}

function collectingLogger(log: string[], now: () => number, bound: LogMeta = {}): Logger {
  const write = (level: string) => (msg: string, meta?: LogMeta) => {
    log.push(`${new Date(now()).toISOString()} ${level} ${msg} ${JSON.stringify({ ...bound, ...meta })}`);
    if (log.length > 400) log.splice(0, log.length - 400);
  };
  return {
    error: write('error'), warn: write('warn'), info: write('info'), debug: () => {},
    child: (meta) => collectingLogger(log, now, { ...bound, ...meta }),
  };
}

/** Waits for `ms` on a process's clock, or until the signal aborts. */
function sleep(clock: ClockView, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const cancel = clock.setTimer(new Date(clock.now().getTime() + ms), () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    function onAbort() {
      cancel();
      resolve();
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The runner of one process: each attempt does what the plan says for it (see outcomeOf). */
class ModelRunner implements Runner {
  readonly checkType = 'TCP';
  private readonly running = new Map<number, number>();

  constructor(
    private readonly world: ModelWorld,
    private readonly process: () => ModelProcess,
  ) {}

  async run(job: RunJob, signal: AbortSignal): Promise<RunResult> {
    const { world } = this;
    const check = world.checks.find((c) => c.id === job.check.id)!;
    const outcome = outcomeOfJob(check.plan, check.index, job);
    const proc = this.process();
    world.invocations.push({
      seq: world.invocations.length, process: proc.name, checkId: job.check.id, scheduled: job.runSource === 'SCHEDULER', dueAt: job.dueAt,
      location: job.location, attempt: job.attempt, checkSessionId: job.checkSessionId, sequenceId: job.sequenceId,
      at: proc.clock.now().getTime(),
    });
    const group = job.checkSessionId !== null && job.group ? job.group : null;
    if (group) {
      const now = (this.running.get(group.id) ?? 0) + 1;
      this.running.set(group.id, now);
      const key = `${proc.name}|${group.id}`;
      const peak = world.groupPeaks.get(key) ?? { most: 0, limit: group.concurrency };
      peak.most = Math.max(peak.most, now);
      world.groupPeaks.set(key, peak);
    }
    try {
      const aborted = () => failResult('The model run was aborted', { failureKind: 'TIMEOUT' });
      if (signal.aborted) return aborted();
      if (outcome.kind === 'hang') {
        // Never answers: only the signal (the attempt's time limit, a cancel) ends it.
        return await new Promise<RunResult>((resolve) => signal.addEventListener('abort', () => resolve(aborted()), { once: true }));
      }
      await sleep(proc.clock, outcome.ms, signal);
      if (signal.aborted) return aborted();
      if (outcome.kind === 'throw') throw new Error('the model runner broke');
      return outcome.kind === 'pass' ? passResult({ responseTime: outcome.ms }) : failResult('Connection refused', { responseTime: outcome.ms });
    } finally {
      if (group) this.running.set(group.id, (this.running.get(group.id) ?? 1) - 1);
    }
  }
}

/** A transport that keeps each send with the process that made it. */
class ModelTransport extends FakeTransport implements AlertTransport {
  constructor(private readonly onSend: (alert: AlertMessage) => void) {
    super('WEBHOOK');
  }

  override async send(...args: Parameters<FakeTransport['send']>) {
    const receipt = await super.send(...args);
    this.onSend(args[0]);
    return receipt;
  }
}

/**
 * Records the order in which the engine starts session runs. Its runs of one session then race on
 * the session's row, so the order their runner sees them in is not the order they started in; the
 * engine's map of running jobs is filled in start order.
 */
function watchStarts(world: ModelWorld, process: string, vigil: Vigil): void {
  const running = (vigil.engine as unknown as { running?: Map<string, { session?: string; sequence?: string }> }).running;
  if (!(running instanceof Map)) throw new Error('the engine no longer keeps its running jobs in `running`: update watchStarts');
  const set = running.set.bind(running);
  running.set = (key, value) => {
    if (value.session && value.sequence) world.sessionStarts.push({ process, checkSessionId: value.session, sequenceId: value.sequence, seq: world.traffic.next() });
    return set(key, value);
  };
}

/** Store calls the oracle reads: alert-state steps, confirmed deliveries, claims and moved schedule entries. */
const WATCHED = new Set(['alertStates.transition', 'outbox.markDelivered', 'schedule.complete', 'schedule.claimDue']);

/** Lets the processes work until none has a store call under way and nothing new starts. */
async function settle(traffic: StoreTraffic): Promise<void> {
  let quiet = 0;
  const since = Date.now();
  while (quiet < 2) {
    if (Date.now() - since > 60_000) throw new Error('the processes never settle: store calls keep coming (or one never answers) at one instant');
    const before = traffic.activity;
    await new Promise<void>((resolve) => setImmediate(resolve));
    quiet = traffic.pending === 0 && traffic.activity === before ? quiet + 1 : 0;
  }
}

function servesOf(plan: Plan, slot: number): ServedLocations {
  if (plan.serves === 'dataCenters') return { locations: 'all', privateLocations: [] };
  if (plan.serves === 'split' && slot === 1) return { locations: [], privateLocations: [] };
  return { locations: 'all', privateLocations: 'all' };
}

function checkBody(world: ModelWorld, c: CheckPlan, index: number, channelId: number) {
  const { kind, ...strategy } = c.retry.kind === 'strategy' ? c.retry : { kind: c.retry.kind };
  return {
    name: `check ${index}`,
    request: { hostname: 'db.internal', port: c.port },
    frequency: c.frequency,
    frequencyOffset: c.frequencyOffset,
    locations: c.locations,
    runParallel: c.runParallel,
    activated: c.activated,
    groupId: c.group === null ? null : world.groups[c.group]!.id,
    groupOrder: c.groupOrder,
    doubleCheck: kind === 'doubleCheck',
    retryStrategy: kind === 'strategy' ? strategy : null,
    useGlobalAlertSettings: false,
    alertSettings: {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: c.failedRunThreshold },
      reminders: c.reminders ?? { amount: 0, interval: 5 },
    },
    alertChannelSubscriptions: [{ alertChannelId: channelId, activated: true }],
  };
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
