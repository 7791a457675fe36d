import { describe, expect, it } from 'vitest';
import type { AlertSettingsInput } from '../src/rules/alerting.js';
import { effectiveCheckSettings, type GroupInput, type MemberCheckInput } from '../src/rules/group-defaults.js';

const DEFAULT_ALERT_SETTINGS: AlertSettingsInput = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  timeBasedEscalation: { minutesFailingThreshold: 5 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
};
const own = { ...structuredClone(DEFAULT_ALERT_SETTINGS), runBasedEscalation: { failedRunThreshold: 4 } };
const groupSettings = { ...structuredClone(DEFAULT_ALERT_SETTINGS), runBasedEscalation: { failedRunThreshold: 3 } };
const accountSettings = { ...structuredClone(DEFAULT_ALERT_SETTINGS), runBasedEscalation: { failedRunThreshold: 2 } };
const account = { alertSettings: accountSettings };

const check = (o: Partial<MemberCheckInput> = {}): MemberCheckInput => ({
  activated: true, muted: false, tags: ['api'], locations: [], privateLocations: [], runtimeId: null,
  environmentVariables: [], alertChannelSubscriptions: [], useGlobalAlertSettings: true, alertSettings: own, ...o,
});
const group = (o: Partial<GroupInput> = {}): GroupInput => ({
  activated: true, muted: false, tags: ['prod'], locations: ['eu-west-1'], privateLocations: ['dc-1'], runtimeId: '2025.04',
  environmentVariables: [], alertChannelSubscriptions: [], useGlobalAlertSettings: false, alertSettings: groupSettings, ...o,
});
const v = (key: string, value: string) => ({ key, value, locked: false, secret: false });

describe('group defaults', () => {
  it('a check outside a group uses its own settings or the account\'s', () => {
    expect(effectiveCheckSettings(check(), null, account).alertSettings).toBe(accountSettings);
    expect(effectiveCheckSettings(check({ useGlobalAlertSettings: false }), null, account).alertSettings).toBe(own);
    const e = effectiveCheckSettings(check({ locations: ['us-east-1'] }), null, account);
    expect(e).toMatchObject({ activated: true, muted: false, locations: ['us-east-1'], privateLocations: [], runtimeId: null, groupTags: [] });
  });

  it('alertSettings: the check\'s own when it opts out, else the group\'s, else the account\'s when the group defers', () => {
    expect(effectiveCheckSettings(check({ useGlobalAlertSettings: false }), group(), account).alertSettings).toBe(own);
    expect(effectiveCheckSettings(check(), group(), account).alertSettings).toBe(groupSettings);
    expect(effectiveCheckSettings(check(), group({ useGlobalAlertSettings: true }), account).alertSettings).toBe(accountSettings);
    expect(effectiveCheckSettings(check(), group({ useGlobalAlertSettings: null }), account).alertSettings).toBe(accountSettings);
  });

  it('locations, private locations and runtime come from the group unless the check sets them', () => {
    expect(effectiveCheckSettings(check(), group(), account)).toMatchObject({ locations: ['eu-west-1'], privateLocations: ['dc-1'], runtimeId: '2025.04' });
    expect(effectiveCheckSettings(check({ locations: ['ap-south-1'], privateLocations: ['dc-2'], runtimeId: '2026.04' }), group(), account))
      .toMatchObject({ locations: ['ap-south-1'], privateLocations: ['dc-2'], runtimeId: '2026.04' });
    expect(effectiveCheckSettings(check({ locations: null, privateLocations: null }), group({ locations: null, privateLocations: null }), account))
      .toMatchObject({ locations: [], privateLocations: [] });
  });

  it('a deactivated group stops its members and a muted group mutes them', () => {
    expect(effectiveCheckSettings(check(), group({ activated: false }), account).activated).toBe(false);
    expect(effectiveCheckSettings(check({ activated: false }), group(), account).activated).toBe(false);
    expect(effectiveCheckSettings(check(), group({ muted: true }), account).muted).toBe(true);
    expect(effectiveCheckSettings(check({ muted: true }), group(), account).muted).toBe(true);
  });

  it('environment variables merge by key, the check\'s winning; group keys first', () => {
    const e = effectiveCheckSettings(
      check({ environmentVariables: [v('B', 'check'), v('C', 'c')] }),
      group({ environmentVariables: [v('A', 'a'), v('B', 'group')] }),
      account,
    );
    expect(e.environmentVariables.map((x) => `${x.key}=${x.value}`)).toEqual(['A=a', 'B=check', 'C=c']);
  });

  it('alert channel subscriptions combine, the check\'s entry winning for one channel', () => {
    const e = effectiveCheckSettings(
      check({ alertChannelSubscriptions: [{ alertChannelId: 2, activated: false }, { alertChannelId: 3, activated: true }] }),
      group({ alertChannelSubscriptions: [{ alertChannelId: 1, activated: true }, { alertChannelId: 2, activated: true }] }),
      account,
    );
    expect(e.alertChannelSubscriptions).toEqual([
      { alertChannelId: 1, activated: true },
      { alertChannelId: 2, activated: false },
      { alertChannelId: 3, activated: true },
    ]);
    expect(e.tags).toEqual(['api']);
    expect(e.groupTags).toEqual(['prod']);
  });
});
