// The fake-clock helpers of @vigil/core/testing (settle, advance, advanceUntil),
// driving a real Vigil (scheduler, retries, alert rules, outbox, dispatcher) on a fake clock, the
// in-memory store, a fake runner and a fake transport.
import { afterEach, describe, expect, it } from 'vitest';
import { createVigil, type Vigil } from '../src/index.js';
import {
  advance,
  advanceUntil,
  failResult,
  FakeClock,
  FakeRunner,
  FakeTransport,
  memoryStorage,
  passResult,
  settle,
} from '../src/testing/index.js';

const T0 = '2026-05-01T12:00:00.000Z';
const MINUTE = 60_000;
const since = (clock: FakeClock) => clock.now().getTime() - Date.parse(T0);

/** A FakeClock that keeps the size of every move, to see the steps a helper takes. */
class StepClock extends FakeClock {
  readonly steps: number[] = [];
  override advance(ms: number): Date {
    this.steps.push(ms);
    return super.advance(ms);
  }
}

const running: Vigil[] = [];
afterEach(async () => {
  for (const vigil of running.splice(0)) await vigil.stop(0);
});

/** A Vigil with one once-a-minute TCP check that alerts a webhook at its first failed run. */
async function world() {
  const clock = new StepClock(T0);
  const service = { up: true };
  const runner = new FakeRunner('TCP', [() => (service.up ? passResult() : failResult('connect ECONNREFUSED'))]);
  const transport = new FakeTransport('WEBHOOK');
  const vigil = createVigil({ storage: memoryStorage(), secretKey: 'e'.repeat(64), clock, runners: [runner], transports: [transport] });
  const { id: accountId } = await vigil.accounts.ensure();
  await vigil.alertChannels.create(accountId, { type: 'WEBHOOK', config: { name: 'on-call', url: 'https://hooks.example.com/on-call' } });
  const check = await vigil.checks.create(accountId, 'TCP', {
    name: 'orders-db',
    request: { hostname: 'orders-db.internal', port: 5432 },
    frequency: 1,
    doubleCheck: false,
    useGlobalAlertSettings: false,
    alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 } },
  });
  await vigil.start();
  running.push(vigil);
  const finalRuns = async (failed?: boolean) => {
    const results = await vigil.checkResults.list(accountId, check.id, { limit: 100 });
    return results.items.filter((r) => r.resultType === 'FINAL' && (failed === undefined || r.hasFailures === failed)).length;
  };
  return { clock, service, runner, transport, vigil, finalRuns };
}

describe('settle', () => {
  it('lets the engine finish the run a timer started, without moving the clock', async () => {
    const w = await world();
    await settle();
    w.clock.advance(MINUTE); // by hand: the run falls due somewhere in this minute
    expect(await w.finalRuns()).toBe(0);
    const at = w.clock.now().getTime();
    await settle();
    expect(await w.finalRuns()).toBe(1);
    expect(w.clock.now().getTime()).toBe(at);
  });
});

describe('advance', () => {
  it('moves the clock by exactly `ms` in steps of `stepMs`, the runs that fall due on the way done', async () => {
    const w = await world();
    await advance(w.clock, 150_000, MINUTE);
    expect(w.clock.steps).toEqual([MINUTE, MINUTE, 30_000]);
    expect(since(w.clock)).toBe(150_000);

    w.clock.steps.length = 0;
    await advance(w.clock, 10 * MINUTE - 150_000);
    expect(w.clock.steps.every((s) => s === 5_000)).toBe(true);
    expect(since(w.clock)).toBe(10 * MINUTE);
    // Once a minute for ten minutes: ten runs, each finished before the next step.
    expect(await w.finalRuns()).toBe(10);
    expect(w.runner.jobs).toHaveLength(10);
  });

  it('refuses a step that would never get anywhere', async () => {
    const clock = new FakeClock(T0);
    await expect(advance(clock, MINUTE, 0)).rejects.toThrow(RangeError);
    expect(since(clock)).toBe(0);
  });
});

describe('advanceUntil', () => {
  it('stops at the step where the condition first holds, and leaves the clock alone when it holds already', async () => {
    const w = await world();
    w.service.up = false;
    await advanceUntil(w.clock, async () => (await w.finalRuns(true)) === 3);
    expect(await w.finalRuns(true)).toBe(3);
    // The third run is within the third minute, and the clock went no further than the step that saw it.
    expect(since(w.clock)).toBeLessThanOrEqual(3 * MINUTE);
    expect(since(w.clock)).toBeGreaterThan(2 * MINUTE - 5_000);
    expect(w.clock.steps.every((s) => s === 5_000)).toBe(true);

    const steps = w.clock.steps.length;
    await advanceUntil(w.clock, () => true);
    expect(w.clock.steps).toHaveLength(steps);
  });

  it('waits for an alert the engine delivers through its outbox', async () => {
    const w = await world();
    await advance(w.clock, 2 * MINUTE);
    w.service.up = false;
    await advanceUntil(w.clock, () => w.transport.sent.length > 0, { stepMs: 1_000 });
    expect(w.transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE']);
    expect(w.clock.steps.slice(-1)).toEqual([1_000]);
    expect(since(w.clock)).toBeLessThanOrEqual(3 * MINUTE + 5_000);
  });

  it('throws once `limitMs` of fake time has passed without the condition holding', async () => {
    const w = await world();
    await expect(advanceUntil(w.clock, () => w.transport.sent.length > 0, { stepMs: 10_000, limitMs: 5 * MINUTE }))
      .rejects.toThrow('condition not met within 300000 ms of fake time');
    expect(since(w.clock)).toBe(5 * MINUTE);
    expect(await w.finalRuns(false)).toBe(5);
  });
});
