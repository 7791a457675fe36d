import type { CheckGroup } from '../model/check-group.js';
import type { CheckSession } from '../model/check-session.js';
import type { Check } from '../model/check.js';
import type { ScheduleEntry } from '../model/schedule-entry.js';
import { isAbsoluteHttpUrl, isTemplatedUrl } from '../model/urls.js';
import { effectiveCheckSettings } from './group-defaults.js';
import { candidateLocations, checkPeriodMs, checkPhaseMs, type ScheduledCheckInput } from './schedule.js';
import { isCheckActive } from './transitions.js';

/** A heartbeat check is looked at every minute: a missed ping is noticed within a minute. */
const HEARTBEAT_TIMING = { frequency: 1, frequencyOffset: null } as const;

function timing(check: Check): ScheduledCheckInput {
  return check.checkType === 'HEARTBEAT'
    ? { id: check.id, ...HEARTBEAT_TIMING }
    : { id: check.id, frequency: check.frequency, frequencyOffset: (check as { frequencyOffset?: number | null }).frequencyOffset ?? null };
}

/** Where a check runs: its (or its group's) locations, or the default; a heartbeat only in the default. */
export function runLocations(check: Check, group: CheckGroup | null, defaultLocation: string): string[] {
  if (check.checkType === 'HEARTBEAT') return [defaultLocation];
  const effective = effectiveCheckSettings(check, group, { alertSettings: check.alertSettings });
  return candidateLocations(effective, defaultLocation);
}

/**
 * The first run of a check in one of its locations strictly after `after`. With runParallel every
 * location runs every slot; otherwise slot k goes to location k mod n (round-robin without state).
 */
export function nextDueIn(check: Check, locations: readonly string[], location: string, after: Date): Date | null {
  const index = locations.indexOf(location);
  if (index < 0) return null;
  const t = timing(check);
  const period = checkPeriodMs(t);
  const phase = checkPhaseMs(t);
  let k = Math.floor((after.getTime() - phase) / period) + 1;
  const n = check.checkType !== 'HEARTBEAT' && !check.runParallel ? locations.length : 1;
  if (n > 1) k += (((index - k) % n) + n) % n;
  return new Date(phase + k * period);
}

/** How often a failing or degraded check is looked at between its runs. */
export const ALERT_TICK_MS = 60_000;

/**
 * The between-runs alert tick of a failing or degraded check, a minute after `now`: the one
 * entry every place that plans a tick writes.
 */
export function alertTickEntry(accountId: string, checkId: string, now: Date): ScheduleEntry {
  return { kind: 'alert-tick', accountId, checkId, location: '', dueAt: new Date(now.getTime() + ALERT_TICK_MS).toISOString() };
}

/** The entries of a session's sequences, due now: one `session` entry per sequence. */
export function sessionEntries(session: CheckSession, now: Date): ScheduleEntry[] {
  return session.sequences.map((seq) => ({
    kind: 'session' as const,
    accountId: session.accountId,
    checkId: session.checkId,
    location: seq.runLocation,
    session: { checkSessionId: session.checkSessionId, sequenceId: seq.sequenceId },
    dueAt: now.toISOString(),
  }));
}

/**
 * The TLS endpoint whose certificate a check watches: its sslCheckDomain on 443, the target of a
 * TCP check on port 443, or the host of an API check's https:// url (one written out in full; a
 * relative or templated url is only known when it runs, and its runs report the days left).
 * Null when it watches none.
 */
export function certificateTarget(check: Check): { host: string; port: number } | null {
  const domain = (check as { sslCheckDomain?: string | null }).sslCheckDomain;
  if (domain) return { host: domain, port: 443 };
  if (check.checkType === 'TCP' && check.request.port === 443) return { host: check.request.hostname, port: 443 };
  if ((check.checkType === 'API' || check.checkType === 'URL') && !isTemplatedUrl(check.request.url) && isAbsoluteHttpUrl(check.request.url)) {
    const url = new URL(check.request.url);
    if (url.protocol === 'https:') return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443) };
  }
  return null;
}

/** The schedule entries a check should have now: none when it (or its group) is deactivated. */
export function plannedEntries(
  accountId: string,
  check: Check,
  group: CheckGroup | null,
  defaultLocation: string,
  after: Date,
): ScheduleEntry[] {
  if (!isCheckActive(check, group)) return [];
  const locations = runLocations(check, group, defaultLocation);
  const entries: ScheduleEntry[] = locations.map((location) => ({
    kind: 'run' as const,
    accountId,
    checkId: check.id,
    location,
    dueAt: nextDueIn(check, locations, location, after)!.toISOString(),
  }));
  // A certificate is first looked at right away, then daily.
  if (certificateTarget(check)) entries.push({ kind: 'certificate', accountId, checkId: check.id, location: '', dueAt: after.toISOString() });
  return entries;
}
