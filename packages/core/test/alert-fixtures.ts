import type { AlertSettingsInput, RunOutcomeInput } from '../src/rules/alerting.js';

export const PASS: RunOutcomeInput = { hasFailures: false, hasErrors: false, isDegraded: false };
export const FAIL: RunOutcomeInput = { hasFailures: true, hasErrors: false, isDegraded: false };
export const ERROR: RunOutcomeInput = { hasFailures: false, hasErrors: true, isDegraded: false };
export const DEGRADED: RunOutcomeInput = { hasFailures: false, hasErrors: false, isDegraded: true };

/** Alert settings with their documented defaults (docs/decisions.md, "alertSettings"). */
export function alertSettings(overrides: Partial<AlertSettingsInput> = {}): AlertSettingsInput {
  return {
    escalationType: 'RUN_BASED',
    runBasedEscalation: { failedRunThreshold: 1 },
    timeBasedEscalation: { minutesFailingThreshold: 5 },
    reminders: { amount: 0, interval: 5 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
    ...overrides,
  };
}
