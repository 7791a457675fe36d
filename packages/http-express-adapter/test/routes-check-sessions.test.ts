/**
 * The check-session routes of the HTTP API through the real Express router: trigger, read, wait for
 * completion (a long poll on the fake clock) and cancel.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import type request from 'supertest';
import { describe, expect, it } from 'vitest';
import { checkResultFixture } from '@vigil/core/testing';
import type { ApiClient, ApiHarness } from './support/harness.js';
import { expect400, expect404 } from './support/expect.js';
import { T0, T0_MS, UUID_RE, MISSING_UUID, type Body, created, tcpBody, describeOnBackends } from './support/routes.js';
import { browserBody } from './support/checks.js';

/**
 * Sends a long poll and moves the fake clock whenever the poll waits on a timer: `step` runs once
 * per wait (it advances the clock). Only the event loop is yielded to, no time is slept.
 */
async function withClock(h: ApiHarness, pending: request.Test, step: (round: number) => Promise<void> | void): Promise<request.Response> {
  let done = false;
  const settled = pending.then(
    (r) => {
      done = true;
      return r;
    },
    (e: unknown) => {
      done = true;
      throw e;
    },
  );
  let round = 0;
  while (!done) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (!done && h.clock.pendingTimers > 0) await step(round++);
  }
  return settled;
}

describeOnBackends('check routes on %s', {}, (h) => {

  describe('check sessions', () => {
    const trigger = (c: ApiClient, body?: Body) => c.post('/api/v1/check-sessions/trigger', body);

    /** A session of a's first check set to a status through storage, as the engine would. */
    async function setStatus(checkSessionId: string, status: 'PASSED' | 'FAILED' | 'PROGRESS') {
      const stored = await h.vigil.storage.checkSessions.get(h.a.accountId, checkSessionId);
      expect(stored).not.toBeNull();
      const { accountId: _a, ...rest } = stored!;
      const final = status !== 'PROGRESS';
      await h.vigil.storage.checkSessions.update(h.a.accountId, {
        ...rest,
        status,
        sequences: rest.sequences.map((s) => ({ ...s, status })),
        stoppedAt: final ? h.clock.now().toISOString() : null,
        timeElapsed: final ? h.clock.now().getTime() - Date.parse(rest.startedAt) : null,
      });
    }

    it('POST /v1/check-sessions/trigger answers 201 {sessions} with one STARTED session per activated check', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const browser = await created(h.a.post('/api/v1/checks/browser', browserBody({ locations: ['eu-west-1', 'ap-south-1'] })));
      const parallel = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'parallel', locations: ['eu-west-1', 'us-west-2'], runParallel: true })));
      await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'off', activated: false })));
      const res = await trigger(h.a).expect(201);
      expect(Object.keys(res.body)).toEqual(['sessions']);
      const sessions: any[] = res.body.sessions;
      expect(sessions.map((s) => s.checkId).sort()).toEqual([tcp.id, browser.id, parallel.id].sort());
      const byCheck = new Map(sessions.map((s) => [s.checkId, s]));
      expect(byCheck.get(tcp.id)).toEqual({
        checkSessionId: expect.stringMatching(UUID_RE),
        checkId: tcp.id,
        checkType: 'TCP',
        name: 'orders-db',
        status: 'STARTED',
        startedAt: T0,
        stoppedAt: null,
        timeElapsed: null,
        runLocations: ['us-east-1'],
        runSource: 'TRIGGER_API',
        projectId: null,
        environment: null,
        sequences: [{ sequenceId: expect.stringMatching(UUID_RE), runLocation: 'us-east-1', status: 'STARTED' }],
        results: [],
      });
      // Without runParallel an on-demand run goes to one location; with it, to every one.
      expect(byCheck.get(browser.id)).toMatchObject({ checkType: 'BROWSER', runLocations: ['eu-west-1'] });
      expect(byCheck.get(browser.id).sequences).toHaveLength(1);
      expect(byCheck.get(parallel.id).runLocations).toEqual(['eu-west-1', 'us-west-2']);
      expect(byCheck.get(parallel.id).sequences.map((s: { runLocation: string }) => s.runLocation)).toEqual(['eu-west-1', 'us-west-2']);
      expect(new Set(sessions.map((s) => s.checkSessionId)).size).toBe(3);
      for (const s of sessions) {
        const stored = await h.vigil.storage.checkSessions.get(h.a.accountId, s.checkSessionId);
        expect(stored?.status).toBe('STARTED');
      }
      // An empty body and an empty target are the same as no body.
      expect((await trigger(h.a, {}).expect(201)).body.sessions).toHaveLength(3);
      expect((await trigger(h.a, { target: {} }).expect(201)).body.sessions).toHaveLength(3);
    });

    it('trigger with a projectId starts a test session (runSource TEST)', async () => {
      await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const { body } = await trigger(h.a, { projectId: 'web-app', environment: 'staging' }).expect(201);
      expect(body.sessions[0]).toMatchObject({ runSource: 'TEST', projectId: 'web-app', environment: 'staging' });
    });

    it('trigger target filters: checkId, matchTags (outer OR, inner AND, ! negates, group tags count), both together', async () => {
      const group = await created(h.a.post('/api/v2/check-groups', { name: 'g', tags: ['grouped'] }));
      const db = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'db', tags: ['prod', 'db'] })));
      const web = await created(h.a.post('/api/v1/checks/browser', browserBody({ name: 'web', tags: ['prod', 'web'] })));
      const stage = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'stage', tags: ['staging'] })));
      const member = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'member', groupId: group.id })));
      const off = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ name: 'off', tags: ['prod'], activated: false })));
      const names = async (body: Body) => {
        const res = await trigger(h.a, body);
        expect(res.status, JSON.stringify(body)).toBe(201);
        return res.body.sessions.map((s: { name: string }) => s.name).sort();
      };
      expect(await names({ target: { checkId: [db.id] } })).toEqual(['db']);
      expect(await names({ target: { checkId: [db.id.toUpperCase(), stage.id] } })).toEqual(['db', 'stage']);
      expect(await names({ target: { matchTags: [['prod']] } })).toEqual(['db', 'web']);
      expect(await names({ target: { matchTags: [['prod', 'db']] } })).toEqual(['db']);
      expect(await names({ target: { matchTags: [['prod', '!web']] } })).toEqual(['db']);
      expect(await names({ target: { matchTags: [['staging'], ['web']] } })).toEqual(['stage', 'web']);
      expect(await names({ target: { matchTags: [['!prod']] } })).toEqual(['member', 'stage']);
      expect(await names({ target: { matchTags: [['grouped']] } })).toEqual(['member']);
      expect(await names({ target: { checkId: [db.id, web.id, member.id], matchTags: [['web'], ['grouped']] } })).toEqual(['member', 'web']);
      // 404 when nothing matches: unknown tag, a deactivated check, both filters disjoint, another account's check.
      const nothing: Body[] = [
        { target: { matchTags: [['nope']] } },
        { target: { checkId: [off.id] } },
        { target: { checkId: [MISSING_UUID] } },
        { target: { checkId: [db.id], matchTags: [['web']] } },
      ];
      for (const body of nothing) expect404(await trigger(h.a, body));
      expect404(await trigger(h.b, { target: { checkId: [db.id] } }));
      expect404(await trigger(h.b));
      // A group that is deactivated stops its members.
      await h.a.put(`/api/v2/check-groups/${group.id}`, { name: 'g', activated: false }).expect(200);
      expect404(await trigger(h.a, { target: { checkId: [member.id] } }));
    });

    it('trigger answers 400 for a malformed body and starts nothing', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const cases: [unknown, string[]][] = [
        [{ target: { checkId: ['not-a-uuid'] } }, ['target.checkId.0']],
        [{ target: { checkId: [check.id, 'x'] } }, ['target.checkId.1']],
        [{ target: { checkId: [] } }, ['target.checkId']],
        [{ target: { checkId: check.id } }, ['target.checkId']],
        [{ target: { matchTags: [[]] } }, ['target.matchTags.0']],
        [{ target: { matchTags: ['prod'] } }, ['target.matchTags.0']],
        [{ target: { matchTags: [['prod', '']] } }, ['target.matchTags.0.1']],
        [{ target: 'all' }, ['target']],
        [{ projectId: '' }, ['projectId']],
        [{ projectId: 'p'.repeat(256) }, ['projectId']],
        [{ environment: 'e'.repeat(256) }, ['environment']],
      ];
      for (const [body, keys] of cases) {
        expect400(await h.a.post('/api/v1/check-sessions/trigger', body), 'payload', ...keys);
      }
    });

    it('GET /v1/check-sessions/{id} answers the session with its results; 400 for a non-UUID id; 404 unknown or for account b', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const read = await h.a.get(`/api/v1/check-sessions/${session.checkSessionId}`).expect(200);
      expect(read.body).toEqual(session);
      const result = checkResultFixture(check.id, { checkSessionId: session.checkSessionId, sequenceId: session.sequences[0].sequenceId, runSource: 'TRIGGER_API' });
      await h.vigil.storage.checkResults.insertMany(h.a.accountId, [result, checkResultFixture(check.id)]);
      const withResults = await h.a.get(`/api/v1/check-sessions/${session.checkSessionId}`).expect(200);
      expect(withResults.body.results.map((r: { id: string }) => r.id)).toEqual([result.id]);
      expect(withResults.body.results[0]).not.toHaveProperty('accountId');
      for (const path of ['/api/v1/check-sessions/not-a-uuid', '/api/v1/check-sessions/not-a-uuid/completion?maxWaitSeconds=1']) {
        expect400(await h.a.get(path), 'params', 'checkSessionId');
      }
      expect400(await h.a.post('/api/v1/check-sessions/12345/cancel', {}), 'params', 'checkSessionId');
      expect404(await h.a.get(`/api/v1/check-sessions/${MISSING_UUID}`));
      expect404(await h.a.get(`/api/v1/check-sessions/${MISSING_UUID}/completion?maxWaitSeconds=1`));
      expect404(await h.a.post(`/api/v1/check-sessions/${MISSING_UUID}/cancel`, {}));
      expect404(await h.b.get(`/api/v1/check-sessions/${session.checkSessionId}`));
    });

    it('GET .../completion answers 408 in the spec error shape once maxWaitSeconds pass with the session still pending', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const id: string = session.checkSessionId;
      const started = h.clock.now().getTime();
      const res = await withClock(h, h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=1`), () => {
        h.clock.advance(250);
      });
      expect(res.status).toBe(408);
      expect(res.body).toEqual({ statusCode: 408, error: 'Request Timeout', message: expect.stringContaining(id) });
      // It waited the whole second of clock time, not less.
      expect(h.clock.now().getTime() - started).toBe(1_000);
      expect(h.clock.pendingTimers).toBe(0);
      // A session that has moved on but is not final is still pending.
      await setStatus(id, 'PROGRESS');
      const progress = await withClock(h, h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=2`), () => {
        h.clock.advance(500);
      });
      expect(progress.status).toBe(408);
      expect(progress.body.message).toContain('PROGRESS');
    });

    it('GET .../completion answers 200 with the session as soon as it becomes final, and at once when it already is', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const id: string = session.checkSessionId;
      const started = h.clock.now().getTime();
      let finished = false;
      const res = await withClock(h, h.a.get(`/api/v1/check-sessions/${id}/completion?maxWaitSeconds=30`), async () => {
        if (!finished) {
          finished = true;
          await setStatus(id, 'PASSED');
        }
        h.clock.advance(250);
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ checkSessionId: id, checkId: check.id, status: 'PASSED', results: [] });
      // It answered at the next poll, long before the 30 s were over.
      expect(h.clock.now().getTime() - started).toBe(250);
      expect(h.clock.pendingTimers).toBe(0);

      const [failed] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      await setStatus(failed.checkSessionId, 'FAILED');
      const now = h.clock.now().getTime();
      const immediate = await h.a.get(`/api/v1/check-sessions/${failed.checkSessionId}/completion?maxWaitSeconds=1`).expect(200);
      expect(immediate.body).toMatchObject({ checkSessionId: failed.checkSessionId, status: 'FAILED' });
      expect(h.clock.now().getTime()).toBe(now);
    });

    it('GET .../completion answers 400 for maxWaitSeconds outside 1..30 and 404 for account b', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const path = `/api/v1/check-sessions/${session.checkSessionId}/completion`;
      expect400(await h.a.get(`${path}?maxWaitSeconds=0`), 'query', 'maxWaitSeconds');
      expect400(await h.a.get(`${path}?maxWaitSeconds=31`), 'query', 'maxWaitSeconds');
      expect400(await h.a.get(`${path}?maxWaitSeconds=soon`), 'query', 'maxWaitSeconds');
      expect404(await h.b.get(`${path}?maxWaitSeconds=1`));
      expect(h.clock.pendingTimers).toBe(0);
    });

    it('POST .../cancel answers 202 with the session CANCELLED; the listed sequences only when sequenceId is given', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody({ locations: ['eu-west-1', 'us-west-2'], runParallel: true })));
      const [all] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      h.clock.advance(3_000);
      const cancelled = await h.a.post(`/api/v1/check-sessions/${all.checkSessionId}/cancel`, {});
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202);
      expect(cancelled.body).toEqual({
        ...all,
        status: 'CANCELLED',
        stoppedAt: new Date(T0_MS + 3_000).toISOString(),
        timeElapsed: 3_000,
        sequences: all.sequences.map((s: Body) => ({ ...s, status: 'CANCELLED' })),
      });
      expect((await h.a.get(`/api/v1/check-sessions/${all.checkSessionId}`).expect(200)).body).toEqual(cancelled.body);
      expect((await h.a.get(`/api/v1/check-sessions/${all.checkSessionId}/completion?maxWaitSeconds=1`).expect(200)).body.status).toBe('CANCELLED');
      // Without a body at all, too.
      const [bare] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      expect((await h.a.post(`/api/v1/check-sessions/${bare.checkSessionId}/cancel`).expect(202)).body.status).toBe('CANCELLED');

      const [some] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const [first, second] = some.sequences;
      const partial = await h.a.post(`/api/v1/check-sessions/${some.checkSessionId}/cancel`, { sequenceId: [first.sequenceId] }).expect(202);
      expect(partial.body.sequences).toEqual([{ ...first, status: 'CANCELLED' }, second]);
      expect(partial.body).toMatchObject({ status: 'PROGRESS', stoppedAt: null, timeElapsed: null });
      const rest = await h.a.post(`/api/v1/check-sessions/${some.checkSessionId}/cancel`, { sequenceId: [second.sequenceId] }).expect(202);
      expect(rest.body.status).toBe('CANCELLED');
    });

    it('POST .../cancel leaves a final session as it is', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      await setStatus(session.checkSessionId, 'PASSED');
      const before = await h.vigil.storage.checkSessions.get(h.a.accountId, session.checkSessionId);
      h.clock.advance(1_000);
      const res = await h.a.post(`/api/v1/check-sessions/${session.checkSessionId}/cancel`, {}).expect(202);
      expect(res.body.status).toBe('PASSED');
      expect(res.body.sequences.every((s: { status: string }) => s.status === 'PASSED')).toBe(true);
      expect(await h.vigil.storage.checkSessions.get(h.a.accountId, session.checkSessionId)).toEqual(before);
    });

    it('POST .../cancel answers 400 for a bad sequenceId and 404 for account b, leaving the session running', async () => {
      const check = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const [session] = (await trigger(h.a, { target: { checkId: [check.id] } }).expect(201)).body.sessions;
      const path = `/api/v1/check-sessions/${session.checkSessionId}/cancel`;
      expect400(await h.a.post(path, { sequenceId: [] }), 'payload', 'sequenceId');
      expect400(await h.a.post(path, { sequenceId: ['seq-1'] }), 'payload', 'sequenceId.0');
      expect400(await h.a.post(path, { sequenceId: session.sequences[0].sequenceId }), 'payload', 'sequenceId');
      expect404(await h.b.post(path, {}));
      expect404(await h.b.get(`/api/v1/check-sessions/${session.checkSessionId}/completion?maxWaitSeconds=1`));
      const stored = await h.vigil.storage.checkSessions.get(h.a.accountId, session.checkSessionId);
      expect(stored?.status).toBe('STARTED');
      expect(stored?.sequences.map((s) => s.status)).toEqual(['STARTED']);
    });
  });
});
