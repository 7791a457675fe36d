import { describe, expect, it } from 'vitest';
import {
  applyErrorGroupPatch,
  applyIncidentUpdate,
  cancelSession,
  completeSequence,
  deriveSessionStatus,
  isCheckActive,
  isCheckMuted,
  isFinalSessionStatus,
  isFinalStatus,
  recordErrorOccurrence,
  startSequence,
  type SessionState,
} from '../src/rules/transitions.js';

const at = (m: number) => new Date(Date.UTC(2026, 4, 1, 12, m)).toISOString();

describe('error groups', () => {
  const occ = (m: number, raw = `boom ${m}`) => ({ raw, cleaned: 'boom <number>', hash: 'h1', at: at(m) });

  it('a first occurrence opens a group; later ones move lastSeen and keep the raw message current', () => {
    const g = recordErrorOccurrence(null, occ(0));
    expect(g).toEqual({ rawErrorMessage: 'boom 0', cleanedErrorMessage: 'boom <number>', errorHash: 'h1', firstSeen: at(0), lastSeen: at(0), archivedUntilNextEvent: false, archivedForever: false });
    const g2 = recordErrorOccurrence(g, occ(5));
    expect(g2).toMatchObject({ firstSeen: at(0), lastSeen: at(5), rawErrorMessage: 'boom 5' });
    expect(recordErrorOccurrence(g2, occ(3)).lastSeen).toBe(at(5));
  });

  it('archived until the next event: a new occurrence unarchives; archived forever stays archived', () => {
    const g = recordErrorOccurrence(null, occ(0));
    const archived = applyErrorGroupPatch(g, { archivedUntilNextEvent: true });
    expect(archived.archivedUntilNextEvent).toBe(true);
    expect(recordErrorOccurrence(archived, occ(1)).archivedUntilNextEvent).toBe(false);
    const forever = applyErrorGroupPatch(g, { archiveForEver: true });
    expect(forever).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true });
    expect(recordErrorOccurrence(forever, occ(1))).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true });
  });

  it('patches: unarchive clears forever; archiveForEver false keeps the archive flag', () => {
    const forever = { archivedUntilNextEvent: true, archivedForever: true };
    expect(applyErrorGroupPatch(forever, { archivedUntilNextEvent: false })).toEqual({ archivedUntilNextEvent: false, archivedForever: false });
    expect(applyErrorGroupPatch(forever, { archiveForEver: false })).toEqual({ archivedUntilNextEvent: true, archivedForever: false });
    expect(applyErrorGroupPatch(forever, {})).toEqual(forever);
  });
});

describe('check sessions', () => {
  const session = (statuses: SessionState['sequences'][number]['status'][]): SessionState => ({
    status: deriveSessionStatus(statuses.map((status) => ({ status }))),
    startedAt: at(0),
    stoppedAt: null,
    timeElapsed: null,
    sequences: statuses.map((status, i) => ({ sequenceId: `s${i}`, runLocation: `loc${i}`, status })),
  });

  it('derives the status: STARTED, PROGRESS, then the worst final outcome', () => {
    expect(deriveSessionStatus([{ status: 'STARTED' }, { status: 'STARTED' }])).toBe('STARTED');
    expect(deriveSessionStatus([{ status: 'PASSED' }, { status: 'PROGRESS' }])).toBe('PROGRESS');
    expect(deriveSessionStatus([{ status: 'PASSED' }, { status: 'DEGRADED' }])).toBe('DEGRADED');
    expect(deriveSessionStatus([{ status: 'DEGRADED' }, { status: 'FAILED' }])).toBe('FAILED');
    expect(deriveSessionStatus([{ status: 'FAILED' }, { status: 'TIMED_OUT' }])).toBe('TIMED_OUT');
    expect(deriveSessionStatus([{ status: 'TIMED_OUT' }, { status: 'CANCELLED' }])).toBe('CANCELLED');
    expect(deriveSessionStatus([{ status: 'PASSED' }])).toBe('PASSED');
    expect(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'].every(isFinalSessionStatus)).toBe(true);
    expect(isFinalSessionStatus('PROGRESS') || isFinalSessionStatus('STARTED')).toBe(false);
    expect(isFinalStatus).toBe(isFinalSessionStatus);
  });

  it('completing every sequence finishes the session with stoppedAt and timeElapsed', () => {
    let s = startSequence(session(['STARTED', 'STARTED']), 's0');
    expect(s.status).toBe('PROGRESS');
    s = completeSequence(s, 's0', 'PASSED', new Date(at(1)));
    expect(s).toMatchObject({ status: 'PROGRESS', stoppedAt: null });
    s = completeSequence(s, 's1', 'FAILED', new Date(at(2)));
    expect(s).toMatchObject({ status: 'FAILED', stoppedAt: at(2), timeElapsed: 120_000 });
    expect(completeSequence(s, 's1', 'PASSED', new Date(at(3)))).toBe(s);
    expect(startSequence(s, 's0')).toBe(s);
  });

  it('cancel: all in-progress sequences, or only the listed ones; a final session does not move', () => {
    const s = completeSequence(session(['PROGRESS', 'PROGRESS', 'PROGRESS']), 's0', 'PASSED', new Date(at(1)));
    const one = cancelSession(s, ['s1', 'unknown'], new Date(at(2)));
    expect(one.sequences.map((x) => x.status)).toEqual(['PASSED', 'CANCELLED', 'PROGRESS']);
    expect(one.status).toBe('PROGRESS');
    const all = cancelSession(one, undefined, new Date(at(3)));
    expect(all).toMatchObject({ status: 'CANCELLED', stoppedAt: at(3), timeElapsed: 180_000 });
    expect(cancelSession(all, undefined, new Date(at(4)))).toBe(all);
    const passed = completeSequence(session(['PROGRESS']), 's0', 'PASSED', new Date(at(1)));
    expect(cancelSession(passed, undefined, new Date(at(2)))).toBe(passed);
    expect(cancelSession(s, ['nope'], new Date(at(2)))).toBe(s);
  });
});

describe('incidents and activation', () => {
  it('RESOLVED sets stoppedAt, a later update reopens, startedAt is set once', () => {
    let i = applyIncidentUpdate({ startedAt: null, stoppedAt: null }, 'INVESTIGATING', new Date(at(0)));
    expect(i).toEqual({ startedAt: at(0), stoppedAt: null });
    i = applyIncidentUpdate(i, 'RESOLVED', new Date(at(5)));
    expect(i).toEqual({ startedAt: at(0), stoppedAt: at(5) });
    i = applyIncidentUpdate(i, 'MONITORING', new Date(at(6)));
    expect(i).toEqual({ startedAt: at(0), stoppedAt: null });
  });

  it('a check runs only when it and its group are activated; either muting mutes', () => {
    expect(isCheckActive({ activated: true }, null)).toBe(true);
    expect(isCheckActive({ activated: true }, { activated: false })).toBe(false);
    expect(isCheckActive({ activated: false }, { activated: true })).toBe(false);
    expect(isCheckMuted({ muted: false }, { muted: true })).toBe(true);
    expect(isCheckMuted({ muted: false }, undefined)).toBe(false);
  });
});
