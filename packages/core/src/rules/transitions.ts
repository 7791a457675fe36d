/** State transitions of error groups, check sessions, incidents, and checks' activation. */
import { isFinalSessionStatus, type CheckSessionStatus } from '../model/check-session.js';

// Declared once, with the session model's status list; re-exported so that the rules read whole.
export { isFinalSessionStatus };

export interface ErrorGroupState {
  rawErrorMessage: string | null;
  cleanedErrorMessage: string;
  errorHash: string;
  firstSeen: string;
  lastSeen: string;
  archivedUntilNextEvent: boolean;
  archivedForever: boolean;
}

export interface ErrorOccurrence {
  raw: string;
  cleaned: string;
  hash: string;
  at: string;
}

/**
 * A new occurrence of an error: a new group, or the group moved on. An occurrence unarchives a
 * group archived until its next event, but not one archived forever.
 */
export function recordErrorOccurrence<T extends ErrorGroupState>(group: T | null, occurrence: ErrorOccurrence): ErrorGroupState {
  if (!group) {
    return {
      rawErrorMessage: occurrence.raw,
      cleanedErrorMessage: occurrence.cleaned,
      errorHash: occurrence.hash,
      firstSeen: occurrence.at,
      lastSeen: occurrence.at,
      archivedUntilNextEvent: false,
      archivedForever: false,
    };
  }
  return {
    rawErrorMessage: occurrence.raw,
    cleanedErrorMessage: group.cleanedErrorMessage,
    errorHash: group.errorHash,
    firstSeen: group.firstSeen,
    lastSeen: occurrence.at > group.lastSeen ? occurrence.at : group.lastSeen,
    // Archived forever stays archived; archived until the next event: this is that event.
    archivedUntilNextEvent: group.archivedForever,
    archivedForever: group.archivedForever,
  };
}

/** PATCH /v1/error-groups/{id}: archiveForEver and archivedUntilNextEvent. */
export function applyErrorGroupPatch<T extends Pick<ErrorGroupState, 'archivedUntilNextEvent' | 'archivedForever'>>(
  group: T,
  patch: { archiveForEver?: boolean | undefined; archivedUntilNextEvent?: boolean | undefined },
): T {
  const next = { ...group };
  if (patch.archivedUntilNextEvent !== undefined) {
    next.archivedUntilNextEvent = patch.archivedUntilNextEvent;
    if (!patch.archivedUntilNextEvent) next.archivedForever = false;
  }
  if (patch.archiveForEver === true) {
    next.archivedForever = true;
    next.archivedUntilNextEvent = true;
  } else if (patch.archiveForEver === false) {
    next.archivedForever = false;
  }
  return next;
}

/** The name the check-session service imports; the same function as isFinalSessionStatus. */
export const isFinalStatus = isFinalSessionStatus;

export interface SequenceState {
  sequenceId: string;
  runLocation: string;
  status: CheckSessionStatus;
}

export interface SessionState {
  status: CheckSessionStatus;
  startedAt: string;
  stoppedAt: string | null;
  timeElapsed: number | null;
  sequences: SequenceState[];
}

/** A session's status from its sequences: the worst outcome once all are final. */
export function deriveSessionStatus(sequences: readonly Pick<SequenceState, 'status'>[]): CheckSessionStatus {
  const statuses = sequences.map((s) => s.status);
  if (statuses.some((s) => !isFinalSessionStatus(s))) {
    return statuses.some((s) => isFinalSessionStatus(s)) ? 'PROGRESS' : 'STARTED';
  }
  for (const s of ['CANCELLED', 'TIMED_OUT', 'FAILED', 'DEGRADED'] as const) {
    if (statuses.includes(s)) return s;
  }
  return 'PASSED';
}

function settle<T extends SessionState>(session: T, sequences: SequenceState[], now: Date): T {
  const status = deriveSessionStatus(sequences);
  const final = isFinalSessionStatus(status);
  return {
    ...session,
    sequences,
    status,
    stoppedAt: final ? now.toISOString() : null,
    timeElapsed: final ? Math.max(0, now.getTime() - Date.parse(session.startedAt)) : null,
  };
}

/** A sequence (one location's run) finished. A final session or sequence does not move. */
export function completeSequence<T extends SessionState>(
  session: T,
  sequenceId: string,
  outcome: 'PASSED' | 'FAILED' | 'DEGRADED' | 'TIMED_OUT',
  now: Date,
): T {
  if (isFinalSessionStatus(session.status)) return session;
  let changed = false;
  const sequences = session.sequences.map((s) => {
    if (s.sequenceId !== sequenceId || isFinalSessionStatus(s.status)) return s;
    changed = true;
    return { ...s, status: outcome };
  });
  return changed ? settle(session, sequences, now) : session;
}

/** Marks a sequence as running (the session moves from STARTED to PROGRESS). */
export function startSequence<T extends SessionState>(session: T, sequenceId: string): T {
  if (isFinalSessionStatus(session.status)) return session;
  const sequences = session.sequences.map((s) => (s.sequenceId === sequenceId && s.status === 'STARTED' ? { ...s, status: 'PROGRESS' as const } : s));
  return { ...session, sequences, status: 'PROGRESS' };
}

/**
 * Cancels the listed in-progress sequences, or all of them when none are listed. A final
 * session is left as it is; unknown ids are ignored.
 */
export function cancelSession<T extends SessionState>(session: T, sequenceIds: readonly string[] | undefined, now: Date): T {
  if (isFinalSessionStatus(session.status)) return session;
  const chosen = sequenceIds ? new Set(sequenceIds) : null;
  let changed = false;
  const sequences = session.sequences.map((s) => {
    if (isFinalSessionStatus(s.status) || (chosen && !chosen.has(s.sequenceId))) return s;
    changed = true;
    return { ...s, status: 'CANCELLED' as const };
  });
  return changed ? settle(session, sequences, now) : session;
}

export interface IncidentTimes {
  startedAt: string | null;
  stoppedAt: string | null;
}

/** Any status may follow any other; RESOLVED stops the incident, a later update reopens it. */
export function applyIncidentUpdate<T extends IncidentTimes>(incident: T, status: string, now: Date): T {
  const at = now.toISOString();
  return {
    ...incident,
    startedAt: incident.startedAt ?? at,
    stoppedAt: status === 'RESOLVED' ? at : null,
  };
}

export function isCheckActive(check: { activated: boolean }, group: { activated: boolean } | null | undefined): boolean {
  return check.activated && (group?.activated ?? true);
}

export function isCheckMuted(check: { muted: boolean }, group: { muted: boolean } | null | undefined): boolean {
  return check.muted || (group?.muted ?? false);
}
