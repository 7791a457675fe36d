import type request from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect } from 'vitest';
import type { VigilRouterOptions } from '../../src/index.js';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiClient, type ApiHarness } from './harness.js';

/** The harness clock's start: everything created before the clock moves carries this time. */
export const T0 = '2026-05-01T12:00:00.000Z';
export const T0_MS = Date.parse(T0);
export const HOUR = 3_600_000;
export const MASK = '********';
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

export type Body = Record<string, unknown>;

type Pending = request.Test | request.Response | Promise<request.Response>;

/** The body of a response that must have `status` (200 unless told). */
export async function ok(res: Pending, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** The body of a 201. */
export const created = (res: Pending) => ok(res, 201);

/** A 204 with an empty body. */
export async function deleted(res: Pending): Promise<void> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(204);
  expect(r.text).toBe('');
}

export const ids = (list: { id: unknown }[]) => list.map((x) => x.id);

export const tcpBody = (over: Body = {}): Body => ({ name: 'orders-db', request: { hostname: 'db.internal', port: 5432 }, ...over });

export const incidentBody = (dashboardId: number, over: Body = {}): Body => ({
  name: 'API outage',
  dashboardId,
  incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into elevated errors' }],
  ...over,
});

/**
 * A fresh API harness on `backend` for every test of the enclosing describe (closed after it, the
 * file's PostgreSQL schema dropped after the describe): `set` receives each one.
 */
function harnessPerTest(backend: 'sqlite' | 'postgres', set: (h: ApiHarness) => void, options?: VigilRouterOptions): void {
  let h: ApiHarness | undefined;
  beforeEach(async () => {
    h = await apiHarness(backend, options);
    set(h);
  });
  afterEach(() => h?.close());
  afterAll(dropPostgresSchema);
}

/**
 * describe.each over the backends, with a fresh harness for every test: `body` gets a stand-in that
 * reads through to the current test's harness, so that tests can write `h.a.get(...)`.
 */
export function describeOnBackends(title: string, options: VigilRouterOptions, body: (h: ApiHarness) => void): void {
  describe.each(BACKENDS)(title, (backend) => {
    let current: ApiHarness | undefined;
    harnessPerTest(backend, (x) => (current = x), options);
    body(new Proxy({} as ApiHarness, { get: (_target, key) => Reflect.get(current!, key) }));
  });
}

/** The resources most route tests start from, created through the API on the current harness. */
export function resourceBuilders(harness: () => ApiHarness) {
  return {
    /** A TCP check of `c` (a unless told); without auto-assigned alert channels unless `query` says otherwise. */
    newCheck: async (c: ApiClient = harness().a, over: Body = {}, query = '?autoAssignAlerts=false') =>
      created(c.post(`/api/v1/checks/tcp${query}`, tcpBody(over))),
    newDashboard: async (c: ApiClient = harness().a, over: Body = {}) =>
      created(c.post('/api/v1/dashboards', { header: 'Acme status', ...over })),
    newService: async (c: ApiClient = harness().a, name = 'API') => created(c.post('/api/v1/status-pages/services', { name })),
  };
}
