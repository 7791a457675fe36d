/** The oracle's words and helpers: constants, small functions and what its parts share (see engine-model-oracle.ts). */
import { createHash } from 'node:crypto';
import {
  type AlertState,
  type Check,
  type CheckGroup,
  type CheckResult,
  type NewOutboxMessage,
  type RetryFailureKind,
} from '@vigil/core';
import { type Outcome } from './engine-model-plan.js';
import { ALERTS, ENGINE, type ModelCheck, type ModelWorld } from './engine-model-world.js';

/** Slots due this close to the end may still be under way (a lease, a crash, a poll). */
export const MARGIN_MS = 20_000;
/** How late a reminder or a delivery may be: a dead process's lease, a poll, a restart. */
export const SLACK_MS = 2 * ENGINE.leaseMs + ALERTS.leaseMs + 2_000;
export const MAX_ATTEMPTS = 5;
export const DEFAULT_LOCATION = 'us-east-1';

export const iso = (ms: number) => new Date(ms).toISOString();
export const failed = (r: { hasFailures: boolean; hasErrors: boolean }) => r.hasFailures || r.hasErrors;

/** The engine's id of a round (runParallel slot, or a session of several sequences): see the engine's alert step (alert-step.ts). */
export function roundId(checkId: string, of: string): string {
  const h = createHash('sha256').update(`round|${checkId}|${of}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** JSON with sorted keys and without undefined: states read back from any store compare equal. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v);
}

/** The location after `current` (round robin), as a retry in another region goes. */
export function nextPlace(places: readonly string[], current: string): string {
  if (places.length === 0 || (places.length === 1 && places[0] === current)) return current;
  return places[(places.indexOf(current) + 1) % places.length]!;
}

export function latestPerLocation(results: readonly CheckResult[]): CheckResult[] {
  const by = new Map<string, CheckResult>();
  for (const r of results) {
    const seen = by.get(r.runLocation);
    if (!seen || r.startedAt > seen.startedAt) by.set(r.runLocation, r);
  }
  return [...by.values()];
}

export const FAILURE_KIND: Record<Outcome['kind'], RetryFailureKind> = { pass: 'OTHER', fail: 'NETWORK_ERROR', throw: 'OTHER', hang: 'TIMEOUT' };
export const CANCELLED_MESSAGE = 'The run was cancelled';
export const SEQUENCE_ENDED = /^(The run could not be completed|The run was skipped|The check was deleted)/;

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

export class Violations {
  readonly list: string[] = [];
  add(message: string): void {
    if (this.list.length < 40) this.list.push(message);
  }
}

export interface Transition {
  checkId: string;
  expected: AlertState | null;
  next: AlertState;
  messages: NewOutboxMessage[];
  at: number;
  process: string;
}

/** A stored check with its group and every result it has. */
export type Stored = Map<string, { check: Check; group: CheckGroup | null; results: CheckResult[] }>;

/** What checkModel reads once and every part of the oracle shares. */
export interface Oracle {
  world: ModelWorld;
  v: Violations;
  stats: ModelStats;
  storage: ModelWorld['storage'];
  accountId: string;
  /** Whether a process crashed before the end (rather than being stopped there). */
  crashed: (p: ModelWorld['processes'][number]) => boolean;
  deaths: number[];
  diedBetween: (from: number, to: number) => boolean;
  /** Whether a process serves no location (a retry in another region then stays where it is). */
  servesNone: (processName: string) => boolean;
  stored: Stored;
  resultById: Map<string, CheckResult>;
  /** Checks the attempts of one run, oldest first (see checkModel). */
  checkAttempts: (c: ModelCheck, label: string, rows: CheckResult[], run: {
    scheduled: boolean; dueAt: string; location: string; cancelled: boolean; stayMayHappen: boolean;
  }) => void;
}
