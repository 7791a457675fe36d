/**
 * What a check's triggerIncident does at one step of its alert state machine: open a status-page
 * incident when its alert settings raise a failure alert, resolve it when the check passes again.
 * Pure; the engine keeps the incident's id in the alert state and calls the incident service.
 */
import type { AlertState, AlertStep, AlertType } from './alerting.js';

/** The alerts that say the check now fails; a reminder is the same failure, not a new one. */
const FAILURE_ALERTS: readonly AlertType[] = ['ALERT_FAILURE', 'ALERT_DEGRADED_FAILURE'];

/** Longest error text quoted in a generated incident description (the status page is public). */
const MAX_ERROR_CHARS = 300;

export type IncidentTriggerAction =
  | { kind: 'NONE' }
  | { kind: 'OPEN' }
  | { kind: 'RESOLVE'; incidentId: string };

export interface IncidentTriggerContext {
  /** The check has a triggerIncident. */
  enabled: boolean;
  /** A maintenance window silences the check's alerts now. */
  silenced: boolean;
}

/**
 * One incident per failure episode (first failure to passing again). It opens when the failure
 * alert is raised, even for a muted check, since muting only keeps the channels quiet; but not
 * inside a window that silences alerts: planned work must not put a public incident on a status
 * page. The alert fires again once the window is over, and the incident opens then. It stays open
 * through a degraded spell and is resolved when the check passes, in or out of a window, so it is
 * never left open after the episode it belongs to has ended.
 */
export function incidentTriggerAction(previous: AlertState, step: AlertStep, ctx: IncidentTriggerContext): IncidentTriggerAction {
  const open = previous.incidentId ?? null;
  if (open !== null) return step.state.status === 'PASSING' ? { kind: 'RESOLVE', incidentId: open } : { kind: 'NONE' };
  if (ctx.enabled && !ctx.silenced && step.raised.some((a) => FAILURE_ALERTS.includes(a))) return { kind: 'OPEN' };
  return { kind: 'NONE' };
}

/** The first update of a triggered incident: the trigger's own text, or what failed and why. */
export function incidentOpeningText(description: string, checkName: string, errorMessage: string | null): string {
  if (description.trim().length > 0) return description;
  const error = errorMessage?.trim() ?? '';
  if (error.length === 0) return `${checkName} is failing`;
  return `${checkName} is failing: ${error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS - 1)}…` : error}`;
}

export function incidentResolvedText(checkName: string): string {
  return `${checkName} recovered`;
}
