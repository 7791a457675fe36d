import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../src/model/check-result.js';
import type { Check } from '../src/model/check.js';
import { OutboxPayloadSchema } from '../src/model/outbox-payload.js';
import { alertPayload, type AlertPayloadInput } from '../src/rules/alert-payload.js';
import { alertStateFixture, apiCheckFixture, checkResultFixture, tcpCheckFixture } from '../src/testing/fixtures.js';

const A = 'account-1';
const check = (c: Omit<Check, 'accountId'>): Check => ({ ...c, accountId: A }) as Check;
const tcp = check(tcpCheckFixture({ name: 'orders-db', tags: ['db', 'eu'] }));
const failed: CheckResult = {
  ...checkResultFixture(tcp.id, { hasFailures: true, errorMessage: 'Connection refused', runLocation: 'eu-west-1', responseTime: 42 }),
  accountId: A,
};
const failing = alertStateFixture({ status: 'FAILING', failingSince: '2026-05-01T11:58:00.000Z', alerted: 'FAILURE', remindersSent: 2 });

const input = (overrides: Partial<AlertPayloadInput> = {}): AlertPayloadInput => ({
  check: tcp, groupName: 'payments', result: failed, state: failing, alertType: 'ALERT_FAILURE', sslDaysRemaining: null,
  environment: {}, secrets: [], ...overrides,
});

describe('alert payload', () => {
  it('holds the check, its group, the run and the failure episode', () => {
    expect(alertPayload(input())).toEqual({
      kind: 'alert',
      alertType: 'ALERT_FAILURE',
      checkId: tcp.id,
      checkName: 'orders-db',
      checkType: 'TCP',
      checkResultId: failed.id,
      errorMessage: 'Connection refused',
      groupName: 'payments',
      runLocation: 'eu-west-1',
      responseTime: 42,
      startedAt: failed.startedAt,
      failingSince: '2026-05-01T11:58:00.000Z',
      tags: ['db', 'eu'],
      isReminder: false,
      reminderSequence: 0,
      sslCheckDomain: null,
      sslDaysRemaining: null,
      variables: {},
    });
  });

  it('numbers a reminder by the reminders sent; other alerts are no reminder', () => {
    expect(alertPayload(input({ alertType: 'ALERT_FAILURE_REMAIN' }))).toMatchObject({ isReminder: true, reminderSequence: 2 });
    expect(alertPayload(input({ alertType: 'ALERT_RECOVERY' }))).toMatchObject({ isReminder: false, reminderSequence: 0 });
  });

  it('without a run (a certificate alert), has no run fields; names the certificate\'s domain and days left', () => {
    const api = check(apiCheckFixture({ request: { ...apiCheckFixture().request, url: 'https://shop.example.com/health' } }));
    const p = alertPayload(input({ check: api, result: null, groupName: null, alertType: 'ALERT_SSL', sslDaysRemaining: 6 }));
    expect(p).toMatchObject({
      checkResultId: null, errorMessage: null, runLocation: null, responseTime: null, startedAt: null, groupName: null,
      sslCheckDomain: 'shop.example.com', sslDaysRemaining: 6,
    });
    expect(alertPayload(input()).sslCheckDomain).toBeNull();
  });

  it('carries the check\'s variables except those holding a secret value', () => {
    const p = alertPayload(input({ environment: { REGION: 'eu', TOKEN: 's3cret', ALSO: 's3cret' }, secrets: ['s3cret'] }));
    expect(p.variables).toEqual({ REGION: 'eu' });
  });

  it('is a payload the outbox schema reads back as it was', () => {
    const p = alertPayload(input({ environment: { REGION: 'eu' } }));
    expect(v.parse(OutboxPayloadSchema, JSON.parse(JSON.stringify(p)))).toEqual(p);
  });
});
