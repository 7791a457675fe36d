/**
 * Property: every free-text field of every write body has a maximum. For each string field and
 * each list with a maxLength that the route's valibot schema states, a valid body with that field
 * one over its maximum (anywhere the field occurs, by any amount) is a 400 naming the field that
 * stores nothing, and the same body with the field exactly at its maximum is not refused for it.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { AlertChannelCreateSchema, THEME_COLOR_FIELDS } from '@vigil/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, type RouteDef } from '../src/index.js';
import { apiHarness, type ApiHarness } from './support/harness.js';
import {
  VALID_BODIES,
  createContext,
  lengthened,
  lengthenedList,
  pathName,
  placesOf,
  schemaFields,
  tableSnapshotter,
  valueAt,
  withValueAt,
  type FuzzContext,
  type Place,
  type SchemaField,
} from './support/fuzz-bodies.js';

const routeKey = (r: RouteDef) => `${r.method.toUpperCase()} ${r.path}`;

/** Where a route's own schema leaves a part opaque, the schema the service checks the body with. */
const CHECKED_AS: Record<string, v.GenericSchema> = {
  // The service checks the merged channel, config included, with the create schema of its type.
  'PUT /v1/alert-channels/:id': AlertChannelCreateSchema,
};

/** String fields whose format bounds their length: they need no maxLength of their own. */
const FORMAT_BOUNDED: Record<string, string> = {
  url: 'a status page url is a subdomain label: at most 63 characters',
  customUrl: 'a subdomain label: at most 63 characters',
  customDomain: 'a host name: at most 253 characters',
  host: 'a host name with an optional *.: at most 255 characters',
  sslCheckDomain: 'a fully qualified domain name: at most 253 characters',
  'config.number': 'an E.164 number: at most 16 characters',
  startsAt: 'an ISO 8601 date-time',
  endsAt: 'an ISO 8601 date-time',
  repeatEndsAt: 'an ISO 8601 date-time',
  startedAt: 'an ISO 8601 date-time',
  stoppedAt: 'an ISO 8601 date-time',
  publicIncidentUpdateDate: 'an ISO 8601 date-time',
  'incidentUpdate.publicIncidentUpdateDate': 'an ISO 8601 date-time',
  'target.checkId.[]': 'a UUID',
  'sequenceId.[]': 'a UUID',
  'request.query': 'a DNS check\'s query is a domain name (or an address): at most 253 characters',
  'request.hostname': 'an ICMP check\'s host is a host name or an address: at most 253 characters (a TCP check\'s states its maximum)',
  'request.assertions.[].target': 'an ICMP assertion\'s target is a number of at most 7 digits and 3 decimals (other checks\' state their maximum)',
  'request.nameServer': 'an IPv4 or IPv6 address: at most 45 characters',
  'request.expectedStatus': 'a status, a class or a range: at most 7 characters',
};

/** Opaque values (records) whose strings their own schema bounds, and where that is tested. */
const OPAQUE_BOUNDED: Record<string, string> = {
  files: 'a Playwright suite\'s files: each path at most 255 characters, each file 100,000, all of them 1,000,000 (core\'s model-playwright-checks test)',
};

/**
 * String fields that have no maximum yet, left out of the check above. Once a field's schema states
 * one, the properties below try it like any other, and its entry here goes.
 */
const NO_MAXIMUM_YET: [RegExp, string][] = [];
const noMaximumYet = (name: string) => NO_MAXIMUM_YET.some(([pattern]) => pattern.test(name));

/**
 * Fields that no value at their maximum makes valid: at the maximum a 400 may name them, but not
 * for their length.
 */
const NEVER_VALID_AT_MAXIMUM: Record<string, string> = {
  timezone: 'no IANA time zone name is 64 characters long',
  'serviceIds.[]': 'names a stored service, whose id is a UUID',
  'cards.[].serviceIds.[]': 'names a stored service, whose id is a UUID',
  '[].checkId': 'names a stored check, whose id is a UUID',
  'triggerIncident.serviceId': 'names a stored service, whose id is a UUID',
  ...Object.fromEntries((['light', 'dark'] as const).flatMap((t) => THEME_COLOR_FIELDS.map((f) => [`themeColors.${t}.${f}`, 'no colour is 64 characters long']))),
};

const routes = API_ROUTES.filter((r) => r.method !== 'get' && r.body);
const schemaOf = (r: RouteDef) => CHECKED_AS[routeKey(r)] ?? r.body!.schema;
const fieldsOf = (r: RouteDef) => schemaFields(schemaOf(r));
const limited = (r: RouteDef) => fieldsOf(r).filter((f) => f.kind !== 'opaque' && f.max !== undefined);

/** `METHOD path field` of every string field without a maximum (or opaque value) of `list`'s bodies. */
function unbounded(list: readonly RouteDef[]): string[] {
  return list.flatMap((route) => fieldsOf(route).flatMap((f) => {
    const name = pathName(f.path);
    if (f.kind === 'opaque') return OPAQUE_BOUNDED[name] ? [] : [`${routeKey(route)} ${name}: an opaque value, whose strings have no maximum`];
    return f.kind === 'string' && f.max === undefined && !FORMAT_BOUNDED[name] && !noMaximumYet(name) ? [`${routeKey(route)} ${name}`] : [];
  }));
}

/** A field of a route with the valid body it is tried in (the first of the field's variant). */
interface Case {
  route: RouteDef;
  field: SchemaField;
  body: number;
}

/** Cases by their field's name (and variant), which is what fast-check shows of a counterexample. */
function byName(cases: Case[]): Map<string, Case> {
  return new Map(cases.map((c) => [[pathName(c.field.path), ...c.field.variants.map((x) => `${x.key}=${String(x.value)}`)].join(' '), c]));
}

function casesOf(route: RouteDef, ctx: FuzzContext): Case[] {
  const table = VALID_BODIES[routeKey(route)];
  if (!table) throw new Error(`${routeKey(route)} has fields with a maximum but no valid body in VALID_BODIES`);
  const bodies = table.bodies(ctx, 0);
  return limited(route).map((field) => {
    const body = bodies.findIndex((b) => field.variants.every((c) => (valueAt(b, c.at) as Record<string, unknown>)?.[c.key] === c.value));
    const places = body < 0 ? [] : placesOf(bodies[body], field.path).filter((p) => (field.kind === 'string' ? typeof valueAt(bodies[body], p) === 'string' : (valueAt(bodies[body], p) as unknown[]).length > 0));
    if (!places.length) throw new Error(`the valid body of ${routeKey(route)} has no value at ${pathName(field.path)}: add one so that its maximum is tried`);
    return { route, field, body };
  });
}

describe('property: every free-text field of a write body has a maximum, and one over it is a 400 naming the field', () => {
  it('every string field of every write body has a maximum, or a format that bounds it', () => {
    expect(unbounded(routes), 'string fields without a maximum').toEqual([]);
  });

  it('a string field without a maximum, or an opaque value, is named with its route', () => {
    const route = { method: 'post', path: '/v1/notes', body: { name: 'Note', schema: v.object({ title: v.pipe(v.string(), v.maxLength(9)), text: v.string(), meta: v.record(v.string(), v.unknown()) }) } } as unknown as RouteDef;
    expect(unbounded([route])).toEqual(['POST /v1/notes text', 'POST /v1/notes meta: an opaque value, whose strings have no maximum']);
  });

  describe('through the API', () => {
    let h: ApiHarness;
    let ctx: FuzzContext;
    let snapshot: () => Promise<string>;
    let serial = 0;

    beforeAll(async () => {
      h = await apiHarness('sqlite', { rateLimit: false });
      ctx = await createContext(h);
      snapshot = await tableSnapshotter(h);
    }, 60_000);
    afterAll(() => h.close());

    it('a format that bounds a field refuses its valid value made 5000 characters longer', () => {
      for (const route of routes) {
        const bodies = VALID_BODIES[routeKey(route)]?.bodies(ctx, 0) ?? [];
        for (const f of fieldsOf(route).filter((x) => x.kind === 'string' && x.max === undefined && FORMAT_BOUNDED[pathName(x.path)])) {
          const places = bodies.flatMap((body) => placesOf(body, f.path).map((place) => String(valueAt(body, place))));
          expect(places.length, `the valid body of ${routeKey(route)} has no value at ${pathName(f.path)}: add one so that its format is tried`).toBeGreaterThan(0);
          for (const value of places) {
            expect(v.safeParse(f.schema, lengthened(value, value.length + 5000)).success, `${routeKey(route)} ${pathName(f.path)}`).toBe(false);
          }
        }
      }
    });

    /** The body of a case with the field at one of its places set to `length` characters or items. */
    function bodyWith(c: Case, pick: number, length: number): { body: unknown; place: Place; params: Record<string, string | number> } {
      const table = VALID_BODIES[routeKey(c.route)]!;
      const base = table.bodies(ctx, ++serial)[c.body];
      const places = placesOf(base, c.field.path).filter((p) => valueAt(base, p) !== undefined);
      const place = places[pick % places.length]!;
      const current = valueAt(base, place);
      const value = c.field.kind === 'string' ? lengthened(current as string, length) : lengthenedList(current as unknown[], length);
      return { body: withValueAt(base, place, value), place, params: table.params?.(ctx, base) ?? {} };
    }

    function send(route: RouteDef, params: Record<string, string | number>, body: unknown) {
      const path = route.path.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(String(params[name])));
      return h.a[route.method as 'post' | 'put' | 'patch'](`/api${path}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    }

    /** Whether a 400's message refuses `key` for its length. */
    const limitIssue = (message: string, key: string) => message.split('; ').some((m) => m.startsWith(`"${key}" `) && /at most/.test(m));

    const tried = routes.filter((r) => limited(r).length > 0).map((r) => [routeKey(r), r] as const);

    // Every route's refusals first, while the tables hold only the context: each is snapshotted twice.
    describe('one over the maximum, anywhere and by any amount, is a 400 naming the field, and nothing is stored', () => {
      it.each(tried)('%s', async (_name, route) => {
        const cases = byName(casesOf(route, ctx));
        const arb = fc.record({ field: fc.constantFrom(...cases.keys()), pick: fc.nat(), over: fc.integer({ min: 1, max: 5000 }) });
        await fc.assert(
          fc.asyncProperty(arb, async ({ field, pick, over }) => {
            const c = cases.get(field)!;
            const max = c.field.max!;
            const length = c.field.kind === 'string' ? max + over : max + 1 + (over % 20);
            const { body, place, params } = bodyWith(c, pick, length);
            const key = place.join('.');
            const before = await snapshot();
            const res = await send(route, params, body);
            const what = `${routeKey(route)} ${key} at ${length} (max ${max}): ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
            expect(res.status, what).toBe(400);
            expect(res.body, what).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String), validation: { source: 'payload', keys: expect.any(Array) } });
            expect(res.body.validation.keys, what).toContain(key);
            expect(limitIssue(res.body.message, key), what).toBe(true);
            expect(await snapshot(), `${what}: a refused body changes nothing`).toBe(before);
          }),
          // Examples count in numRuns: every field once exactly one over, then random fields, places and lengths.
          { numRuns: cases.size + 10, examples: [...cases.keys()].map((field) => [{ field, pick: 0, over: 1 }]) },
        );
      }, 60_000);
    });

    describe('exactly at the maximum the body is accepted, or refused for another reason than that length', () => {
      it.each(tried)('%s', async (_name, route) => {
        const cases = byName(casesOf(route, ctx));
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...cases.keys()), fc.nat(), async (field, pick) => {
            const c = cases.get(field)!;
            const { body, place, params } = bodyWith(c, pick, c.field.max!);
            const key = place.join('.');
            const res = await send(route, params, body);
            const what = `${routeKey(route)} ${key} at its maximum ${c.field.max}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
            if (!NEVER_VALID_AT_MAXIMUM[pathName(c.field.path)]) expect(res.status, what).toBeLessThan(400);
            expect(res.status, what).toBeLessThan(500);
            expect(res.status === 400 && limitIssue(res.body.message, key), what).toBe(false);
          }),
          { numRuns: cases.size + 5, examples: [...cases.keys()].map((field) => [field, 0]) },
        );
      }, 60_000);
    });
  });
});
