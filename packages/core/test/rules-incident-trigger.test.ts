import { describe, expect, it } from 'vitest';
import {
  evaluateRun,
  evaluateTick,
  INITIAL_ALERT_STATE,
  type AlertContext,
  type AlertSettingsInput,
  type AlertState,
  type RunOutcomeInput,
} from '../src/rules/alerting.js';
import { incidentOpeningText, incidentResolvedText, incidentTriggerAction, type IncidentTriggerAction } from '../src/rules/incident-trigger.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { alertSettings, DEGRADED, FAIL, PASS } from './alert-fixtures.js';

const settings = alertSettings;

/** Drives one check with a triggerIncident through the rules, as the engine does; OPEN stores a new id. */
class Driver {
  state: AlertState = INITIAL_ALERT_STATE;
  readonly clock = new FakeClock('2026-05-01T12:00:00.000Z');
  muted = false;
  silenced = false;
  enabled = true;
  private opened = 0;

  constructor(private readonly s: AlertSettingsInput = settings()) {}

  ctx(): AlertContext {
    return { settings: this.s, runParallel: false, muted: this.muted, silenced: this.silenced, now: this.clock.now() };
  }

  run(outcome: RunOutcomeInput): IncidentTriggerAction {
    const step = evaluateRun(this.state, outcome, this.ctx());
    return this.apply(step);
  }

  tick(): IncidentTriggerAction {
    return this.apply(evaluateTick(this.state, this.ctx()));
  }

  private apply(step: ReturnType<typeof evaluateRun>): IncidentTriggerAction {
    const action = incidentTriggerAction(this.state, step, { enabled: this.enabled, silenced: this.silenced });
    const incidentId = action.kind === 'OPEN' ? `incident-${++this.opened}` : action.kind === 'RESOLVE' ? null : step.state.incidentId ?? null;
    this.state = { ...step.state, incidentId };
    this.clock.advance(60_000);
    return action;
  }
}

const kinds = (d: Driver, outcomes: RunOutcomeInput[]) => outcomes.map((o) => d.run(o).kind);

describe('incidentTriggerAction', () => {
  it('opens at the failure alert, keeps one incident while failing, resolves it on passing', () => {
    const d = new Driver();
    expect(d.run(FAIL)).toEqual({ kind: 'OPEN' });
    expect(kinds(d, [FAIL, FAIL])).toEqual(['NONE', 'NONE']);
    expect(d.state.incidentId).toBe('incident-1');
    expect(d.run(PASS)).toEqual({ kind: 'RESOLVE', incidentId: 'incident-1' });
    expect(d.state).toEqual(INITIAL_ALERT_STATE);
    expect(kinds(d, [PASS, FAIL])).toEqual(['NONE', 'OPEN']);
    expect(d.state.incidentId).toBe('incident-2');
  });

  it('follows the run-based threshold: nothing before the third failed run', () => {
    const d = new Driver(settings({ runBasedEscalation: { failedRunThreshold: 3 } }));
    expect(kinds(d, [FAIL, FAIL, PASS, FAIL, FAIL, FAIL, FAIL])).toEqual(['NONE', 'NONE', 'NONE', 'NONE', 'NONE', 'OPEN', 'NONE']);
  });

  it('follows the time-based threshold on ticks between runs', () => {
    const d = new Driver(settings({ escalationType: 'TIME_BASED', timeBasedEscalation: { minutesFailingThreshold: 5 } }));
    expect(d.run(FAIL).kind).toBe('NONE');
    expect([d.tick(), d.tick(), d.tick(), d.tick()].map((a) => a.kind)).toEqual(['NONE', 'NONE', 'NONE', 'NONE']);
    expect(d.tick()).toEqual({ kind: 'OPEN' });
    expect(d.tick().kind).toBe('NONE');
  });

  it('a degraded check escalating to failing opens; failing to degraded keeps the incident until it passes', () => {
    const d = new Driver();
    expect(kinds(d, [DEGRADED, FAIL, DEGRADED, DEGRADED, FAIL])).toEqual(['NONE', 'OPEN', 'NONE', 'NONE', 'NONE']);
    expect(d.run(PASS)).toEqual({ kind: 'RESOLVE', incidentId: 'incident-1' });
  });

  it('a reminder is no new failure: an episode whose incident could not be opened gets none from its reminders', () => {
    const d = new Driver(settings({ reminders: { amount: 5, interval: 1 } }));
    d.enabled = false; // stands for an open that failed: the episode alerted, no incident is stored
    d.run(FAIL);
    d.enabled = true;
    expect(kinds(d, [FAIL, FAIL])).toEqual(['NONE', 'NONE']);
  });

  it('a muted check opens (muting keeps only the channels quiet); a silencing window does not, until it is over', () => {
    const muted = new Driver();
    muted.muted = true;
    expect(kinds(muted, [FAIL, FAIL])).toEqual(['OPEN', 'NONE']);
    expect(muted.run(PASS).kind).toBe('RESOLVE');

    const silenced = new Driver();
    silenced.silenced = true;
    expect(kinds(silenced, [FAIL, FAIL])).toEqual(['NONE', 'NONE']);
    silenced.silenced = false;
    expect(kinds(silenced, [FAIL, FAIL])).toEqual(['OPEN', 'NONE']);
    // Recovery inside a window still resolves: the episode ends and its incident with it.
    silenced.silenced = true;
    expect(silenced.run(PASS)).toEqual({ kind: 'RESOLVE', incidentId: 'incident-1' });
  });

  it('a check without triggerIncident opens nothing, but an incident it opened before is still resolved', () => {
    const d = new Driver();
    d.enabled = false;
    expect(kinds(d, [FAIL, FAIL, PASS])).toEqual(['NONE', 'NONE', 'NONE']);
    d.enabled = true;
    d.run(FAIL);
    d.enabled = false;
    expect(d.run(PASS)).toEqual({ kind: 'RESOLVE', incidentId: 'incident-1' });
  });

  it('reads a state stored before incidents were triggered (no incidentId) as having none', () => {
    const { incidentId: _none, ...old } = INITIAL_ALERT_STATE;
    const step = evaluateRun(old, FAIL, { settings: settings(), runParallel: false, muted: false, silenced: false, now: new Date() });
    expect(incidentTriggerAction(old, step, { enabled: true, silenced: false })).toEqual({ kind: 'OPEN' });
  });
});

describe('evaluateRun: raised', () => {
  it('names what the settings decided even when muting or silencing sends nothing', () => {
    const ctx = { settings: settings(), runParallel: false, muted: true, silenced: false, now: new Date('2026-05-01T12:00:00Z') };
    expect(evaluateRun(INITIAL_ALERT_STATE, FAIL, ctx)).toMatchObject({ alerts: [], raised: ['ALERT_FAILURE'] });
    expect(evaluateRun(INITIAL_ALERT_STATE, FAIL, { ...ctx, muted: false, silenced: true })).toMatchObject({ alerts: [], raised: ['ALERT_FAILURE'] });
    expect(evaluateRun(INITIAL_ALERT_STATE, FAIL, { ...ctx, muted: false })).toMatchObject({ alerts: ['ALERT_FAILURE'], raised: ['ALERT_FAILURE'] });
    expect(evaluateRun(INITIAL_ALERT_STATE, PASS, ctx)).toMatchObject({ alerts: [], raised: [] });
  });
});

describe('incident texts', () => {
  it('uses the trigger\'s description, or names the check and its error', () => {
    expect(incidentOpeningText('Orders fail', 'orders-db', 'Connection refused')).toBe('Orders fail');
    expect(incidentOpeningText('', 'orders-db', 'Connection refused')).toBe('orders-db is failing: Connection refused');
    expect(incidentOpeningText('  ', 'orders-db', null)).toBe('orders-db is failing');
    expect(incidentOpeningText('', 'orders-db', '  ')).toBe('orders-db is failing');
    const long = incidentOpeningText('', 'orders-db', 'x'.repeat(1000));
    expect(long.length).toBeLessThan(340);
    expect(long.endsWith('…')).toBe(true);
    expect(incidentResolvedText('orders-db')).toBe('orders-db recovered');
  });
});
