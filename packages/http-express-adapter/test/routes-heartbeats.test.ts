/**
 * The heartbeat routes of the HTTP API through the real Express router: the pings (no credentials)
 * and the availability of a heartbeat check.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id.
 */
import { describe, expect, it } from 'vitest';
import { expect400, expect404 } from './support/expect.js';
import { T0, T0_MS, MISSING_UUID, created, tcpBody, describeOnBackends } from './support/routes.js';
import { heartbeatBody } from './support/checks.js';

describeOnBackends('check routes on %s', {}, (h) => {

  describe('heartbeats', () => {
    it('GET and POST /ping/{token} need no credentials, answer {ok, at} and record the ping', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const token: string = check.heartbeat.pingToken;
      h.clock.advance(10 * 60_000);
      const got = await h.a.anonymous('get', `/api/ping/${token}`).expect(200);
      expect(got.body).toEqual({ ok: true, at: new Date(T0_MS + 10 * 60_000).toISOString() });
      h.clock.advance(10 * 60_000);
      const posted = await h.a.anonymous('post', `/api/ping/${token}`).set('User-Agent', 'backup-script/1.0').expect(200);
      expect(posted.body).toEqual({ ok: true, at: new Date(T0_MS + 20 * 60_000).toISOString() });
      const pings = await h.vigil.storage.heartbeats.listPings(h.a.accountId, check.id, new Date(T0_MS), new Date(T0_MS + 3_600_000));
      expect(pings.map((p) => p.at)).toEqual([new Date(T0_MS + 10 * 60_000).toISOString(), new Date(T0_MS + 20 * 60_000).toISOString()]);
      expect(pings[1]?.source).toBe('backup-script/1.0');
      expect((await h.vigil.storage.heartbeats.lastPing(h.a.accountId, check.id))?.at).toBe(new Date(T0_MS + 20 * 60_000).toISOString());
    });

    it('/ping/{token} answers 404 in the spec error shape for an unknown token and for a token that is not a heartbeat\'s', async () => {
      await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      for (const method of ['get', 'post'] as const) {
        expect404(await h.a.anonymous(method, '/api/ping/not-a-token'));
      }
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      expect404(await h.a.anonymous('get', `/api/ping/${tcp.id}`));
    });

    it('GET /v1/checks/heartbeats/{checkId}/availability answers the share of periods that saw a ping, now and in the period before', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const token: string = check.heartbeat.pingToken;
      for (const minutes of [10, 10, 130]) {
        h.clock.advance(minutes * 60_000);
        await h.a.anonymous('get', `/api/ping/${token}`).expect(200);
      }
      const iso = (ms: number) => new Date(ms).toISOString();
      // Four one-hour periods from creation: pings in the first (twice) and the third.
      const windowed = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability?startTime=${T0}&endTime=${iso(T0_MS + 4 * 3_600_000)}`).expect(200);
      expect(windowed.body).toEqual({ successRatio: { previousPeriod: 0, currentPeriod: 50 }, totalEntitiesCurrentPeriod: 3 });
      // The window after it holds the previous period's pings.
      const after = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability?startTime=${iso(T0_MS + 4 * 3_600_000)}&endTime=${iso(T0_MS + 8 * 3_600_000)}`).expect(200);
      expect(after.body).toEqual({ successRatio: { previousPeriod: 50, currentPeriod: 0 }, totalEntitiesCurrentPeriod: 0 });
      // Default: the 24 hours before now (T0 + 3 h): 2 of 24 periods.
      h.clock.advance(30 * 60_000);
      const byDefault = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability`).expect(200);
      expect(byDefault.body).toEqual({ successRatio: { previousPeriod: 0, currentPeriod: 8.33 }, totalEntitiesCurrentPeriod: 3 });
    });

    it('availability answers null for a window that ends before the check existed', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const res = await h.a.get(`/api/v1/checks/heartbeats/${check.id}/availability?startTime=2026-04-01T00:00:00Z&endTime=2026-04-02T00:00:00Z`).expect(200);
      expect(res.text).toBe('null');
    });

    it('availability answers 404 for a check that is not a heartbeat, an unknown id and another account\'s heartbeat', async () => {
      const tcp = await created(h.a.post('/api/v1/checks/tcp', tcpBody()));
      const heartbeat = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      expect404(await h.a.get(`/api/v1/checks/heartbeats/${tcp.id}/availability`));
      expect404(await h.a.get(`/api/v1/checks/heartbeats/${MISSING_UUID}/availability`));
      expect404(await h.b.get(`/api/v1/checks/heartbeats/${heartbeat.id}/availability`));
    });

    it('availability answers 400 for a malformed startTime/endTime and for endTime not after startTime', async () => {
      const check = await created(h.a.post('/api/v1/checks/heartbeat', heartbeatBody()));
      const path = `/api/v1/checks/heartbeats/${check.id}/availability`;
      expect400(await h.a.get(`${path}?startTime=yesterday`), 'query', 'startTime');
      expect400(await h.a.get(`${path}?endTime=2026-02-31`), 'query', 'endTime');
      expect400(await h.a.get(`${path}?startTime=2026-05-01T10:00:00Z&endTime=2026-05-01T09:00:00Z`), 'query', 'endTime');
      expect400(await h.a.get(`${path}?startTime=2026-05-01T10:00:00Z&endTime=2026-05-01T10:00:00Z`), 'query', 'endTime');
      await h.a.get(`${path}?startTime=2026-05-01&endTime=2026-05-02`).expect(200);
    });
  });
});
