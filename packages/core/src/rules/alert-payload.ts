/** The outbox payload of one alert, from what the run pipeline knows when it queues it. Pure. */
import type { AlertType } from '../model/alert-channel.js';
import type { CheckResult } from '../model/check-result.js';
import type { Check } from '../model/check.js';
import type { AlertPayload } from '../model/outbox-payload.js';
import type { AlertState } from './alerting.js';
import { certificateTarget } from './schedule-plan.js';

export interface AlertPayloadInput {
  check: Check;
  /** The name of the check's group, if it has one. */
  groupName: string | null;
  /** The run the alert is about; null for a certificate alert or a reminder between runs. */
  result: CheckResult | null;
  /** The check's alert state after the step that raised the alert. */
  state: AlertState;
  alertType: AlertType;
  sslDaysRemaining: number | null;
  /** The check's variables (its group's and account's included), by name. */
  environment: Readonly<Record<string, string>>;
  /** The secret values among them: a variable holding one is left out. */
  secrets: readonly string[];
}

export function alertPayload(input: AlertPayloadInput): AlertPayload {
  const { check, result, state, alertType } = input;
  const reminder = alertType === 'ALERT_FAILURE_REMAIN';
  return {
    kind: 'alert',
    alertType,
    checkId: check.id,
    checkName: check.name,
    checkType: check.checkType,
    checkResultId: result?.id ?? null,
    errorMessage: result?.errorMessage ?? null,
    groupName: input.groupName,
    runLocation: result?.runLocation ?? null,
    responseTime: result?.responseTime ?? null,
    startedAt: result?.startedAt ?? null,
    failingSince: state.failingSince,
    tags: check.tags,
    isReminder: reminder,
    reminderSequence: reminder ? state.remindersSent : 0,
    sslCheckDomain: certificateTarget(check)?.host ?? null,
    sslDaysRemaining: input.sslDaysRemaining,
    // The variables for webhook templates; secret ones never leave the run.
    variables: Object.fromEntries(Object.entries(input.environment).filter(([, value]) => !input.secrets.includes(value))),
  };
}
