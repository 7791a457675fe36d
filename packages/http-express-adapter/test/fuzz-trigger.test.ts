/**
 * POST /v1/check-sessions/trigger with a JSON array as its body (`[]`, `[{}]`, any array) is a 400
 * in the spec's error shape that starts nothing: no session stored, no run scheduled. An empty
 * object, by contrast, is the spec's "every activated check" and starts a session for each.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type ApiHarness } from './support/harness.js';
import { tableSnapshotter } from './support/fuzz-bodies.js';
import { tcpBody } from './support/routes.js';

const ARRAY_BODY = {
  statusCode: 400,
  error: 'Bad Request',
  message: 'the request body must be an object, not an array',
  validation: { source: 'payload', keys: [''] },
};

describe('POST /v1/check-sessions/trigger with a JSON array as its body', () => {
  let h: ApiHarness;
  let checkIds: string[];
  let snapshot: () => Promise<string>;

  beforeAll(async () => {
    h = await apiHarness('sqlite', { rateLimit: false });
    checkIds = [];
    for (const name of ['orders-db', 'billing-db']) {
      const res = await h.a.post('/api/v1/checks/tcp', tcpBody({ name }));
      expect(res.status).toBe(201);
      expect(res.body.activated).toBe(true);
      checkIds.push(res.body.id);
    }
    snapshot = await tableSnapshotter(h);
  });
  afterAll(() => h.close());

  const trigger = (json: string) => h.a.post('/api/v1/check-sessions/trigger').set('Content-Type', 'application/json').send(json);

  /** The session runs scheduled for the two checks. */
  async function sessionRuns(): Promise<number> {
    const entries = await Promise.all(checkIds.map((id) => h.vigil.storage.schedule.list(h.a.accountId, id)));
    return entries.flat().filter((e) => e.kind === 'session').length;
  }

  it.each(['[]', '[{}]'])('%s is a 400 in the error shape, and no session is stored or scheduled', async (json) => {
    const before = await snapshot();
    const res = await trigger(json);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual(ARRAY_BODY);
    expect(await snapshot(), 'a refused trigger stores nothing').toBe(before);
    expect(await sessionRuns()).toBe(0);
  });

  it('property: any JSON array is refused the same way and starts nothing', async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.constant({}), fc.object(), fc.jsonValue()), { maxLength: 5 }), async (items) => {
        const res = await trigger(JSON.stringify(items));
        expect(res.status, JSON.stringify(items)).toBe(400);
        expect(res.body).toEqual(ARRAY_BODY);
      }),
      { numRuns: 40 },
    );
    expect(await snapshot()).toBe(before);
    expect(await sessionRuns()).toBe(0);
  });

  // Runs last: it stores the sessions the refused bodies above did not.
  it('whereas {} starts one session per activated check, each stored and its run scheduled', async () => {
    const res = await trigger('{}');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const sessions: { checkSessionId: string; checkId: string; status: string }[] = res.body.sessions;
    expect(sessions.map((s) => s.checkId).sort()).toEqual([...checkIds].sort());
    for (const s of sessions) {
      const stored = await h.a.get(`/api/v1/check-sessions/${s.checkSessionId}`);
      expect(stored.status).toBe(200);
      expect(stored.body).toMatchObject({ checkSessionId: s.checkSessionId, checkId: s.checkId, status: 'STARTED' });
    }
    expect(await sessionRuns()).toBe(2);
  });
});
