import fc from 'fast-check';
import type { RunJob } from '@vigil/core';

/** What a runner does with one attempt: answer after `ms`, or hang until its time limit aborts it. */
export type OutcomeKind = 'pass' | 'fail' | 'throw' | 'hang';
export interface Outcome {
  kind: OutcomeKind;
  /** How long a pass, fail or throw takes (below the attempt's time limit). */
  ms: number;
}

export type RetryPlan =
  | { kind: 'none' }
  | { kind: 'doubleCheck' }
  | {
    kind: 'strategy';
    type: 'FIXED' | 'LINEAR' | 'EXPONENTIAL' | 'SINGLE_RETRY';
    baseBackoffSeconds: number;
    maxRetries: number;
    maxDurationSeconds: number;
    sameRegion: boolean;
  };

export interface CheckPlan {
  /** 0 (every 10, 20 or 30 s: frequencyOffset is the interval), 1 or 2 minutes. */
  frequency: 0 | 1 | 2;
  frequencyOffset: number;
  locations: string[];
  runParallel: boolean;
  retry: RetryPlan;
  activated: boolean;
  /** Index into the plan's groups. */
  group: number | null;
  groupOrder: number | null;
  /** What its attempts do, picked per (run, attempt) by a hash: see outcomeOf. */
  outcomes: Outcome[];
  failedRunThreshold: number;
  /** Reminders of a failing check; null: none. */
  reminders: { amount: number; interval: number } | null;
  /** 443 also gives it a daily certificate entry (another kind in the schedule). */
  port: number;
}

export type ModelEvent =
  | { at: number; kind: 'trigger'; target: { checks: number[] } | { group: number } | 'all' }
  /** Cancels the `session`-th session of the `trigger`-th trigger so far, whole or one sequence. */
  | { at: number; kind: 'cancel'; trigger: number; session: number; oneSequence: boolean }
  /**
   * The `process`-th process dies at its `afterCalls`-th store call from now, or from the next
   * time it claims schedule entries (`onceItClaims`: it dies holding leases); that call reaches
   * the store or not. A new one starts on the same store `restartAfterMs` after it died.
   */
  | { at: number; kind: 'crash'; process: number; afterCalls: number; onceItClaims: boolean; lastReaches: boolean; restartAfterMs: number };

export interface Plan {
  /** Vigil processes on the store at once (each replaced by a new one when it dies). */
  processes: 1 | 2;
  /**
   * What the processes serve: everything; every data center but no private location (`serves`
   * filters runs, not the engine's own jobs); or (with two) the second serving no location at all.
   */
  serves: 'all' | 'dataCenters' | 'split';
  /** Fire the timers due at one instant together before settling (races), or one at a time. */
  together: boolean;
  groups: { concurrency: number }[];
  checks: CheckPlan[];
  /** Sorted by time, at distinct times. */
  events: ModelEvent[];
  horizonMs: number;
}

export const LOCATION_POOL = ['us-east-1', 'eu-west-1', 'ap-south-1', 'eu-central-1'] as const;

const outcome = fc.record({
  kind: fc.constantFrom<OutcomeKind>('pass', 'fail', 'throw', 'hang'),
  ms: fc.integer({ min: 0, max: 800 }),
});
const failing = fc.record({
  kind: fc.constantFrom<OutcomeKind>('fail', 'throw', 'hang'),
  ms: fc.integer({ min: 0, max: 800 }),
});

const retry: fc.Arbitrary<RetryPlan> = fc.oneof(
  fc.constant<RetryPlan>({ kind: 'none' }),
  fc.constant<RetryPlan>({ kind: 'doubleCheck' }),
  fc.record({
    kind: fc.constant('strategy' as const),
    type: fc.constantFrom('FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY'),
    baseBackoffSeconds: fc.integer({ min: 0, max: 1 }),
    maxRetries: fc.integer({ min: 1, max: 3 }),
    maxDurationSeconds: fc.integer({ min: 0, max: 10 }),
    sameRegion: fc.boolean(),
  }),
);

const timing = fc.oneof(
  fc.record({ frequency: fc.constant(0 as const), frequencyOffset: fc.constantFrom(10, 20, 30) }),
  fc.record({ frequency: fc.constant(1 as const), frequencyOffset: fc.integer({ min: 1, max: 10 }) }),
  fc.record({ frequency: fc.constant(2 as const), frequencyOffset: fc.integer({ min: 1, max: 20 }) }),
);

function checkPlan(groups: number): fc.Arbitrary<CheckPlan> {
  return fc
    .record({
      timing,
      locations: fc.shuffledSubarray([...LOCATION_POOL], { minLength: 1, maxLength: 3 }),
      runParallel: fc.boolean(),
      retry,
      activated: fc.integer({ min: 0, max: 7 }).map((n) => n > 0),
      group: groups === 0 ? fc.constant(null) : fc.option(fc.integer({ min: 0, max: groups - 1 }), { freq: 2 }),
      groupOrder: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 4 }),
      // A check that only fails (its reminders are then owed on time).
      alwaysFails: fc.boolean(),
      outcomes: fc.array(outcome, { minLength: 1, maxLength: 5 }),
      failures: fc.array(failing, { minLength: 1, maxLength: 3 }),
      failedRunThreshold: fc.integer({ min: 1, max: 2 }),
      reminders: fc.option(fc.record({ amount: fc.constantFrom(1, 2, 3, 100000), interval: fc.constantFrom(1, 2) }), { freq: 2 }),
      port: fc.constantFrom(5432, 5432, 443),
    })
    .map(({ timing: t, alwaysFails, outcomes, failures, ...rest }) => ({
      ...rest,
      ...t,
      outcomes: alwaysFails ? failures : outcomes,
    }));
}

function events(checks: number, groups: number, processes: number, horizonMs: number): fc.Arbitrary<ModelEvent[]> {
  const at = fc.integer({ min: 0, max: horizonMs });
  const target = fc.oneof(
    fc.constant<'all'>('all'),
    fc.uniqueArray(fc.integer({ min: 0, max: checks - 1 }), { minLength: 1, maxLength: checks }).map((c) => ({ checks: c })),
    ...(groups > 0 ? [fc.integer({ min: 0, max: groups - 1 }).map((g) => ({ group: g }))] : []),
  );
  const event: fc.Arbitrary<ModelEvent> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ at, kind: fc.constant('trigger' as const), target }) },
    {
      weight: 2,
      arbitrary: fc.record({
        at, kind: fc.constant('cancel' as const), trigger: fc.nat(5), session: fc.nat(5), oneSequence: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        at,
        kind: fc.constant('crash' as const),
        process: fc.integer({ min: 0, max: processes - 1 }),
        afterCalls: fc.integer({ min: 1, max: 60 }),
        onceItClaims: fc.boolean(),
        lastReaches: fc.boolean(),
        restartAfterMs: fc.constantFrom(0, 0, 200, 1_000),
      }),
    },
  );
  // Distinct times: a trigger's time names its runs' outcomes (see outcomeOf).
  return fc.uniqueArray(event, { maxLength: 8, selector: (e) => e.at }).map((list) => [...list].sort((a, b) => a.at - b.at));
}

export const planArbitrary: fc.Arbitrary<Plan> = fc
  .record({
    processes: fc.constantFrom<1 | 2>(1, 2),
    groups: fc.array(fc.record({ concurrency: fc.integer({ min: 1, max: 3 }) }), { maxLength: 2 }),
    horizonMs: fc.integer({ min: 40_000, max: 180_000 }),
    together: fc.boolean(),
    serves: fc.constantFrom<Plan['serves']>('all', 'dataCenters', 'split'),
  })
  .chain(({ processes, groups, horizonMs, together, serves }) =>
    fc.array(checkPlan(groups.length), { minLength: 1, maxLength: 5 }).chain((checks) =>
      events(checks.length, groups.length, processes, horizonMs).map((evs): Plan => ({
        processes,
        serves: serves === 'split' && processes === 1 ? 'all' : serves,
        together,
        groups,
        checks,
        events: evs,
        horizonMs,
      })),
    ),
  );

/** FNV-1a: a stable hash of a string. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * What an attempt does, from what names it: the check, scheduled or on demand, its due time (a
 * slot's, or the time the session was triggered), where (only with runParallel, where a slot runs
 * in every location) and the attempt. A run made again by another process does the same.
 */
export function outcomeOf(check: CheckPlan, index: number, run: { scheduled: boolean; dueAt: string; location: string; attempt: number }): Outcome {
  const where = check.runParallel ? run.location : '';
  const key = `${index}|${run.scheduled ? 'S' : 'T'}|${run.dueAt}|${where}|${run.attempt}`;
  return check.outcomes[hash(key) % check.outcomes.length]!;
}

export const outcomeOfJob = (check: CheckPlan, index: number, job: RunJob) =>
  outcomeOf(check, index, { scheduled: job.runSource === 'SCHEDULER', dueAt: job.dueAt, location: job.location, attempt: job.attempt });

/** A check that only ever fails: its alert episode never ends, so its reminders are owed. */
export const alwaysFails = (check: CheckPlan) => check.outcomes.every((o) => o.kind !== 'pass');
