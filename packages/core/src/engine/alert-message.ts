/*
 * The message an alert transport receives, made from a claimed outbox message: its title and the
 * fields of its payload, with what a row of an earlier version lacks filled in.
 */
import type { AlertMessage } from '../ports/alert-transport.js';
import type { OutboxMessage } from '../ports/storage.js';
import type { AnyAlertPayload } from '../model/outbox-payload.js';

/** A claimed alert, its payload parsed. */
export type AlertOutboxMessage = Omit<OutboxMessage, 'payload'> & { payload: AnyAlertPayload };

/** A one-line title a person reads first. */
export function alertTitle(alertType: string, p: AnyAlertPayload): string {
  const name = `"${p.checkName ?? 'check'}"`;
  const where = p.runLocation ? ` in ${p.runLocation}` : '';
  switch (alertType) {
    case 'ALERT_FAILURE': return `${name} is failing${where}`;
    case 'ALERT_RECOVERY': return `${name} has recovered`;
    case 'ALERT_DEGRADED': return `${name} is degraded${where}`;
    case 'ALERT_DEGRADED_RECOVERY': return `${name} is no longer degraded`;
    case 'ALERT_FAILURE_REMAIN': return `${name} is still failing${where} (reminder ${p.reminderSequence ?? 1})`;
    case 'ALERT_DEGRADED_FAILURE': return `${name} went from degraded to failing${where}`;
    case 'ALERT_FAILURE_DEGRADED': return `${name} went from failing to degraded${where}`;
    case 'ALERT_SSL': return `The certificate of ${p.sslCheckDomain ?? 'the domain'} for ${name} expires in ${p.sslDaysRemaining ?? '?'} days`;
    default: return `${name}: ${alertType}`;
  }
}

/**
 * The message transports receive. A field an earlier version's row lacks reads as empty (the
 * check's id and the run's start fall back to the row's check and time).
 */
export function toAlertMessage(m: AlertOutboxMessage): AlertMessage {
  const p = m.payload;
  const domain = p.sslCheckDomain ?? null;
  const days = p.sslDaysRemaining ?? null;
  return {
    id: m.id,
    accountId: m.accountId,
    alertType: m.alertType,
    title: alertTitle(m.alertType, p),
    check: {
      id: p.checkId ?? m.checkId ?? '',
      name: p.checkName ?? '',
      checkType: p.checkType ?? '',
      tags: p.tags ?? [],
      groupName: p.groupName ?? null,
    },
    result: p.checkResultId
      ? {
          id: p.checkResultId,
          errorMessage: p.errorMessage ?? null,
          runLocation: p.runLocation ?? '',
          responseTime: p.responseTime ?? 0,
          startedAt: p.startedAt ?? m.created_at,
        }
      : null,
    failingSince: p.failingSince ?? null,
    isReminder: p.isReminder === true,
    reminderSequence: p.reminderSequence ?? 0,
    ssl: domain && days !== null ? { domain, daysRemaining: days } : null,
    variables: p.variables ?? {},
    created_at: m.created_at,
  };
}
