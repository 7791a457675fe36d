// The alerts a run's alert step queues go to this process's dispatcher from the step's own write
// (leased there), without a claim; the outbox's order per check and channel still holds.
import { describe, expect, it } from 'vitest';
import { runFor } from './fake-time.js';
import { type AlertChannel, type AlertMessage, type DeliveryReceipt } from '../src/index.js';
import { failResult, FakeRunner, FakeTransport, memoryStorage, passResult } from '../src/testing/index.js';
import { setup, start } from './engine-support.js';

const check = {
  name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 }, frequency: 1, frequencyOffset: 10, useGlobalAlertSettings: false, retryStrategy: null,
  doubleCheck: false,
  alertSettings: {
    escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 1 }, reminders: { amount: 0, interval: 5 },
    parallelRunFailureThreshold: { enabled: false, percentage: 10 },
  },
};

/** A transport whose sends wait until the test lets each go. */
class HeldTransport extends FakeTransport {
  private readonly held: (() => void)[] = [];
  override async send(alert: AlertMessage, channel: AlertChannel, signal: AbortSignal): Promise<DeliveryReceipt> {
    await new Promise<void>((resolve) => this.held.push(resolve));
    return super.send(alert, channel, signal);
  }
  get waiting(): number {
    return this.held.length;
  }
  letOneGo(): void {
    this.held.shift()?.();
  }
}

/** A Vigil whose dispatcher polls once an hour, so only a claim a send asks for reads the outbox between. */
async function hourlyPolls(transport: FakeTransport, runner: FakeRunner, batch = 50, channels = 1) {
  const storage = memoryStorage();
  const claims: Date[] = [];
  const claim = storage.outbox.claim.bind(storage.outbox);
  storage.outbox.claim = (now, ...rest) => {
    claims.push(now);
    return claim(now, ...rest);
  };
  const s = await setup({ storage, transports: [transport], alerts: { pollMs: 3_600_000, batch } }, runner);
  const made = [];
  for (let i = 0; i < channels; i++) made.push(await s.vigil.alertChannels.create(s.accountId, { type: 'EMAIL', config: { address: `ops${i}@example.com` } }));
  const subscriptions = made.map((c) => ({ alertChannelId: c.id, activated: true }));
  const { id: checkId } = await s.vigil.checks.create(s.accountId, 'TCP', { ...check, alertChannelSubscriptions: subscriptions });
  return { ...s, storage, claims, channel: made[0]!, checkId };
}

describe('alerts handed from the alert step to the dispatcher', () => {
  it('a failed run\'s alert is sent from the write that queued it, with no claim of the outbox', async () => {
    const transport = new FakeTransport('EMAIL');
    const s = await hourlyPolls(transport, new FakeRunner('TCP', [failResult('Connection refused')]));
    await start(s);
    const atStart = s.claims.length;
    while (s.runner.jobs.length < 1) await runFor(s.clock, 500, 500);
    await runFor(s.clock, 500, 100);
    expect(transport.sent.map((d) => [d.alert.alertType, d.alert.check.id])).toEqual([['ALERT_FAILURE', s.checkId]]);
    expect(s.claims.length).toBe(atStart);
    expect(await s.storage.outbox.pending(s.accountId)).toEqual([]);
    const [log] = await s.vigil.alertChannels.deliveries(s.accountId, s.channel.id, {});
    expect([log?.ok, log?.detail]).toEqual([true, 'delivered (fake-1)']);
  });

  it('an alert queued while the one before it (same check and channel) is still being sent goes right after it, in order', async () => {
    const transport = new HeldTransport('EMAIL');
    const runner = new FakeRunner('TCP', [failResult('Connection refused')]);
    const s = await hourlyPolls(transport, runner);
    await start(s);
    while (transport.waiting < 1) await runFor(s.clock, 500, 500);
    // While the failure alert is being sent (well within its time limit), a run passes and queues
    // the recovery behind it.
    runner.willReturn(passResult());
    await s.vigil.checkSessions.trigger(s.accountId, { target: { checkId: [s.checkId] } });
    await runFor(s.clock, 1_000, 100);
    expect(runner.jobs).toHaveLength(2);
    expect((await s.storage.outbox.pending(s.accountId)).map((m) => [m.alertType, m.leaseOwner !== null])).toEqual([
      ['ALERT_FAILURE', true],
      ['ALERT_RECOVERY', false],
    ]);
    expect(transport.waiting).toBe(1);
    // Once the failure alert is delivered, the recovery is claimed at once, not at the next poll.
    transport.letOneGo();
    await runFor(s.clock, 200, 100);
    expect(transport.waiting).toBe(1);
    transport.letOneGo();
    await runFor(s.clock, 200, 100);
    expect(transport.sent.map((d) => d.alert.alertType)).toEqual(['ALERT_FAILURE', 'ALERT_RECOVERY']);
    expect(await s.storage.outbox.pending(s.accountId)).toEqual([]);
  });

  it('with no room for all of a step\'s alerts (batch 1), the rest go as soon as a send makes room, not at the next poll', async () => {
    const transport = new HeldTransport('EMAIL');
    const s = await hourlyPolls(transport, new FakeRunner('TCP', [failResult('Connection refused')]), 1, 3);
    await start(s);
    while (transport.waiting < 1) await runFor(s.clock, 500, 500);
    await runFor(s.clock, 500, 100);
    // One send at a time: the other two wait in the outbox, unleased.
    expect(transport.waiting).toBe(1);
    expect((await s.storage.outbox.pending(s.accountId)).map((m) => m.leaseOwner !== null)).toEqual([true, false, false]);
    for (let sent = 1; sent <= 3; sent++) {
      transport.letOneGo();
      await runFor(s.clock, 200, 100);
      expect(transport.sent).toHaveLength(sent);
      expect(transport.waiting).toBe(sent < 3 ? 1 : 0);
    }
    expect(new Set(transport.sent.map((d) => d.channel.id)).size).toBe(3);
    expect(await s.storage.outbox.pending(s.accountId)).toEqual([]);
  });

  it('the step reads its channels while it writes: the tick entry beside the channel list, the delivery\'s channel beside the transition', async () => {
    const transport = new FakeTransport('EMAIL');
    const s = await hourlyPolls(transport, new FakeRunner('TCP', [failResult('Connection refused')]));
    const events: string[] = [];
    /** Logs when a store call starts and when its answer is taken. */
    const watch = <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      events.push(`${name} start`);
      const answer = await call(...args);
      events.push(`${name} end`);
      return answer;
    };
    const { schedule, alertChannels, alertStates } = s.storage;
    const upsert = schedule.upsert.bind(schedule);
    schedule.upsert = (entry) => (entry.kind === 'alert-tick' ? watch('tick entry', upsert)(entry) : upsert(entry));
    alertChannels.listAll = watch('channel list', alertChannels.listAll.bind(alertChannels));
    alertChannels.get = watch('channel read', alertChannels.get.bind(alertChannels));
    alertStates.transitionAndLease = watch('transition', alertStates.transitionAndLease!.bind(alertStates));
    await start(s);
    while (transport.sent.length < 1) await runFor(s.clock, 500, 500);
    expect(transport.sent.map((d) => d.channel.id)).toEqual([s.channel.id]);
    const at = (event: string) => {
      expect(events).toContain(event);
      return events.indexOf(event);
    };
    // Neither the tick's write nor the channel list waits for the other.
    expect(at('channel list start')).toBeLessThan(at('tick entry end'));
    expect(at('tick entry start')).toBeLessThan(at('channel list end'));
    // The tick's entry is still written before the transition, so a crash after it leaves the tick.
    expect(at('tick entry end')).toBeLessThan(at('transition start'));
    // The delivery's channel is read once, started before the write that leased its alert.
    expect(events.filter((e) => e === 'channel read start')).toHaveLength(1);
    expect(at('channel read start')).toBeLessThan(at('transition start'));
  });

  it('reads ahead only the channels of the alerts its write may lease: with room for one of three, one', async () => {
    const transport = new FakeTransport('EMAIL');
    const s = await hourlyPolls(transport, new FakeRunner('TCP', [failResult('Connection refused')]), 1, 3);
    const events: string[] = [];
    const { alertChannels, alertStates } = s.storage;
    const get = alertChannels.get.bind(alertChannels);
    alertChannels.get = (...args) => {
      events.push('channel read');
      return get(...args);
    };
    const transition = alertStates.transitionAndLease!.bind(alertStates);
    alertStates.transitionAndLease = (...args) => {
      events.push('transition');
      return transition(...args);
    };
    await start(s);
    while (transport.sent.length < 3) await runFor(s.clock, 500, 500);
    // One channel read before the write (the alert it leases); the other two when they are sent.
    expect(events.indexOf('transition')).toBe(1);
    expect(events.filter((e) => e === 'channel read')).toHaveLength(3);
    expect(new Set(transport.sent.map((d) => d.channel.id)).size).toBe(3);
  });
});
