import { describe, expect, it } from 'vitest';
import type { AlertChannel } from '../src/model/alert-channel.js';
import type { Check } from '../src/model/check.js';
import type { RunJob } from '../src/ports/runner.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { FakeRunner, failResult } from '../src/testing/fake-runner.js';
import { FakeTransport } from '../src/testing/fake-transport.js';
import { tcpCheckFixture, webhookChannelFixture } from '../src/testing/fixtures.js';
import { runnerSuite } from '../src/testing/runner-suite.js';
import { sampleAlertMessage, transportSuite } from '../src/testing/transport-suite.js';
import { ACCOUNT_A } from './helpers.js';

function job(name: string, overrides: Partial<RunJob> = {}): RunJob {
  const check = { ...tcpCheckFixture({ name }), accountId: ACCOUNT_A } as Check;
  return {
    runId: crypto.randomUUID(), accountId: ACCOUNT_A, check, group: null, location: 'eu-west-1', attempt: 1,
    dueAt: '2026-05-01T12:00:00.000Z', runSource: 'TEST', checkSessionId: null, sequenceId: null,
    environment: {}, secrets: [], timeoutMs: 5_000, ...overrides,
  };
}

function channel(id: number): AlertChannel {
  return { ...webhookChannelFixture(), id, accountId: ACCOUNT_A } as AlertChannel;
}

describe('FakeClock', () => {
  it('fires timers in time order as it advances, and never moves backwards', () => {
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const fired: string[] = [];
    clock.setTimer(new Date('2026-01-01T00:00:10Z'), () => fired.push(`b@${clock.now().toISOString()}`));
    clock.setTimer(new Date('2026-01-01T00:00:05Z'), () => fired.push(`a@${clock.now().toISOString()}`));
    const cancel = clock.setTimer(new Date('2026-01-01T00:00:07Z'), () => fired.push('cancelled'));
    cancel();
    expect(clock.pendingTimers).toBe(2);
    clock.advance(7_000);
    expect(fired).toEqual(['a@2026-01-01T00:00:05.000Z']);
    clock.advance(10_000);
    expect(fired).toEqual(['a@2026-01-01T00:00:05.000Z', 'b@2026-01-01T00:00:10.000Z']);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:17.000Z');
    expect(() => clock.set('2025-01-01T00:00:00Z')).toThrow(/backwards/);
  });

  it('a timer set from inside a timer fires in the same advance when due', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimer(new Date(1_000), () => {
      fired.push(clock.now().getTime());
      clock.setTimer(new Date(2_000), () => fired.push(clock.now().getTime()));
    });
    clock.advance(5_000);
    expect(fired).toEqual([1_000, 2_000]);
  });
});

describe('FakeRunner', () => {
  it('takes scripted outcomes in order, repeating the last, and keeps its jobs', async () => {
    const runner = new FakeRunner('TCP').willReturn(failResult('down'), {});
    const signal = new AbortController().signal;
    expect((await runner.run(job('a'), signal)).hasFailures).toBe(true);
    expect((await runner.run(job('b'), signal)).hasFailures).toBe(false);
    expect((await runner.run(job('c'), signal)).hasFailures).toBe(false);
    expect(runner.jobs.map((j) => j.check.name)).toEqual(['a', 'b', 'c']);
  });
});

describe('FakeTransport', () => {
  it('fails the next n sends, then delivers', async () => {
    const t = new FakeTransport().failNext(2);
    const signal = new AbortController().signal;
    await expect(t.send(sampleAlertMessage(), channel(1), signal)).rejects.toThrow();
    await expect(t.send(sampleAlertMessage(), channel(1), signal)).rejects.toThrow();
    await expect(t.send(sampleAlertMessage(), channel(1), signal)).resolves.toMatchObject({ providerId: 'fake-1' });
    expect(t.attempts).toBe(3);
    expect(t.sent).toHaveLength(1);
  });
});

// The fakes keep the same contracts the real plugins must keep.
runnerSuite(it, async () => {
  const runner = new FakeRunner('TCP', [(j) => (j.check.name === 'fail' ? failResult('refused') : {})]);
  return { runner, passing: job('pass'), failing: job('fail') };
}, { prefix: 'FakeRunner' });

transportSuite(it, async () => {
  const transport = new FakeTransport('WEBHOOK').refuseChannel(2);
  return {
    transport,
    channel: channel(1),
    failingChannel: channel(2),
    received: async () => transport.sent.map((d) => d.alert),
  };
}, { prefix: 'FakeTransport' });
