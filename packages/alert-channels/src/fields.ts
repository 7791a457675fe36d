import type { AlertMessage } from '@vigil/core';

/** The variables of a webhook template (docs/decisions.md, "webhook body"), in the order they are documented. */
export const TEMPLATE_VARIABLES = [
  'ALERT_TITLE',
  'ALERT_TYPE',
  'CHECK_NAME',
  'CHECK_ID',
  'CHECK_TYPE',
  'CHECK_RESULT_ID',
  'CHECK_ERROR_MESSAGE',
  'GROUP_NAME',
  'RUN_LOCATION',
  'RESPONSE_TIME',
  'STARTED_AT',
  'TAGS',
  'IS_REMINDER',
  'REMINDER_SEQUENCE',
  'SSL_CHECK_DOMAIN',
  'SSL_DAYS_REMAINING',
] as const;

export type AlertFields = Record<(typeof TEMPLATE_VARIABLES)[number], string | number | boolean | string[] | null>;

/** An alert as the flat fields docs/decisions.md lists: what a template sees and what the default webhook body holds. */
export function alertFields(alert: AlertMessage): AlertFields {
  return {
    ALERT_TITLE: alert.title,
    ALERT_TYPE: alert.alertType,
    CHECK_NAME: alert.check.name,
    CHECK_ID: alert.check.id,
    CHECK_TYPE: alert.check.checkType,
    CHECK_RESULT_ID: alert.result?.id ?? null,
    CHECK_ERROR_MESSAGE: alert.result?.errorMessage ?? null,
    GROUP_NAME: alert.check.groupName,
    RUN_LOCATION: alert.result?.runLocation ?? null,
    RESPONSE_TIME: alert.result?.responseTime ?? null,
    STARTED_AT: alert.result?.startedAt ?? null,
    TAGS: alert.check.tags,
    IS_REMINDER: alert.isReminder,
    REMINDER_SEQUENCE: alert.reminderSequence,
    SSL_CHECK_DOMAIN: alert.ssl?.domain ?? null,
    SSL_DAYS_REMAINING: alert.ssl?.daysRemaining ?? null,
  };
}

export type Severity = 'failure' | 'degraded' | 'recovery' | 'warning';

/** How bad an alert is, for transports that colour or rank messages. */
export function severityOf(alertType: string): Severity {
  switch (alertType) {
    case 'ALERT_FAILURE':
    case 'ALERT_FAILURE_REMAIN':
    case 'ALERT_DEGRADED_FAILURE':
      return 'failure';
    case 'ALERT_DEGRADED':
    case 'ALERT_FAILURE_DEGRADED':
      return 'degraded';
    case 'ALERT_RECOVERY':
    case 'ALERT_DEGRADED_RECOVERY':
      return 'recovery';
    default:
      return 'warning';
  }
}

/** Whether the alert ends a problem (a paging incident is resolved or closed on it). */
export const isRecovery = (alertType: string): boolean => severityOf(alertType) === 'recovery';

/**
 * The facts a person needs, as label/value pairs: what, where, since when, and the error. Every
 * human-readable transport (email, chat, call) builds its message from these.
 */
export function alertFacts(alert: AlertMessage): [label: string, value: string][] {
  const facts: [string, string][] = [
    ['Check', alert.check.name],
    ['Type', alert.check.checkType],
  ];
  if (alert.check.groupName) facts.push(['Group', alert.check.groupName]);
  if (alert.result) {
    facts.push(['Location', alert.result.runLocation]);
    if (isRecovery(alert.alertType)) facts.push(['Recovered at', alert.result.startedAt]);
    else facts.push(['Since', alert.failingSince ?? alert.result.startedAt]);
    facts.push(['Response time', `${alert.result.responseTime} ms`]);
    if (alert.result.errorMessage && !isRecovery(alert.alertType)) facts.push(['Error', alert.result.errorMessage]);
  }
  if (alert.ssl) facts.push(['Certificate', `${alert.ssl.domain} expires in ${alert.ssl.daysRemaining} days`]);
  if (alert.isReminder) facts.push(['Reminder', String(alert.reminderSequence)]);
  if (alert.check.tags.length > 0) facts.push(['Tags', alert.check.tags.join(', ')]);
  return facts;
}

/** The alert as plain text: the title, then one fact a line. */
export function alertText(alert: AlertMessage): string {
  return [alert.title, '', ...alertFacts(alert).map(([label, value]) => `${label}: ${value}`)].join('\n');
}
