import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../src/errors.js';
import type { CheckSession } from '../src/model/check-session.js';
import type { NewRecord } from '../src/ports/storage.js';
import type { TcpCheck } from '../src/model/check.js';
import { CheckSessionService, type SessionLauncher } from '../src/services/check-sessions.js';
import { checkGroupFixture, checkResultFixture, tcpCheckFixture } from '../src/testing/fixtures.js';
import { memoryStorage } from '../src/testing/memory-storage.js';
import { code } from './assertions.js';
import { ACCOUNT_A, ACCOUNT_B, testDeps } from './helpers.js';

/** Lets pending promise continuations run (no time passes). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function recordingLauncher() {
  const launched: CheckSession[] = [];
  const cancelled: { session: CheckSession; sequenceIds: string[] | undefined }[] = [];
  const launcher: SessionLauncher = {
    launch: (s) => launched.push(s),
    cancel: (session, sequenceIds) => cancelled.push({ session, sequenceIds }),
  };
  return { launcher, launched, cancelled };
}

function setup(withLauncher = true) {
  const storage = memoryStorage();
  const deps = testDeps({ storage, defaultLocation: 'eu-central-1' });
  const rec = recordingLauncher();
  const sessions = new CheckSessionService(deps, withLauncher ? rec.launcher : undefined);
  const addCheck = (overrides: Partial<NewRecord<TcpCheck>> = {}) => storage.checks.insert(ACCOUNT_A, tcpCheckFixture(overrides));
  return { storage, clock: deps.clock, sessions, addCheck, ...rec };
}

async function failure(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(() => null, (e: unknown) => e);
  if (!(err instanceof Error)) throw new Error('expected a rejection');
  return err;
}

describe('CheckSessionService.trigger', () => {
  it('without a target starts one session per active check, stores it and hands it to the launcher', async () => {
    const { sessions, storage, addCheck, launched } = setup();
    const api = await addCheck({ name: 'api' });
    await addCheck({ name: 'off', activated: false });
    const group = await storage.checkGroups.insert(ACCOUNT_A, checkGroupFixture({ activated: false }));
    await addCheck({ name: 'in stopped group', groupId: group.id });
    await storage.checks.insert(ACCOUNT_B, tcpCheckFixture({ name: 'theirs' }));
    const { sessions: started } = await sessions.trigger(ACCOUNT_A, undefined);
    expect(started).toHaveLength(1);
    const s = started[0]!;
    expect(s).toMatchObject({
      checkId: api.id, checkType: 'TCP', name: 'api', status: 'STARTED', startedAt: '2026-05-01T12:00:00.000Z', stoppedAt: null,
      timeElapsed: null, runLocations: ['eu-central-1'], runSource: 'TRIGGER_API', projectId: null, environment: null, results: [],
    });
    expect(s.sequences).toEqual([{ sequenceId: expect.any(String), runLocation: 'eu-central-1', status: 'STARTED' }]);
    expect(s).not.toHaveProperty('accountId');
    expect(await storage.checkSessions.get(ACCOUNT_A, s.checkSessionId)).toMatchObject({ accountId: ACCOUNT_A, status: 'STARTED' });
    expect(launched.map((x) => x.checkSessionId)).toEqual([s.checkSessionId]);
  });

  it('selects by check ids and by tags, counting the group\'s tags, with negation', async () => {
    const { sessions, storage, addCheck } = setup();
    const group = await storage.checkGroups.insert(ACCOUNT_A, checkGroupFixture({ tags: ['team-a'] }));
    const api = await addCheck({ name: 'api', tags: ['prod', 'api'] });
    const web = await addCheck({ name: 'web', tags: ['prod'], groupId: group.id });
    const byId = await sessions.trigger(ACCOUNT_A, { target: { checkId: [web.id] } });
    expect(byId.sessions.map((s) => s.checkId)).toEqual([web.id]);
    const byGroupTag = await sessions.trigger(ACCOUNT_A, { target: { matchTags: [['prod', 'team-a']] } });
    expect(byGroupTag.sessions.map((s) => s.checkId)).toEqual([web.id]);
    const negated = await sessions.trigger(ACCOUNT_A, { target: { matchTags: [['prod', '!team-a']] } });
    expect(negated.sessions.map((s) => s.checkId)).toEqual([api.id]);
    const either = await sessions.trigger(ACCOUNT_A, { target: { matchTags: [['api'], ['team-a']] } });
    expect(either.sessions.map((s) => s.checkId).sort()).toEqual([api.id, web.id].sort());
  });

  it('answers NotFoundError when nothing matches, also for another account\'s check, and stores nothing', async () => {
    const { sessions, storage, addCheck, launched } = setup();
    await addCheck({ tags: ['prod'] });
    const theirs = await storage.checks.insert(ACCOUNT_B, tcpCheckFixture());
    const err = await failure(sessions.trigger(ACCOUNT_A, { target: { matchTags: [['nothing']] } }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toBe('No checks match the target');
    expect(await code(sessions.trigger(ACCOUNT_A, { target: { checkId: [theirs.id] } }))).toBe('NOT_FOUND');
    expect(await code(sessions.trigger(ACCOUNT_B, { target: { checkId: [randomUUID()] } }))).toBe('NOT_FOUND');
    expect(await storage.raw.dump('check_sessions')).toEqual([]);
    expect(launched).toEqual([]);
  });

  it('refuses a malformed body and stores nothing', async () => {
    const { sessions, storage, addCheck } = setup();
    await addCheck();
    const bad = (await failure(sessions.trigger(ACCOUNT_A, { target: { checkId: ['not-a-uuid'], matchTags: [[]] } }))) as ValidationError;
    expect(bad.keys).toEqual(['target.checkId.0', 'target.matchTags.0']);
    expect(await code(sessions.trigger(ACCOUNT_A, { target: { checkId: [] } }))).toBe('VALIDATION');
    expect(await code(sessions.trigger(ACCOUNT_A, { projectId: '' }))).toBe('VALIDATION');
    expect(await storage.raw.dump('check_sessions')).toEqual([]);
  });

  it('runs in the first location, in all of them with runParallel, or in the group\'s', async () => {
    const { sessions, storage, addCheck } = setup();
    const one = await addCheck({ locations: ['eu-west-1', 'us-east-1'], privateLocations: ['basement'] });
    const all = await addCheck({ locations: ['eu-west-1', 'us-east-1'], privateLocations: ['basement'], runParallel: true });
    const group = await storage.checkGroups.insert(ACCOUNT_A, checkGroupFixture({ locations: ['ap-south-1'] }));
    const member = await addCheck({ locations: [], groupId: group.id });
    const run = async (id: string) => (await sessions.trigger(ACCOUNT_A, { target: { checkId: [id] } })).sessions[0]!;
    expect((await run(one.id)).runLocations).toEqual(['eu-west-1']);
    const parallel = await run(all.id);
    expect(parallel.runLocations).toEqual(['eu-west-1', 'us-east-1', 'basement']);
    expect(parallel.sequences.map((s) => s.runLocation)).toEqual(parallel.runLocations);
    expect(new Set(parallel.sequences.map((s) => s.sequenceId)).size).toBe(3);
    expect((await run(member.id)).runLocations).toEqual(['ap-south-1']);
  });

  it('a projectId makes a test session (runSource TEST) with its environment', async () => {
    const { sessions, addCheck } = setup();
    const c = await addCheck();
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, { target: { checkId: [c.id] }, projectId: 'web-e2e', environment: 'staging' });
    expect(s).toMatchObject({ runSource: 'TEST', projectId: 'web-e2e', environment: 'staging' });
  });

  it('without a launcher sessions stay STARTED; one attached later gets the next sessions', async () => {
    const { sessions, storage, addCheck, launcher, launched } = setup(false);
    await addCheck();
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    expect((await storage.checkSessions.get(ACCOUNT_A, s!.checkSessionId))?.status).toBe('STARTED');
    expect(launched).toEqual([]);
    sessions.setLauncher(launcher);
    const { sessions: [next] } = await sessions.trigger(ACCOUNT_A, {});
    expect(launched.map((x) => x.checkSessionId)).toEqual([next!.checkSessionId]);
  });
});

describe('CheckSessionService.get', () => {
  it('answers the session with its own results only', async () => {
    const { sessions, storage, addCheck } = setup();
    const c = await addCheck();
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    const mine = checkResultFixture(c.id, { checkSessionId: s!.checkSessionId, runSource: 'TRIGGER_API' });
    await storage.checkResults.insertMany(ACCOUNT_A, [mine, checkResultFixture(c.id), checkResultFixture(c.id, { checkSessionId: randomUUID() })]);
    const read = await sessions.get(ACCOUNT_A, s!.checkSessionId);
    expect(read.results.map((r) => r.id)).toEqual([mine.id]);
    expect(read.results[0]).not.toHaveProperty('accountId');
  });

  it('a malformed id names checkSessionId; an unknown or another account\'s is not found', async () => {
    const { sessions, addCheck } = setup();
    await addCheck();
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    const bad = (await failure(sessions.get(ACCOUNT_A, 'nope'))) as ValidationError;
    expect(bad).toMatchObject({ source: 'params', keys: ['checkSessionId'] });
    expect(await code(sessions.get(ACCOUNT_A, 42))).toBe('VALIDATION');
    expect((await failure(sessions.get(ACCOUNT_A, randomUUID()))).message).toBe('Check session not found');
    expect(await code(sessions.get(ACCOUNT_B, s!.checkSessionId))).toBe('NOT_FOUND');
  });
});

describe('CheckSessionService.completion', () => {
  async function started(parallel = false) {
    const ctx = setup();
    await ctx.addCheck({ locations: ['eu-west-1', 'us-east-1'], runParallel: parallel });
    const { sessions: [s] } = await ctx.sessions.trigger(ACCOUNT_A, {});
    return { ...ctx, session: s! };
  }

  it('answers at once for a final session', async () => {
    const { sessions, session, clock } = await started();
    await sessions.completeSequence(ACCOUNT_A, session.checkSessionId, session.sequences[0]!.sequenceId, 'PASSED');
    const answer = await sessions.completion(ACCOUNT_A, session.checkSessionId, {});
    expect(answer.done).toBe(true);
    expect(answer.session.status).toBe('PASSED');
    expect(clock.pendingTimers).toBe(0);
  });

  it('polls every 250 ms until the session is final', async () => {
    const { sessions, session, clock } = await started();
    let answer: { done: boolean; session: { status: string } } | undefined;
    void sessions.completion(ACCOUNT_A, session.checkSessionId, { maxWaitSeconds: '10' }).then((a) => (answer = a));
    await flush();
    expect(clock.pendingTimers).toBe(1);
    await sessions.completeSequence(ACCOUNT_A, session.checkSessionId, session.sequences[0]!.sequenceId, 'FAILED');
    clock.advance(249);
    await flush();
    expect(answer).toBeUndefined();
    clock.advance(1);
    await flush();
    expect(answer).toMatchObject({ done: true, session: { status: 'FAILED' } });
  });

  it('gives up after maxWaitSeconds with done false and the session as it is', async () => {
    const { sessions, session, clock } = await started();
    let answer: { done: boolean; session: { status: string } } | undefined;
    void sessions.completion(ACCOUNT_A, session.checkSessionId, { maxWaitSeconds: '1' }).then((a) => (answer = a));
    for (let i = 0; i < 3; i++) {
      await flush();
      clock.advance(250);
    }
    await flush();
    expect(answer).toBeUndefined();
    clock.advance(250);
    await flush();
    expect(answer).toMatchObject({ done: false, session: { status: 'STARTED' } });
    expect(clock.pendingTimers).toBe(0);
  });

  it('maxWaitSeconds takes 1..30; the ids are checked first', async () => {
    const { sessions, session } = await started();
    await sessions.cancel(ACCOUNT_A, session.checkSessionId, {});
    expect(await code(sessions.completion(ACCOUNT_A, session.checkSessionId, { maxWaitSeconds: '0' }))).toBe('VALIDATION');
    expect(await code(sessions.completion(ACCOUNT_A, session.checkSessionId, { maxWaitSeconds: '1' }))).toBe('OK');
    expect(await code(sessions.completion(ACCOUNT_A, session.checkSessionId, { maxWaitSeconds: '30' }))).toBe('OK');
    expect(await code(sessions.completion(ACCOUNT_A, session.checkSessionId, { maxWaitSeconds: '31' }))).toBe('VALIDATION');
    expect(await code(sessions.completion(ACCOUNT_A, 'nope', {}))).toBe('VALIDATION');
    expect(await code(sessions.completion(ACCOUNT_B, session.checkSessionId, {}))).toBe('NOT_FOUND');
  });
});

describe('CheckSessionService.cancel and the engine\'s moves', () => {
  it('cancels every in-progress sequence, stores it and tells the launcher', async () => {
    const { sessions, storage, clock, addCheck, cancelled } = setup();
    await addCheck({ locations: ['eu-west-1', 'us-east-1'], runParallel: true });
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    clock.advance(3_000);
    const out = await sessions.cancel(ACCOUNT_A, s!.checkSessionId, undefined);
    expect(out).toMatchObject({ status: 'CANCELLED', stoppedAt: '2026-05-01T12:00:03.000Z', timeElapsed: 3_000 });
    expect(out.sequences.map((q) => q.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect((await storage.checkSessions.get(ACCOUNT_A, s!.checkSessionId))?.status).toBe('CANCELLED');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.sequenceIds).toBeUndefined();
    expect(cancelled[0]!.session.status).toBe('CANCELLED');
  });

  it('cancels only the listed sequences; a final session is left as it is', async () => {
    const { sessions, addCheck, cancelled } = setup();
    await addCheck({ locations: ['eu-west-1', 'us-east-1'], runParallel: true });
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    const [first, second] = s!.sequences;
    const partly = await sessions.cancel(ACCOUNT_A, s!.checkSessionId, { sequenceId: [first!.sequenceId] });
    expect(partly.status).toBe('PROGRESS');
    expect(partly.sequences.map((q) => q.status)).toEqual(['CANCELLED', 'STARTED']);
    expect(cancelled[0]!.sequenceIds).toEqual([first!.sequenceId]);
    await sessions.completeSequence(ACCOUNT_A, s!.checkSessionId, second!.sequenceId, 'PASSED');
    const final = await sessions.cancel(ACCOUNT_A, s!.checkSessionId, {});
    expect(final.status).toBe('CANCELLED');
    expect(final.sequences.map((q) => q.status)).toEqual(['CANCELLED', 'PASSED']);
    expect(cancelled).toHaveLength(1);
  });

  it('refuses a malformed body or id; another account cancels nothing', async () => {
    const { sessions, storage, addCheck, cancelled } = setup();
    await addCheck();
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    expect(await code(sessions.cancel(ACCOUNT_A, s!.checkSessionId, { sequenceId: [] }))).toBe('VALIDATION');
    expect(await code(sessions.cancel(ACCOUNT_A, s!.checkSessionId, { sequenceId: ['x'] }))).toBe('VALIDATION');
    expect(await code(sessions.cancel(ACCOUNT_A, 'x', {}))).toBe('VALIDATION');
    expect(await code(sessions.cancel(ACCOUNT_B, s!.checkSessionId, {}))).toBe('NOT_FOUND');
    expect((await storage.checkSessions.get(ACCOUNT_A, s!.checkSessionId))?.status).toBe('STARTED');
    expect(cancelled).toEqual([]);
  });

  it('startSequence moves to PROGRESS; completeSequence settles on the worst outcome once all are final', async () => {
    const { sessions, storage, clock, addCheck } = setup();
    await addCheck({ locations: ['eu-west-1', 'us-east-1'], runParallel: true });
    const { sessions: [s] } = await sessions.trigger(ACCOUNT_A, {});
    const id = s!.checkSessionId;
    const [first, second] = s!.sequences.map((q) => q.sequenceId);
    expect((await sessions.startSequence(ACCOUNT_A, id, first!)).status).toBe('PROGRESS');
    expect((await sessions.completeSequence(ACCOUNT_A, id, first!, 'DEGRADED')).status).toBe('PROGRESS');
    clock.advance(2_000);
    const done = await sessions.completeSequence(ACCOUNT_A, id, second!, 'PASSED');
    expect(done).toMatchObject({ status: 'DEGRADED', timeElapsed: 2_000, stoppedAt: '2026-05-01T12:00:02.000Z' });
    expect(await sessions.completeSequence(ACCOUNT_A, id, second!, 'FAILED')).toEqual(done);
    expect((await storage.checkSessions.get(ACCOUNT_A, id))?.status).toBe('DEGRADED');
  });
});
