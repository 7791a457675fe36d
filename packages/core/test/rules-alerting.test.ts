import { describe, expect, it } from 'vitest';
import {
  ALERT_TYPES,
  channelWantsAlert,
  classifyRound,
  evaluateRun,
  evaluateSsl,
  evaluateTick,
  INITIAL_ALERT_STATE,
  sslAlertAppliesToChannel,
  type AlertContext,
  type AlertSettingsInput,
  type AlertState,
  type AlertType,
  type RunOutcomeInput,
} from '../src/rules/alerting.js';
import { maintenanceEffect } from '../src/rules/maintenance.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { alertSettings, DEGRADED, ERROR, FAIL, PASS } from './alert-fixtures.js';

const settings = alertSettings;

/** Drives one check through the rules, a run per `runs` entry, `everyMs` apart on a fake clock. */
class Driver {
  state: AlertState = INITIAL_ALERT_STATE;
  readonly sent: { at: string; type: AlertType }[] = [];
  readonly clock = new FakeClock('2026-05-01T12:00:00.000Z');
  muted = false;
  silenced = false;

  constructor(private readonly s: AlertSettingsInput, private readonly runParallel = false) {}

  ctx(): AlertContext {
    return { settings: this.s, runParallel: this.runParallel, muted: this.muted, silenced: this.silenced, now: this.clock.now() };
  }

  run(outcome: RunOutcomeInput | RunOutcomeInput[], thenAdvanceMs = 60_000): AlertType[] {
    const step = evaluateRun(this.state, outcome, this.ctx());
    this.state = step.state;
    for (const type of step.alerts) this.sent.push({ at: this.clock.now().toISOString(), type });
    this.clock.advance(thenAdvanceMs);
    return step.alerts;
  }
}

describe('alert escalation: the scenario of a failing check', () => {
  it('two failed runs with failedRunThreshold 2 give exactly one ALERT_FAILURE, reminders by amount and interval, then ALERT_RECOVERY', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 2 }, reminders: { amount: 2, interval: 5 } }));
    expect(d.run(FAIL)).toEqual([]);
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']); // 12:01
    for (let i = 0; i < 20; i++) d.run(FAIL); // a run each minute for 20 more minutes
    expect(d.sent).toEqual([
      { at: '2026-05-01T12:01:00.000Z', type: 'ALERT_FAILURE' },
      { at: '2026-05-01T12:06:00.000Z', type: 'ALERT_FAILURE_REMAIN' },
      { at: '2026-05-01T12:11:00.000Z', type: 'ALERT_FAILURE_REMAIN' },
    ]);
    expect(d.run(PASS)).toEqual(['ALERT_RECOVERY']);
    expect(d.state).toEqual(INITIAL_ALERT_STATE);
    expect(d.run(PASS)).toEqual([]);
  });

  it('inside an active maintenance window with silenceAllAlerts nothing is sent', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 2 }, reminders: { amount: 5, interval: 1 } }));
    const window = {
      id: 1, name: 'db upgrade', startsAt: '2026-05-01T11:00:00.000Z', endsAt: '2026-05-01T14:00:00.000Z',
      repeatUnit: 'DAY' as const, repeatInterval: null, repeatEndsAt: null, timezone: 'UTC', tags: [],
      pauseAllChecks: false, silenceAlertsTags: [], silenceAllAlerts: true,
    };
    for (let i = 0; i < 10; i++) {
      d.silenced = maintenanceEffect([window], { tags: ['prod'] }, d.clock.now()).silenced;
      expect(d.silenced).toBe(true);
      d.run(FAIL);
    }
    d.run(PASS);
    expect(d.sent).toEqual([]);
  });

  it('a muted check sends nothing, and is told about once unmuted while still failing', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 1 } }));
    d.muted = true;
    d.run(FAIL);
    d.run(FAIL);
    expect(d.sent).toEqual([]);
    d.muted = false;
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']);
  });

  it('a recovery is never sent for a failure nobody was told about', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 3 } }));
    d.run(FAIL);
    d.run(FAIL);
    expect(d.run(PASS)).toEqual([]);
    const m = new Driver(settings());
    m.muted = true;
    m.run(FAIL);
    m.muted = false;
    expect(m.run(PASS)).toEqual([]);
  });

  it('a muted improvement from failing to degraded is not counted as notified', () => {
    const d = new Driver(settings());
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']);
    d.muted = true;
    expect(d.run(DEGRADED)).toEqual([]);
    expect(d.state).toMatchObject({ status: 'DEGRADED', alerted: 'FAILURE' });
    d.muted = false;
    expect(d.run(PASS)).toEqual(['ALERT_RECOVERY']);
  });

  it('a muted recovery is not sent but still resets the episode', () => {
    const d = new Driver(settings());
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']);
    d.muted = true;
    expect(d.run(PASS)).toEqual([]);
    expect(d.state.alerted).toBe('NONE');
  });
});

describe('alert escalation: thresholds and transitions', () => {
  it.each([1, 2, 3, 4, 5])('RUN_BASED failedRunThreshold %i alerts on exactly that run', (threshold) => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: threshold } }));
    for (let i = 1; i < threshold; i++) expect(d.run(FAIL)).toEqual([]);
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']);
    expect(d.run(FAIL)).toEqual([]);
  });

  it.each([5, 10, 15, 30])('TIME_BASED minutesFailingThreshold %i: not a second before, at the minute', (minutes) => {
    const d = new Driver(settings({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: minutes } }));
    expect(d.run(FAIL, minutes * 60_000 - 1_000)).toEqual([]);
    expect(d.run(FAIL, 1_000)).toEqual([]);
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']);
  });

  it('TIME_BASED degraded: ALERT_DEGRADED once degraded for the threshold, by run or by tick', () => {
    const s = settings({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 } });
    const d = new Driver(s);
    expect(d.run(DEGRADED, 4 * 60_000)).toEqual([]);
    expect(d.run(DEGRADED, 60_000)).toEqual([]);
    expect(d.run(DEGRADED)).toEqual(['ALERT_DEGRADED']);
    const t = new Driver(s);
    t.run(DEGRADED, 5 * 60_000 - 1);
    expect(evaluateTick(t.state, t.ctx()).alerts).toEqual([]);
    t.clock.advance(1);
    const step = evaluateTick(t.state, t.ctx());
    expect(step.alerts).toEqual(['ALERT_DEGRADED']);
    expect(evaluateTick(step.state, t.ctx()).alerts).toEqual([]);
  });

  it('exports every alert type', () => {
    expect(ALERT_TYPES).toEqual([
      'ALERT_FAILURE', 'ALERT_RECOVERY', 'ALERT_DEGRADED', 'ALERT_DEGRADED_RECOVERY',
      'ALERT_FAILURE_REMAIN', 'ALERT_DEGRADED_FAILURE', 'ALERT_FAILURE_DEGRADED', 'ALERT_SSL',
    ]);
  });

  it('errors count as failures', () => {
    expect(new Driver(settings()).run(ERROR)).toEqual(['ALERT_FAILURE']);
  });

  it('TIME_BASED alerts when failing for minutesFailingThreshold minutes: 4:59 no, 5:00 yes', () => {
    const d = new Driver(settings({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 } }));
    expect(d.run(FAIL, 299_000)).toEqual([]); // first failure at 12:00:00
    expect(d.run(FAIL, 1_000)).toEqual([]); // 12:04:59
    expect(d.run(FAIL)).toEqual(['ALERT_FAILURE']); // 12:05:00
  });

  it('TIME_BASED and reminders also fire on a tick with no new run', () => {
    const s = settings({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 10 }, reminders: { amount: 1, interval: 5 } });
    const d = new Driver(s);
    d.run(FAIL, 9 * 60_000);
    expect(evaluateTick(d.state, d.ctx()).alerts).toEqual([]);
    d.clock.advance(60_000);
    const step = evaluateTick(d.state, d.ctx());
    expect(step.alerts).toEqual(['ALERT_FAILURE']);
    d.clock.advance(5 * 60_000);
    const reminder = evaluateTick(step.state, d.ctx());
    expect(reminder.alerts).toEqual(['ALERT_FAILURE_REMAIN']);
    d.clock.advance(5 * 60_000);
    expect(evaluateTick(reminder.state, d.ctx()).alerts).toEqual([]);
  });

  it('a tick does nothing for a passing check, or a RUN_BASED one not yet alerted', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 3 } }));
    expect(evaluateTick(d.state, d.ctx()).alerts).toEqual([]);
    d.run(FAIL, 3_600_000);
    expect(evaluateTick(d.state, d.ctx()).alerts).toEqual([]);
  });

  it('a tick respects mute', () => {
    const d = new Driver(settings({ reminders: { amount: 3, interval: 1 } }));
    d.run(FAIL, 120_000);
    d.muted = true;
    const step = evaluateTick(d.state, d.ctx());
    expect(step.alerts).toEqual([]);
    expect(step.state.remindersSent).toBe(0);
  });

  it('unlimited reminders (100000) keep coming at each interval', () => {
    const d = new Driver(settings({ reminders: { amount: 100000, interval: 1 } }));
    d.run(FAIL);
    for (let i = 0; i < 50; i++) d.run(FAIL);
    expect(d.sent.filter((s) => s.type === 'ALERT_FAILURE_REMAIN')).toHaveLength(50);
  });

  it('reminders amount 0 sends none', () => {
    const d = new Driver(settings({ reminders: { amount: 0, interval: 1 } }));
    for (let i = 0; i < 10; i++) d.run(FAIL);
    expect(d.sent.map((s) => s.type)).toEqual(['ALERT_FAILURE']);
  });

  it('degraded: ALERT_DEGRADED, then ALERT_DEGRADED_FAILURE, ALERT_FAILURE_DEGRADED, ALERT_DEGRADED_RECOVERY', () => {
    const d = new Driver(settings());
    expect(d.run(DEGRADED)).toEqual(['ALERT_DEGRADED']);
    expect(d.run(DEGRADED)).toEqual([]);
    expect(d.run(FAIL)).toEqual(['ALERT_DEGRADED_FAILURE']);
    expect(d.run(DEGRADED)).toEqual(['ALERT_FAILURE_DEGRADED']);
    expect(d.run(PASS)).toEqual(['ALERT_DEGRADED_RECOVERY']);
  });

  it('degraded runs follow the run threshold too', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 2 } }));
    expect(d.run(DEGRADED)).toEqual([]);
    expect(d.run(DEGRADED)).toEqual(['ALERT_DEGRADED']);
    expect(d.run(PASS)).toEqual(['ALERT_DEGRADED_RECOVERY']);
  });

  it('a failure that was not yet alerted and turns degraded counts degraded runs from zero', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 2 } }));
    d.run(FAIL);
    expect(d.run(DEGRADED)).toEqual([]);
    expect(d.state.consecutiveFailures).toBe(0);
    expect(d.run(DEGRADED)).toEqual(['ALERT_DEGRADED']);
  });
});

describe('parallel rounds', () => {
  const round = (failedCount: number, total = 10) =>
    Array.from({ length: total }, (_, i) => (i < failedCount ? FAIL : PASS));
  const pct = (percentage: number) => settings({ parallelRunFailureThreshold: { enabled: true, percentage } });

  it('with the threshold enabled the round fails at the percentage, not below', () => {
    expect(classifyRound(round(3), pct(30), true)).toBe('FAILING');
    expect(classifyRound(round(2), pct(30), true)).toBe('PASSING');
    expect(classifyRound(round(10), pct(100), true)).toBe('FAILING');
    expect(classifyRound(round(9), pct(100), true)).toBe('PASSING');
  });

  it('without the threshold one failed location fails the round', () => {
    expect(classifyRound(round(1), settings(), true)).toBe('FAILING');
    expect(classifyRound(round(0), settings(), true)).toBe('PASSING');
  });

  it('a round that is not failed but has a degraded location is degraded; an empty round passes', () => {
    expect(classifyRound([PASS, DEGRADED], pct(50), true)).toBe('DEGRADED');
    expect(classifyRound([FAIL, DEGRADED, PASS, PASS], pct(50), true)).toBe('DEGRADED');
    expect(classifyRound([], settings(), true)).toBe('PASSING');
  });

  it('the percentage counts only for a runParallel check', () => {
    expect(classifyRound(round(1), pct(30), false)).toBe('FAILING');
    expect(classifyRound(round(1), pct(30), true)).toBe('PASSING');
  });

  it('evaluateRun takes a round', () => {
    const d = new Driver(pct(30), true);
    expect(d.run(round(2))).toEqual([]);
    expect(d.run(round(3))).toEqual(['ALERT_FAILURE']);
  });
});

describe('SSL expiry and channel flags', () => {
  const day = (iso: string) => new Date(iso);

  it('ALERT_SSL at most once per UTC day, only at 30 days or fewer', () => {
    let s = INITIAL_ALERT_STATE;
    expect(evaluateSsl(s, 31, day('2026-05-01T01:00:00Z')).alert).toBe(false);
    expect(evaluateSsl(s, null, day('2026-05-01T01:00:00Z')).alert).toBe(false);
    const first = evaluateSsl(s, 30, day('2026-05-01T01:00:00Z'));
    expect(first.alert).toBe(true);
    s = first.state;
    expect(evaluateSsl(s, 29, day('2026-05-01T23:59:59Z')).alert).toBe(false);
    expect(evaluateSsl(s, 29, day('2026-05-02T00:00:00Z')).alert).toBe(true);
  });

  it('a channel gets ALERT_SSL only with sslExpiry and days within its threshold (1..30)', () => {
    const ch = { sendFailure: true, sendRecovery: true, sendDegraded: false, sslExpiry: true, sslExpiryThreshold: 7 };
    expect(sslAlertAppliesToChannel(ch, 7)).toBe(true);
    expect(sslAlertAppliesToChannel(ch, 8)).toBe(false);
    expect(sslAlertAppliesToChannel({ ...ch, sslExpiry: false }, 1)).toBe(false);
    expect(channelWantsAlert(ch, 'ALERT_SSL', 3)).toBe(true);
    expect(channelWantsAlert(ch, 'ALERT_SSL', null)).toBe(false);
  });

  it('sendFailure, sendRecovery and sendDegraded select the alert types', () => {
    const none = { sendFailure: false, sendRecovery: false, sendDegraded: false, sslExpiry: false, sslExpiryThreshold: 30 };
    const cases: [keyof typeof none, AlertType[]][] = [
      ['sendFailure', ['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_DEGRADED_FAILURE']],
      ['sendRecovery', ['ALERT_RECOVERY', 'ALERT_DEGRADED_RECOVERY']],
      ['sendDegraded', ['ALERT_DEGRADED', 'ALERT_FAILURE_DEGRADED']],
    ];
    for (const [flag, types] of cases) {
      const ch = { ...none, [flag]: true };
      for (const t of types) expect(channelWantsAlert(ch, t), `${flag} ${t}`).toBe(true);
      for (const t of types) expect(channelWantsAlert(none, t), `none ${t}`).toBe(false);
    }
  });
});
