/**
 * What the engine guarantees, seen through the public HTTP API as a host serves it: checks made
 * with the Express router, run by the real engine on a fake clock against real TCP servers on
 * 127.0.0.1 (and a port nothing listens on), on SQLite and on PostgreSQL.
 *
 * - runParallel: the runs of several locations finishing at the same instant all count (the
 *   session ends, the slot's results and the check status are stored, no job fails);
 * - groupOrder: with a group concurrency of 1, triggered checks start in ascending groupOrder;
 * - retries and locations: sameRegion false (and doubleCheck) retries in the next selected
 *   location this process serves, sameRegion true (and any retry under runParallel) where the
 *   attempt failed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Vigil, VigilOptions } from '@vigil/core';
import { FakeClock } from '@vigil/core/testing';
import { alertTransports } from '@vigil/alert-channels';
import {
  advance, advanceUntil, apiOf, barrierServer, closedPort, engineTrouble, freshStore, quiet, STORES, tcpServer, vigilProcess,
  webhookServer, whileAdvancing, type Api, type LogLine, type TestServer,
} from './support/engine-stack.js';

const T0 = '2026-06-01T00:00:00.000Z';
const PAIR = ['us-east-1', 'eu-west-1'];
const sorted = (xs: readonly string[]) => [...xs].sort();

interface Stack {
  /** The process whose API the test calls. */
  vigil: Vigil;
  /** It and its peers on the same store and clock. */
  vigils: Vigil[];
  clock: FakeClock;
  /** What each process logged. */
  lines: LogLine[][];
  api: Api;
}

/** What a process is made with besides the shared store and clock. */
type ProcessOptions = Omit<VigilOptions, 'storage' | 'clock'>;

type Row = Record<string, unknown> & { id: string; runLocation: string; runSource: string; resultType: string; attempts: number };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function keep<T extends TestServer>(server: T): T {
  cleanups.push(() => server.close());
  return server;
}

describe.each(STORES)('engine guarantees through the HTTP API, on %s', (kind) => {
  /**
   * A started Vigil on a fresh store of this dialect, and a started peer process on the same store
   * and clock for each of `peers`; all closed (the store dropped) after the test.
   */
  async function stack(options: ProcessOptions = {}, peers: ProcessOptions[] = []): Promise<Stack> {
    const storage = await freshStore(kind, 'vigil_guarantees');
    await storage.migrate();
    const clock = new FakeClock(T0);
    const { vigil, lines } = vigilProcess({ storage, clock, ...options });
    const { api } = await apiOf(vigil);
    const others = peers.map((peer) => vigilProcess({ storage, clock, ...peer }));
    const vigils = [vigil, ...others.map((o) => o.vigil)];
    cleanups.push(async () => {
      // stop() waits on the fake clock for running jobs: move it until every process stopped.
      let closed = false;
      const closing = Promise.all(others.map((o) => o.vigil.stop())).then(() => vigil.close()).finally(() => {
        closed = true;
      });
      for (let i = 0; i < 100 && !closed; i++) {
        clock.advance(1_000);
        await quiet(vigils, 50);
      }
      await closing;
    });
    for (const v of vigils) await v.start();
    return { vigil, vigils, clock, lines: [lines, ...others.map((o) => o.lines)], api };
  }

  const results = async (s: Stack, checkId: string): Promise<Row[]> =>
    (await s.api('get', `/v1/check-results/${checkId}?limit=100`).expect(200)).body as Row[];

  async function completion(s: Stack, checkSessionId: string) {
    return whileAdvancing(s.clock, s.vigils, s.api('get', `/v1/check-sessions/${checkSessionId}/completion?maxWaitSeconds=10`));
  }

  describe('runParallel', () => {
    it('two locations finishing at the same instant: the session ends (200, not 408), the slot stores both results and the status, no job fails', async () => {
      const target = keep(await barrierServer(2, 'ok'));
      const s = await stack();
      const { body: check } = await s.api('post', '/v1/checks/tcp', {
        name: 'orders-db', locations: PAIR, runParallel: true, doubleCheck: false, frequency: 1, frequencyOffset: 5,
        request: { hostname: '127.0.0.1', port: target.port, assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'ok' }] },
      }).expect(201);

      const { body: triggered } = await s.api('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } }).expect(201);
      const [session] = triggered.sessions;
      expect(sorted(session.runLocations)).toEqual(sorted(PAIR));
      const done = await completion(s, session.checkSessionId);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.status).toBe('PASSED');
      expect(sorted(done.body.results.map((r: Row) => r.runLocation))).toEqual(sorted(PAIR));
      expect(target.answered).toBe(2);

      // The first scheduled slot, 30 s into the minute: both locations run it and finish together.
      const slot = async () => (await results(s, check.id)).filter((r) => r.runSource === 'SCHEDULER');
      await advanceUntil(s.clock, s.vigils, async () => (await slot()).length >= 2);
      const ran = await slot();
      expect(sorted(ran.map((r) => r.runLocation))).toEqual(sorted(PAIR));
      expect(ran.every((r) => r.resultType === 'FINAL' && r.hasFailures === false && r.hasErrors === false)).toBe(true);
      expect(target.answered).toBe(4);

      const { body: statuses } = await s.api('get', '/v1/check-statuses').expect(200);
      const status = statuses.find((st: { checkId: string }) => st.checkId === check.id);
      expect(status).toMatchObject({ hasFailures: false, hasErrors: false, updated_at: expect.any(String) });
      expect(ran.map((r) => r.id)).toContain(status.lastCheckRunId);
      expect(PAIR).toContain(status.lastRunLocation);
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });

    it('a round failing at the same instant in two processes, one per location, raises its failure alert once', async () => {
      const target = keep(await barrierServer(2, 'down'));
      const hook = keep(await webhookServer());
      const s = await stack(
        { serves: { locations: ['us-east-1'], privateLocations: [] }, transports: alertTransports() },
        [{ serves: { locations: ['eu-west-1'], privateLocations: [] }, transports: alertTransports() }],
      );
      const { body: channel } = await s.api('post', '/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: hook.url } }).expect(201);
      const { body: check } = await s.api('post', '/v1/checks/tcp', {
        name: 'orders-db', locations: PAIR, runParallel: true, doubleCheck: false, frequency: 1, frequencyOffset: 5,
        alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: true }],
        request: { hostname: '127.0.0.1', port: target.port, assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'ok' }] },
      }).expect(201);

      await advanceUntil(s.clock, s.vigils, () => hook.bodies.length > 0);
      // Well before the next slot: a second alert of the round would have gone out by now.
      await advance(s.clock, s.vigils, 20_000);
      expect(hook.bodies.map((b) => [b.ALERT_TYPE, b.CHECK_ID])).toEqual([['ALERT_FAILURE', check.id]]);
      const ran = (await results(s, check.id)).filter((r) => r.runSource === 'SCHEDULER');
      expect(sorted(ran.map((r) => r.runLocation))).toEqual(sorted(PAIR));
      expect(ran.every((r) => r.hasFailures === true)).toBe(true);
      expect(target.answered).toBe(2);
      const { body: status } = await s.api('get', `/v1/check-statuses/${check.id}`).expect(200);
      expect(status).toMatchObject({ hasFailures: true });
      expect(ran.map((r) => r.id)).toContain(status.lastCheckRunId);
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });
  });

  describe('groupOrder', () => {
    it('with a group concurrency of 1, the check with groupOrder 0 runs before the one with 1 (made first), trigger after trigger', async () => {
      const accepted: string[] = [];
      const orderOne = keep(await tcpServer(() => accepted.push('groupOrder 1')));
      const orderZero = keep(await tcpServer(() => accepted.push('groupOrder 0')));
      const s = await stack();
      const { body: group } = await s.api('post', '/v2/check-groups', { name: 'checkout', tags: ['checkout'], concurrency: 1 }).expect(201);
      // Made in this order, so every list (and the trigger's sessions) has groupOrder 1 first.
      const member = (name: string, groupOrder: number, port: number) => s.api('post', '/v1/checks/tcp', {
        name, groupId: group.id, groupOrder, doubleCheck: false, frequency: 1440, frequencyOffset: 12,
        request: { hostname: '127.0.0.1', port },
      }).expect(201);
      const { body: second } = await member('runs second', 1, orderOne.port);
      const { body: first } = await member('runs first', 0, orderZero.port);

      for (let round = 1; round <= 5; round++) {
        const { body: triggered } = await s.api('post', '/v1/check-sessions/trigger', { target: { matchTags: [['checkout']] } }).expect(201);
        expect(triggered.sessions.map((x: { checkId: string }) => x.checkId)).toEqual([second.id, first.id]);
        for (const session of triggered.sessions) {
          const done = await completion(s, session.checkSessionId);
          expect(done.status, JSON.stringify(done.body)).toBe(200);
          expect(done.body.status).toBe('PASSED');
        }
        expect(accepted.splice(0), `trigger ${round}`).toEqual(['groupOrder 0', 'groupOrder 1']);
      }
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });
  });

  describe('retries and locations', () => {
    /** A check of two locations, without runParallel, on a port that refuses connections. */
    async function failingCheck(s: Stack, fields: Record<string, unknown>) {
      const port = await closedPort();
      const { body } = await s.api('post', '/v1/checks/tcp', {
        name: 'payments', locations: PAIR, runParallel: false, frequency: 1440, frequencyOffset: 12,
        request: { hostname: '127.0.0.1', port }, ...fields,
      }).expect(201);
      return body as { id: string };
    }

    /** Triggers the check once; answers its attempts, first to last. */
    async function triggeredAttempts(s: Stack, checkId: string): Promise<Row[]> {
      const { body: triggered } = await s.api('post', '/v1/check-sessions/trigger', { target: { checkId: [checkId] } }).expect(201);
      const [session] = triggered.sessions;
      // Without runParallel a session runs in the first selected location.
      expect(session.runLocations).toEqual(['us-east-1']);
      const done = await completion(s, session.checkSessionId);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.status).toBe('FAILED');
      return (await results(s, checkId)).sort((a, b) => a.attempts - b.attempts);
    }

    const fixed = (sameRegion: boolean) => ({ type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 1, maxDurationSeconds: 60, sameRegion });

    it.each([
      ['sameRegion false', 'eu-west-1', { retryStrategy: fixed(false) }],
      ['sameRegion true', 'us-east-1', { retryStrategy: fixed(true) }],
      ['doubleCheck true with retryStrategy null', 'eu-west-1', { retryStrategy: null, doubleCheck: true }],
    ])('%s: the retry of a failed attempt in us-east-1 is recorded in %s', async (_what, retriedIn, fields) => {
      const s = await stack();
      const check = await failingCheck(s, fields);
      const attempts = await triggeredAttempts(s, check.id);
      expect(attempts.map((r) => [r.resultType, r.attempts, r.runLocation, r.hasFailures])).toEqual([
        ['ATTEMPT', 1, 'us-east-1', true],
        ['FINAL', 2, retriedIn, true],
      ]);
      const { body: status } = await s.api('get', `/v1/check-statuses/${check.id}`).expect(200);
      expect(status).toMatchObject({ hasFailures: true, lastRunLocation: retriedIn });
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });

    it('runParallel with sameRegion false: every location runs the slot already, so each retries where it failed', async () => {
      const s = await stack();
      const check = await failingCheck(s, { runParallel: true, retryStrategy: fixed(false) });
      const { body: triggered } = await s.api('post', '/v1/check-sessions/trigger', { target: { checkId: [check.id] } }).expect(201);
      const done = await completion(s, triggered.sessions[0].checkSessionId);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.status).toBe('FAILED');
      const bySequence = new Map<unknown, Row[]>();
      for (const r of await results(s, check.id)) bySequence.set(r.sequenceId, [...(bySequence.get(r.sequenceId) ?? []), r]);
      const places = [...bySequence.values()].map((rows) => rows.sort((a, b) => a.attempts - b.attempts).map((r) => `${r.resultType} ${r.runLocation}`));
      expect(places.sort()).toEqual([['ATTEMPT eu-west-1', 'FINAL eu-west-1'], ['ATTEMPT us-east-1', 'FINAL us-east-1']]);
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });

    it('sameRegion false on a scheduled slot: the retry waits its backoff on the clock, then runs in the other location', async () => {
      const s = await stack();
      const check = await failingCheck(s, {
        frequency: 1, frequencyOffset: 1, retryStrategy: { ...fixed(false), baseBackoffSeconds: 10 },
      });
      const slot = async () => (await results(s, check.id)).filter((r) => r.runSource === 'SCHEDULER').sort((a, b) => a.attempts - b.attempts);
      await advanceUntil(s.clock, s.vigils, async () => (await slot()).some((r) => r.resultType === 'FINAL'));
      const [attempt, final] = await slot();
      expect(attempt).toMatchObject({ resultType: 'ATTEMPT', attempts: 1 });
      expect(final).toMatchObject({ resultType: 'FINAL', attempts: 2 });
      expect(sorted([attempt!.runLocation, final!.runLocation])).toEqual(sorted(PAIR));
      expect(Date.parse(final!.startedAt as string) - Date.parse(attempt!.stoppedAt as string)).toBeGreaterThanOrEqual(10_000);
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });

    it('sameRegion false in a process that serves only us-east-1: the retry stays in us-east-1', async () => {
      const s = await stack({ serves: { locations: ['us-east-1'], privateLocations: [] } });
      const check = await failingCheck(s, { frequency: 1, frequencyOffset: 1, retryStrategy: fixed(false) });
      const slot = async () => (await results(s, check.id)).filter((r) => r.runSource === 'SCHEDULER').sort((a, b) => a.attempts - b.attempts);
      await advanceUntil(s.clock, s.vigils, async () => (await slot()).some((r) => r.resultType === 'FINAL'));
      expect((await slot()).map((r) => [r.resultType, r.runLocation])).toEqual([['ATTEMPT', 'us-east-1'], ['FINAL', 'us-east-1']]);
      expect(s.lines.flatMap(engineTrouble)).toEqual([]);
    });
  });
});
