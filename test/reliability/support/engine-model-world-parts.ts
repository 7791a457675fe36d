/** The pieces each process of the engine model is made of: its ids, log, runner and transport, and how the world watches it. */
import { createHash } from 'node:crypto';
import {
  type AlertMessage,
  type AlertTransport,
  type IdGenerator,
  type Logger,
  type LogMeta,
  type Runner,
  type RunJob,
  type RunResult,
  type ServedLocations,
  type Vigil,
} from '@vigil/core';
import { failResult, FakeTransport, passResult } from '@vigil/core/testing';
import { outcomeOfJob, type CheckPlan, type Plan, type RetryPlan } from './engine-model-plan.js';
import { StoreTraffic } from './process-storage.js';
import { type ClockView } from './shared-clock.js';
import type { ModelProcess, ModelWorld } from './engine-model-world.js';

/** Ids from a counter: a case replays with the same ids (and so the same phases). */
export function countingIds(): IdGenerator {
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

export function collectingLogger(log: string[], now: () => number, bound: LogMeta = {}): Logger {
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
export class ModelRunner implements Runner {
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
export class ModelTransport extends FakeTransport implements AlertTransport {
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
export function watchStarts(world: ModelWorld, process: string, vigil: Vigil): void {
  const running = (vigil.engine as unknown as { running?: Map<string, { session?: string; sequence?: string }> }).running;
  if (!(running instanceof Map)) throw new Error('the engine no longer keeps its running jobs in `running`: update watchStarts');
  const set = running.set.bind(running);
  running.set = (key, value) => {
    if (value.session && value.sequence) world.sessionStarts.push({ process, checkSessionId: value.session, sequenceId: value.sequence, seq: world.traffic.next() });
    return set(key, value);
  };
}

/** Store calls the oracle reads: alert-state steps, confirmed deliveries, claims and moved schedule entries. */
export const WATCHED = new Set(['alertStates.transition', 'alertStates.transitionAndLease', 'outbox.markDelivered', 'schedule.complete', 'schedule.claimDue']);

/** Lets the processes work until none has a store call under way and nothing new starts. */
export async function settle(traffic: StoreTraffic): Promise<void> {
  let quiet = 0;
  const since = Date.now();
  while (quiet < 2) {
    if (Date.now() - since > 60_000) throw new Error('the processes never settle: store calls keep coming (or one never answers) at one instant');
    const before = traffic.activity;
    await new Promise<void>((resolve) => setImmediate(resolve));
    quiet = traffic.pending === 0 && traffic.activity === before ? quiet + 1 : 0;
  }
}

export function servesOf(plan: Plan, slot: number): ServedLocations {
  if (plan.serves === 'dataCenters') return { locations: 'all', privateLocations: [] };
  if (plan.serves === 'split' && slot === 1) return { locations: [], privateLocations: [] };
  return { locations: 'all', privateLocations: 'all' };
}

export function checkBody(world: ModelWorld, c: CheckPlan, index: number, channelId: number) {
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
    // The rest of a 'strategy' plan is the strategy (the destructuring above loses that narrowing).
    retryStrategy: kind === 'strategy' ? (strategy as Omit<Extract<RetryPlan, { kind: 'strategy' }>, 'kind'>) : null,
    useGlobalAlertSettings: false,
    alertSettings: {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: c.failedRunThreshold },
      reminders: c.reminders ?? { amount: 0, interval: 5 },
    },
    alertChannelSubscriptions: [{ alertChannelId: channelId, activated: true }],
  };
}
