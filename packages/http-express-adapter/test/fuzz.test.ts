import fc from 'fast-check';
import type * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, type RouteDef } from '../src/index.js';
import { apiHarness, type ApiHarness } from './support/harness.js';

/** The top-level field names of a body schema (inside a pipe of cross-field checks too). */
function fieldNames(schema: v.GenericSchema | undefined): string[] {
  if (!schema) return [];
  const s = schema as unknown as { entries?: Record<string, unknown>; pipe?: unknown[]; options?: unknown[] };
  if (s.entries) return Object.keys(s.entries);
  const inner = s.pipe?.find((p) => (p as { entries?: unknown }).entries) as { entries: Record<string, unknown> } | undefined;
  if (inner) return Object.keys(inner.entries);
  // A variant (alert channels): the union of its options' fields.
  return [...new Set((s.options ?? []).flatMap((o) => fieldNames(o as v.GenericSchema)))];
}

const anyValue = fc.oneof(
  fc.anything(),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.object())),
  fc.object(),
);

function bodyFor(route: RouteDef) {
  const names = fieldNames(route.body?.schema);
  const record = names.length
    ? fc.dictionary(fc.constantFrom(...names), anyValue, { maxKeys: names.length })
    : fc.object();
  return fc.oneof(fc.anything(), fc.object(), record, record);
}

const queryNames = ['limit', 'page', 'autoAssignAlerts', 'metrics', 'quickRange', 'from', 'to', 'nextId', 'paginated', 'maxWaitSeconds', 'groupBy'];
const query = fc.dictionary(fc.constantFrom(...queryNames), fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('true', 'false', '-1', '0', '101', '')), { maxKeys: 3 });

describe('property: no client input makes a write route fail on the server or store anything it rejects', () => {
  let h: ApiHarness;
  let ids: Record<string, string[]>;
  let snapshotTables: string[];

  beforeAll(async () => {
    h = await apiHarness('sqlite', { rateLimit: false });
    const a = h.a;
    const check = await a.post('/api/v1/checks/tcp', { name: 'db', request: { hostname: '127.0.0.1', port: 5432 } });
    const group = await a.post('/api/v2/check-groups', { name: 'group' });
    const channel = await a.post('/api/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.com' } });
    const dashboard = await a.post('/api/v1/dashboards', { header: 'Status' });
    const page = await a.post('/api/v1/status-pages', { name: 'Public', url: 'public-status' });
    const service = await a.post('/api/v1/status-pages/services', { name: 'API' });
    for (const created of [check, group, channel, dashboard, page, service]) expect(created.status).toBe(201);
    ids = {
      string: [check.body.id, String(page.body.id), String(service.body.id), 'nope', '%00', '../etc'],
      integer: [String(group.body.id), String(channel.body.id), String(dashboard.body.id), '0', '-1', '999999', 'abc', '1e3'],
      uuid: ['00000000-0000-4000-8000-000000000000', 'not-a-uuid'],
    };
    const storage = h.vigil.storage as unknown as { knex: import('knex').Knex };
    const tables = (await storage.knex.raw("select name from sqlite_master where type = 'table' and name like 'vigil_%'")) as { name: string }[];
    // API keys are left out: authentication writes lastUsedAt.
    snapshotTables = tables.map((t) => t.name).filter((n) => n !== 'vigil_api_keys' && n !== 'vigil_migrations');
  });
  afterAll(() => h.close());

  async function snapshot(): Promise<string> {
    const knex = (h.vigil.storage as unknown as { knex: import('knex').Knex }).knex;
    const parts: unknown[] = [];
    for (const t of snapshotTables) parts.push(await knex(t).select('*'));
    return JSON.stringify(parts);
  }

  const writeRoutes = API_ROUTES.filter((r) => r.method !== 'get');

  it.each(writeRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s', async (_name, route) => {
    const paramNames = Object.entries(route.params ?? {});
    const path = fc.tuple(...paramNames.map(([, type]) => fc.oneof(fc.constantFrom(...ids[type]!), fc.string({ maxLength: 40 })))).map((values) => {
      let p = route.path;
      paramNames.forEach(([name], i) => {
        p = p.replace(`:${name}`, encodeURIComponent(values[i] as string) || 'x');
      });
      return p;
    });
    await fc.assert(
      fc.asyncProperty(path, query, bodyFor(route), async (p, q, body) => {
        const before = await snapshot();
        const qs = new URLSearchParams(q as Record<string, string>).toString();
        const url = `/api${p}${qs ? `?${qs}` : ''}`;
        const req = h.a[route.method === 'delete' ? 'delete' : route.method](url);
        const res = await (body === undefined ? req : req.set('Content-Type', 'application/json').send(JSON.stringify(body) ?? 'null'));
        expect(res.status, `${route.method} ${url} ${JSON.stringify(body)?.slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body).toMatchObject({ statusCode: res.status, error: expect.any(String), message: expect.any(String) });
          const keys = Object.keys(res.body).sort();
          expect(keys.filter((k) => !['statusCode', 'error', 'message', 'validation'].includes(k))).toEqual([]);
          if (res.body.validation) expect(res.body.validation).toMatchObject({ source: expect.stringMatching(/^(payload|query|params)$/), keys: expect.any(Array) });
          expect(await snapshot(), 'a rejected request changes nothing').toBe(before);
        }
      }),
      { numRuns: 100 },
    );
  }, 120_000);

  it('answers malformed JSON and non-JSON bodies with a 400 in the error shape', async () => {
    for (const route of writeRoutes.filter((r) => r.body && !r.params)) {
      const before = await snapshot();
      const bad = await h.a[route.method === 'delete' ? 'delete' : route.method](`/api${route.path}`).set('Content-Type', 'application/json').send('{"name": [1,');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Malformed JSON in request body' });
      const text = await h.a[route.method === 'delete' ? 'delete' : route.method](`/api${route.path}`).set('Content-Type', 'text/plain').send('name=x');
      expect(text.status).toBe(400);
      expect(await snapshot()).toBe(before);
    }
  });
});
