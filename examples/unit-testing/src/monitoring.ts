import type { Vigil } from '@vigil/core';

/**
 * The payments team's monitoring, as the host app keeps it in code and applies on start. This
 * is the "check logic" the tests in test/ pin down: when it alerts, and when it stays quiet.
 */

/** Their on-call webhook. In production `registerAlertChannels` delivers it; tests use a FakeTransport. */
export const paymentsOnCall = {
  type: 'WEBHOOK',
  config: { name: 'payments on-call', url: 'https://hooks.example.com/payments-oncall' },
} as const;

/**
 * The payments API, probed over TCP once a minute. One dropped connection is not worth waking
 * anyone: the team is alerted after three failed runs in a row, and not reminded after that.
 */
export const paymentsApiCheck = {
  name: 'payments-api',
  request: { hostname: 'payments.internal', port: 8443 },
  frequency: 1,
  tags: ['payments'],
  useGlobalAlertSettings: false,
  alertSettings: {
    escalationType: 'RUN_BASED',
    runBasedEscalation: { failedRunThreshold: 3 },
    reminders: { amount: 0, interval: 5 },
  },
} as const;

/**
 * The database is patched every Sunday from 02:00 to 04:00 Berlin time. The payments checks keep
 * running (the dashboard shows what happens), but their alerts are silenced.
 */
export const sundayMaintenance = {
  name: 'Sunday database maintenance',
  startsAt: '2026-05-03T02:00:00+02:00',
  endsAt: '2026-05-03T04:00:00+02:00',
  repeatUnit: 'WEEK',
  repeatInterval: 1,
  timezone: 'Europe/Berlin',
  silenceAlertsTags: ['payments'],
} as const;

/** Creates the channel, the window and the check in an account (the check subscribes to the channel). */
export async function setUpPaymentsMonitoring(vigil: Vigil, accountId: string) {
  const channel = await vigil.alertChannels.create(accountId, paymentsOnCall);
  const maintenance = await vigil.maintenanceWindows.create(accountId, sundayMaintenance);
  const check = await vigil.checks.create(accountId, 'TCP', paymentsApiCheck);
  return { channel, maintenance, check };
}
