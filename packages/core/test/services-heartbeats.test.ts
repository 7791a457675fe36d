import { describe, expect, it } from 'vitest';
import type { HeartbeatCheck } from '../src/model/check.js';
import type { NewRecord } from '../src/ports/storage.js';
import { HeartbeatService, heartbeatDeadlineMs } from '../src/services/heartbeats.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { heartbeatCheckFixture, tcpCheckFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

const HOURLY = { period: 50, periodUnit: 'minutes', grace: 10, graceUnit: 'minutes' } as const;

async function setup(overrides: Partial<NewRecord<HeartbeatCheck>> = {}) {
  const storage = memoryStorage();
  const clock = new FakeClock('2026-05-01T00:00:00.000Z');
  const deps = testDeps({ storage, clock });
  const fixture = heartbeatCheckFixture({ created_at: '2026-05-01T00:00:00.000Z', ...overrides });
  const check = (await storage.checks.insert(ACCOUNT_A, { ...fixture, heartbeat: { ...HOURLY, pingToken: fixture.heartbeat.pingToken } })) as HeartbeatCheck;
  const heartbeats = new HeartbeatService(deps);
  /** Pings through the service at each given time (in order). */
  const pingAt = async (...times: string[]) => {
    for (const t of times) {
      clock.set(t);
      await heartbeats.ping(check.heartbeat.pingToken, 'cron-host');
    }
  };
  return { storage, clock, check, heartbeats, pingAt };
}

describe('heartbeatDeadlineMs', () => {
  it('is period plus grace', () => {
    const check = { heartbeat: { period: 5, periodUnit: 'minutes', grace: 1, graceUnit: 'hours', pingToken: 't' } } as HeartbeatCheck;
    expect(heartbeatDeadlineMs(check)).toBe(5 * 60_000 + 3_600_000);
    expect(heartbeatDeadlineMs({ heartbeat: { ...check.heartbeat, grace: 0 } } as HeartbeatCheck)).toBe(300_000);
  });
});

describe('HeartbeatService.ping', () => {
  it('records a ping with its time and source for the check that owns the token', async () => {
    const { heartbeats, storage, check, clock } = await setup();
    clock.set('2026-05-01T06:00:00Z');
    expect(await heartbeats.ping(check.heartbeat.pingToken, '10.0.0.7')).toEqual({ checkId: check.id, at: '2026-05-01T06:00:00.000Z' });
    await heartbeats.ping(check.heartbeat.pingToken);
    expect(await storage.heartbeats.lastPing(ACCOUNT_A, check.id)).toEqual({ checkId: check.id, at: '2026-05-01T06:00:00.000Z', source: null });
    const pings = await storage.heartbeats.listPings(ACCOUNT_A, check.id, new Date(0), new Date('2027-01-01'));
    expect(pings.map((p) => p.source)).toEqual(['10.0.0.7', null]);
  });

  it('an unknown token is not found and records nothing; a deactivated check still records', async () => {
    const { heartbeats, storage, check } = await setup({ activated: false });
    expect(await code(heartbeats.ping('unknown-token'))).toBe('NOT_FOUND');
    expect(await code(heartbeats.ping(''))).toBe('VALIDATION');
    expect(await storage.raw.dump('heartbeat_pings')).toEqual([]);
    await heartbeats.ping(check.heartbeat.pingToken);
    expect(await storage.heartbeats.lastPing(ACCOUNT_A, check.id)).not.toBeNull();
  });
});

describe('HeartbeatService.availability', () => {
  it('is the share of periods (period + grace) that saw a ping, now and in the window before', async () => {
    const { heartbeats, check, pingAt } = await setup();
    await pingAt('2026-05-01T01:00:00Z', '2026-05-01T06:10:00Z', '2026-05-01T07:30:00Z', '2026-05-01T07:45:00Z', '2026-05-01T09:00:00Z', '2026-05-01T11:59:59Z', '2026-05-01T12:00:00Z');
    const out = await heartbeats.availability(ACCOUNT_A, check.id, { startTime: '2026-05-01T06:00:00Z', endTime: '2026-05-01T12:00:00Z' });
    // Current: hours 6, 7, 9 and 11 of six; previous (00:00..06:00): hour 1 of six.
    expect(out).toEqual({ successRatio: { currentPeriod: 66.67, previousPeriod: 16.67 }, totalEntitiesCurrentPeriod: 5 });
  });

  it('defaults to the 24 hours before now', async () => {
    const { heartbeats, check, pingAt, clock } = await setup();
    await pingAt('2026-05-01T00:30:00Z', '2026-05-01T01:30:00Z');
    clock.set('2026-05-01T12:00:00Z');
    const out = await heartbeats.availability(ACCOUNT_A, check.id, undefined);
    expect(out).toEqual({ successRatio: { currentPeriod: 8.33, previousPeriod: 0 }, totalEntitiesCurrentPeriod: 2 });
    expect(await heartbeats.availability(ACCOUNT_A, check.id, { endTime: '2026-05-01T02:00:00Z' })).toMatchObject({ totalEntitiesCurrentPeriod: 2 });
  });

  it('is null when the check was created after the window ended', async () => {
    const { heartbeats, check } = await setup();
    expect(await heartbeats.availability(ACCOUNT_A, check.id, { startTime: '2026-04-30T00:00:00Z', endTime: '2026-04-30T23:59:59Z' })).toBeNull();
    expect(await heartbeats.availability(ACCOUNT_A, check.id, { startTime: '2026-04-30T00:00:00Z', endTime: '2026-05-01T00:00:00Z' })).not.toBeNull();
  });

  it('only for a heartbeat check of the account; endTime must follow startTime', async () => {
    const { heartbeats, storage, check } = await setup();
    const tcp = await storage.checks.insert(ACCOUNT_A, tcpCheckFixture());
    expect(await code(heartbeats.availability(ACCOUNT_B, check.id, {}))).toBe('NOT_FOUND');
    expect(await code(heartbeats.availability(ACCOUNT_A, tcp.id, {}))).toBe('NOT_FOUND');
    expect(await code(heartbeats.availability(ACCOUNT_A, 'unknown', {}))).toBe('NOT_FOUND');
    const err = await heartbeats.availability(ACCOUNT_A, check.id, { startTime: '2026-05-01T06:00:00Z', endTime: '2026-05-01T06:00:00Z' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ source: 'query', keys: ['endTime'] });
    expect(await code(heartbeats.availability(ACCOUNT_A, check.id, { startTime: 'yesterday' }))).toBe('VALIDATION');
  });
});

describe('HeartbeatService.evaluate', () => {
  it('fails once period + grace pass without a ping, counting from creation or the last ping', async () => {
    const { heartbeats, check, pingAt } = await setup();
    expect(await heartbeats.evaluate(ACCOUNT_A, check.id, new Date('2026-05-01T00:59:59.999Z')))
      .toEqual({ failing: false, lastPingAt: null, deadline: '2026-05-01T01:00:00.000Z' });
    expect((await heartbeats.evaluate(ACCOUNT_A, check.id, new Date('2026-05-01T01:00:00Z'))).failing).toBe(true);
    await pingAt('2026-05-01T06:10:00Z');
    expect(await heartbeats.evaluate(ACCOUNT_A, check.id, new Date('2026-05-01T07:09:59Z')))
      .toEqual({ failing: false, lastPingAt: '2026-05-01T06:10:00.000Z', deadline: '2026-05-01T07:10:00.000Z' });
    expect((await heartbeats.evaluate(ACCOUNT_A, check.id, new Date('2026-05-01T07:10:00Z'))).failing).toBe(true);
    expect(await code(heartbeats.evaluate(ACCOUNT_B, check.id, new Date()))).toBe('NOT_FOUND');
  });
});
