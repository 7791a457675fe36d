import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { Account, ApiKey } from '../model/account.js';
import { AlertChannelCreateSchema, type AlertChannel, type AlertSubscription } from '../model/alert-channel.js';
import { CheckGroupCreateSchema, type CheckGroup } from '../model/check-group.js';
import type { CheckResult } from '../model/check-result.js';
import type { CheckSession } from '../model/check-session.js';
import type { CheckStatus } from '../model/check-status.js';
import {
  ApiCheckCreateSchema,
  BrowserCheckCreateSchema,
  HeartbeatCheckCreateSchema,
  TcpCheckCreateSchema,
  type ApiCheck,
  type BrowserCheck,
  type Check,
  type HeartbeatCheck,
  type TcpCheck,
} from '../model/check.js';
import { DnsCheckCreateSchema, type DnsCheck } from '../model/check-dns.js';
import { IcmpCheckCreateSchema, type IcmpCheck } from '../model/check-icmp.js';
import { MultiStepCheckCreateSchema, type MultiStepCheck } from '../model/check-multistep.js';
import { PlaywrightCheckCreateSchema, type PlaywrightCheck } from '../model/check-playwright.js';
import { UrlCheckCreateSchema, type UrlCheck } from '../model/check-url.js';
import type { PluginCheck } from '../model/check-type.js';
import type { ErrorGroup, TestSessionErrorGroup } from '../model/error-group.js';
import { DEFAULT_ALERT_SETTINGS } from '../model/shared.js';
import { INITIAL_ALERT_STATE, type AlertState } from '../rules/alerting.js';
import type { NewOutboxMessage, NewRecord, StoredRecord } from '../ports/storage.js';
import type { RunJob } from '../ports/runner.js';
import { FIXTURE_TIME, nextSerial, stamps } from './fixtures-base.js';

// Records of accounts, checks, groups, channels and runs as a store holds them; the other resources' are in fixtures-resources.ts.
export { FIXTURE_TIME, nextSerial } from './fixtures-base.js';
export * from './fixtures-resources.js';
export * from './fixtures-defaults.js';

export function accountFixture(overrides: Partial<Account> = {}): Account {
  return {
    id: randomUUID(),
    name: `Account ${nextSerial()}`,
    alertSettings: structuredClone(DEFAULT_ALERT_SETTINGS),
    ...stamps(),
    ...overrides,
  };
}

export function apiKeyFixture(accountId: string, overrides: Partial<ApiKey> = {}): ApiKey {
  const n = nextSerial();
  return {
    id: randomUUID(),
    accountId,
    name: `Key ${n}`,
    prefix: `vgl_${String(n).padStart(8, '0')}`,
    hash: 'ab'.repeat(32),
    created_at: FIXTURE_TIME,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
  };
}

export function tcpCheckFixture(overrides: Partial<NewRecord<TcpCheck>> = {}): NewRecord<TcpCheck> {
  const body = v.parse(TcpCheckCreateSchema, {
    name: `TCP check ${nextSerial()}`,
    request: { hostname: 'db.example.com', port: 5432 },
  });
  return { ...body, id: randomUUID(), checkType: 'TCP', ...stamps(), ...overrides };
}

export function dnsCheckFixture(overrides: Partial<NewRecord<DnsCheck>> = {}): NewRecord<DnsCheck> {
  const body = v.parse(DnsCheckCreateSchema, {
    name: `DNS check ${nextSerial()}`,
    request: { query: 'shop.example.com', nameServer: '192.0.2.53' },
  });
  return { ...body, id: randomUUID(), checkType: 'DNS', ...stamps(), ...overrides };
}

export function icmpCheckFixture(overrides: Partial<NewRecord<IcmpCheck>> = {}): NewRecord<IcmpCheck> {
  const body = v.parse(IcmpCheckCreateSchema, { name: `ICMP check ${nextSerial()}`, request: { hostname: 'edge.example.com' } });
  return { ...body, id: randomUUID(), checkType: 'ICMP', ...stamps(), ...overrides };
}

export function multiStepCheckFixture(overrides: Partial<NewRecord<MultiStepCheck>> = {}): NewRecord<MultiStepCheck> {
  const body = v.parse(MultiStepCheckCreateSchema, {
    name: `Multi-step check ${nextSerial()}`,
    script: "await step('home', async () => {\n  const res = await request.get('https://shop.example.com/');\n  expect(res.status()).toBe(200);\n});",
  });
  return { ...body, id: randomUUID(), checkType: 'MULTI_STEP', ...stamps(), ...overrides };
}

export function playwrightCheckFixture(overrides: Partial<NewRecord<PlaywrightCheck>> = {}): NewRecord<PlaywrightCheck> {
  const body = v.parse(PlaywrightCheckCreateSchema, {
    name: `Playwright suite ${nextSerial()}`,
    files: {
      'tests/home.spec.ts': "import { expect, test } from '@playwright/test';\n\ntest('home', async ({ page }) => {\n  await page.setContent('<h1>Shop</h1>');\n  await expect(page.locator('h1')).toHaveText('Shop');\n});\n",
    },
  });
  return { ...body, id: randomUUID(), checkType: 'PLAYWRIGHT', ...stamps(), ...overrides };
}

export function urlCheckFixture(overrides: Partial<NewRecord<UrlCheck>> = {}): NewRecord<UrlCheck> {
  const body = v.parse(UrlCheckCreateSchema, { name: `URL check ${nextSerial()}`, request: { url: 'https://shop.example.com/' } });
  return { ...body, id: randomUUID(), checkType: 'URL', ...stamps(), ...overrides };
}

export function apiCheckFixture(overrides: Partial<NewRecord<ApiCheck>> = {}): NewRecord<ApiCheck> {
  const body = v.parse(ApiCheckCreateSchema, {
    name: `API check ${nextSerial()}`,
    request: { url: 'https://api.example.com/health' },
  });
  return { ...body, id: randomUUID(), checkType: 'API', ...stamps(), ...overrides };
}

export function browserCheckFixture(overrides: Partial<NewRecord<BrowserCheck>> = {}): NewRecord<BrowserCheck> {
  const body = v.parse(BrowserCheckCreateSchema, {
    name: `Browser check ${nextSerial()}`,
    script: "await page.goto('https://example.com');",
  });
  return { ...body, id: randomUUID(), checkType: 'BROWSER', ...stamps(), ...overrides };
}

export function heartbeatCheckFixture(overrides: Partial<NewRecord<HeartbeatCheck>> = {}): NewRecord<HeartbeatCheck> {
  const body = v.parse(HeartbeatCheckCreateSchema, {
    name: `Heartbeat ${nextSerial()}`,
    heartbeat: { period: 5, periodUnit: 'minutes', grace: 1, graceUnit: 'minutes' },
  });
  return {
    ...body,
    heartbeat: { ...body.heartbeat, pingToken: randomUUID().replaceAll('-', '') },
    id: randomUUID(),
    checkType: 'HEARTBEAT',
    ...stamps(),
    ...overrides,
  };
}

export function checkGroupFixture(overrides: Partial<NewRecord<CheckGroup>> = {}): NewRecord<CheckGroup> {
  const body = v.parse(CheckGroupCreateSchema, { name: `Group ${nextSerial()}` });
  return { ...body, ...stamps(), ...overrides };
}

type EmailChannel = Extract<AlertChannel, { type: 'EMAIL' }>;
type WebhookChannel = Extract<AlertChannel, { type: 'WEBHOOK' }>;

export function emailChannelFixture(overrides: Partial<NewRecord<EmailChannel>> = {}): NewRecord<EmailChannel> {
  const body = v.parse(AlertChannelCreateSchema, { type: 'EMAIL', config: { address: `ops${nextSerial()}@example.com` } });
  return { ...(body as Omit<EmailChannel, 'id' | 'accountId' | 'created_at' | 'updated_at'>), ...stamps(), ...overrides };
}

export function webhookChannelFixture(overrides: Partial<NewRecord<WebhookChannel>> = {}): NewRecord<WebhookChannel> {
  const body = v.parse(AlertChannelCreateSchema, {
    type: 'WEBHOOK',
    config: { name: `Hook ${nextSerial()}`, url: 'https://hooks.example.com/vigil', headers: [{ key: 'X-Team', value: 'ops' }] },
  });
  return { ...(body as Omit<WebhookChannel, 'id' | 'accountId' | 'created_at' | 'updated_at'>), ...stamps(), ...overrides };
}

export function alertSubscriptionFixture(
  alertChannelId: number,
  target: { checkId: string } | { groupId: number },
  overrides: Partial<NewRecord<AlertSubscription>> = {},
): NewRecord<AlertSubscription> {
  const link = 'checkId' in target ? { checkId: target.checkId, groupId: null } : { checkId: null, groupId: target.groupId };
  return { alertChannelId, ...link, activated: true, ...overrides };
}

export function checkResultFixture(checkId: string, overrides: Partial<NewRecord<CheckResult>> = {}): NewRecord<CheckResult> {
  const startedAt = overrides.startedAt ?? FIXTURE_TIME;
  return {
    id: randomUUID(),
    checkId,
    checkType: 'TCP',
    name: 'TCP check',
    runLocation: 'us-east-1',
    startedAt,
    stoppedAt: new Date(Date.parse(startedAt) + 120).toISOString(),
    created_at: startedAt,
    responseTime: 120,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    attempts: 1,
    resultType: 'FINAL',
    runSource: 'SCHEDULER',
    checkSessionId: null,
    sequenceId: null,
    errorMessage: null,
    phases: { dns: 10, connection: 30, data: 80, total: 120 },
    statusCode: null,
    sslDaysRemaining: null,
    details: null,
    ...overrides,
  };
}

export function checkSessionFixture(checkId: string, overrides: Partial<NewRecord<CheckSession>> = {}): NewRecord<CheckSession> {
  return {
    checkSessionId: randomUUID(),
    checkId,
    checkType: 'TCP',
    name: 'TCP check',
    status: 'STARTED',
    startedAt: FIXTURE_TIME,
    stoppedAt: null,
    timeElapsed: null,
    runLocations: ['us-east-1', 'eu-west-1'],
    runSource: 'TRIGGER_API',
    projectId: null,
    environment: null,
    sequences: [
      { sequenceId: randomUUID(), runLocation: 'us-east-1', status: 'STARTED' },
      { sequenceId: randomUUID(), runLocation: 'eu-west-1', status: 'STARTED' },
    ],
    ...overrides,
  };
}

export function checkStatusFixture(checkId: string, overrides: Partial<StoredRecord<CheckStatus>> = {}): StoredRecord<CheckStatus> {
  return {
    name: 'TCP check',
    checkId,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    longestRun: 180,
    shortestRun: 90,
    lastRunLocation: 'us-east-1',
    lastCheckRunId: randomUUID(),
    sslDaysRemaining: null,
    ...stamps(),
    ...overrides,
  };
}

/** What Outbox.enqueue takes for one message (the port's type, kept here for the testing entry). */
export type { NewOutboxMessage };

export function outboxMessageFixture(
  accountId: string,
  overrides: Partial<NewOutboxMessage> = {},
): NewOutboxMessage {
  return {
    id: randomUUID(),
    accountId,
    checkId: null,
    alertChannelId: 1,
    alertType: 'ALERT_FAILURE',
    payload: { checkName: 'TCP check', runLocation: 'us-east-1' },
    created_at: FIXTURE_TIME,
    nextAttemptAt: FIXTURE_TIME,
    ...overrides,
  };
}

export function errorGroupFixture(checkId: string, overrides: Partial<NewRecord<ErrorGroup>> = {}): NewRecord<ErrorGroup> {
  const n = nextSerial();
  return {
    id: randomUUID(),
    checkId,
    errorHash: n.toString(16).padStart(64, '0'),
    rawErrorMessage: `connect ECONNREFUSED 10.0.0.${n % 255}:5432`,
    cleanedErrorMessage: 'connect ECONNREFUSED <ip>',
    firstSeen: FIXTURE_TIME,
    lastSeen: FIXTURE_TIME,
    archivedUntilNextEvent: false,
    archivedForever: false,
    rootCauseAnalyses: [],
    ...overrides,
  };
}

export function testSessionErrorGroupFixture(
  projectId: string | null,
  overrides: Partial<NewRecord<TestSessionErrorGroup>> = {},
): NewRecord<TestSessionErrorGroup> {
  const n = nextSerial();
  return {
    id: randomUUID(),
    projectId,
    errorHash: n.toString(16).padStart(64, 'f'),
    rawErrorMessage: `expect(received).toBe(expected) #${n}`,
    cleanedErrorMessage: 'expect(received).toBe(expected) #<number>',
    firstSeen: FIXTURE_TIME,
    lastSeen: FIXTURE_TIME,
    archivedUntilNextEvent: false,
    archivedForever: false,
    rootCauseAnalyses: [],
    environments: ['production'],
    pwtMetadata: [{ projectName: projectId ?? 'default', testFile: 'checks/login.spec.ts', testTitle: 'Login', suitePath: ['Group'] }],
    ...overrides,
  };
}

export function alertStateFixture(overrides: Partial<AlertState> = {}): AlertState {
  return { ...structuredClone(INITIAL_ALERT_STATE), ...overrides };
}

/**
 * A job for a runner's tests: `check` as given (accountId account-1), a TEST run in us-east-1, 10 s
 * limit. The check may be of a plugin's type (`CheckOf<typeof myCheckType>`).
 */
export function runJobFixture(check: Check | PluginCheck<string, v.ObjectEntries>, overrides: Partial<Omit<RunJob, 'check'>> = {}): RunJob {
  return {
    runId: `run-${randomUUID()}`,
    accountId: 'account-1',
    check: check as Check,
    group: null,
    location: 'us-east-1',
    attempt: 1,
    dueAt: new Date().toISOString(),
    runSource: 'TEST',
    checkSessionId: null,
    sequenceId: null,
    environment: {},
    secrets: [],
    timeoutMs: 10_000,
    ...overrides,
  };
}
