// The cap on one key's requests under way, over real HTTP on 127.0.0.1: beyond it requests wait in
// line (never another key's), a full line or a long wait answers 429, a client that hangs up
// leaves the line, and waiting for a session to end has a lane of its own.
import { describe, expect, it } from 'vitest';
import type { ApiHarness } from './support/harness.js';
import { call, closeAfterEach, gate, hangUp, start as startRouter } from './support/guard-calls.js';
import type { VigilRouterOptions } from '../src/index.js';

let h: ApiHarness;
const start = async (options: VigilRouterOptions) => {
  h = await startRouter(options);
};
closeAfterEach();

/** Holds account A's check lists at the service until `held` opens; `reached` opens once `n` are held. */
function holdLists(n: number) {
  const list = h.vigil.checks.list.bind(h.vigil.checks);
  const held = gate();
  const reached = gate();
  const served: number[] = [];
  let calls = 0;
  h.vigil.checks.list = async (accountId, query) => {
    if (accountId !== h.a.accountId) return list(accountId, query);
    const nth = ++calls;
    served.push(nth);
    if (nth <= n) {
      if (nth === n) reached.open();
      await held.opened;
    }
    return list(accountId, query);
  };
  return { held, reached, served, calls: () => calls };
}

const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(r, 150, false))]);

describe('requests of one key beyond its cap', () => {
  it('wait in line and are served in order as slots free, while another key is served at once', async () => {
    await start({ maxInFlight: 2 });
    const lists = holdLists(2);
    // Two different reads: identical ones that arrive together would share one run.
    const first = [call('/v1/checks?limit=10', h.a), call('/v1/checks?limit=11', h.a)];
    await lists.reached.opened;
    const waiting = call('/v1/checks', h.a);
    expect(await settled(waiting)).toBe(false);
    expect(lists.calls()).toBe(2);
    // Another key is not held behind A's line.
    expect((await call('/v1/checks', h.b)).status).toBe(200);
    lists.held.open();
    expect((await Promise.all([...first, waiting])).map((a) => a.status)).toEqual([200, 200, 200]);
    expect(lists.calls()).toBe(3);
  });

  it('answers 429 with Retry-After: 1 once the line is full, to that key only', async () => {
    await start({ maxInFlight: { limit: 1, queue: 1 } });
    const lists = holdLists(1);
    const first = call('/v1/checks', h.a);
    await lists.reached.opened;
    const waiting = call('/v1/checks', h.a);
    await new Promise((r) => setTimeout(r, 50));
    const refused = await call('/v1/checks', h.a);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect((await call('/v1/checks', h.b)).status).toBe(200);
    lists.held.open();
    expect([(await first).status, (await waiting).status]).toEqual([200, 200]);
    expect((await call('/v1/checks', h.a)).status).toBe(200);
  });

  it('answers 429 to a request that waited longer than waitMs, without running it', async () => {
    await start({ maxInFlight: { limit: 1, waitMs: 100 } });
    const lists = holdLists(1);
    const first = call('/v1/checks', h.a);
    await lists.reached.opened;
    const late = await call('/v1/checks', h.a);
    expect(late.status).toBe(429);
    expect(late.headers['retry-after']).toBe('1');
    lists.held.open();
    expect((await first).status).toBe(200);
    expect(lists.calls()).toBe(1);
  });

  it('with queue: 0, refuses at once', async () => {
    await start({ maxInFlight: { limit: 1, queue: 0 } });
    const lists = holdLists(1);
    const first = call('/v1/checks', h.a);
    await lists.reached.opened;
    expect((await call('/v1/checks', h.a)).status).toBe(429);
    lists.held.open();
    expect((await first).status).toBe(200);
  });

  it('drops a waiting request whose client hung up: it never runs and takes no slot', async () => {
    await start({ maxInFlight: 1 });
    const lists = holdLists(1);
    const first = call('/v1/checks', h.a);
    await lists.reached.opened;
    await hangUp('/v1/checks', h.a, Promise.resolve());
    lists.held.open();
    expect((await first).status).toBe(200);
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    // The first request and the last one ran; the one whose client left did not.
    expect(lists.calls()).toBe(2);
  });

  it('frees the slot of a running request whose client hung up', async () => {
    await start({ maxInFlight: 1 });
    const lists = holdLists(1);
    await hangUp('/v1/checks', h.a, lists.reached.opened);
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    lists.held.open();
  });

  it('does not count waits for a session to end against the cap', async () => {
    await start({ maxInFlight: 1 });
    const check = await h.a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: '127.0.0.1', port: 1 }, activated: false });
    expect(check.status).toBe(201);
    const completion = h.vigil.checkSessions.completion.bind(h.vigil.checkSessions);
    const polls = gate();
    const release = gate();
    let waiting = 0;
    h.vigil.checkSessions.completion = async (...args) => {
      if (++waiting === 2) polls.open();
      await release.opened;
      return completion(...args);
    };
    const id = '00000000-0000-4000-8000-000000000000';
    const both = [call(`/v1/check-sessions/${id}/completion`, h.a), call(`/v1/check-sessions/${id}/completion`, h.a)];
    await polls.opened;
    // Two polls wait, and the key's one slot is still free for its other requests.
    expect((await call('/v1/checks', h.a)).status).toBe(200);
    release.open();
    expect((await Promise.all(both)).map((a) => a.status)).toEqual([404, 404]);
  });
});
