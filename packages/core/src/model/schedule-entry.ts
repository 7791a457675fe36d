/**
 * What a schedule entry makes the engine do: `run`, a check's slot in one location; `session`, one
 * sequence of a check session (an on-demand run); the engine's own jobs `alert-tick` (a failing
 * check looked at between runs), `certificate` (the daily certificate look) and `retention`.
 * A process's `serves` filters `run` and `session` entries by their location; every process takes
 * its share of the engine's own jobs whatever it serves (a process may still take only some kinds:
 * the engine's `kinds` option).
 */
export type JobKind = 'run' | 'session' | 'alert-tick' | 'certificate' | 'retention';

/** Every kind of schedule entry. */
export const JOB_KINDS: readonly JobKind[] = ['run', 'session', 'alert-tick', 'certificate', 'retention'];

/** The kinds that run a check in a location, and so are filtered by the locations a process serves. */
export const LOCATED_JOB_KINDS: readonly JobKind[] = ['run', 'session'];

export interface ScheduleEntry {
  kind: JobKind;
  /** The check's account; empty for an engine job of no account (retention). */
  accountId: string;
  /** The check; empty for an engine job of no check (retention). */
  checkId: string;
  /** Where a `run` or `session` entry runs; empty for the engine's own jobs. */
  location: string;
  /** The sequence a `session` entry runs; absent for every other kind. */
  session?: { checkSessionId: string; sequenceId: string };
  dueAt: string;
}
