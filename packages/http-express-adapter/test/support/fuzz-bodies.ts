// What the property tests of body limits start from: a walk of a valibot body schema for its
// string and array fields with their maxima, the places a field names in a body, a valid body of
// every write route (one per variant), the resources their paths name, and a snapshot of every
// vigil_ table to prove a refused request stored nothing.
import { execFileSync } from 'node:child_process';
import type { Knex } from 'knex';
import type * as v from 'valibot';
import { THEME_COLOR_FIELDS } from '@vigil/core';
import type { ApiHarness } from './harness.js';

/** A step of a field path: an object key, or any item of an array. */
export type PathStep = string | { item: true };

/** A variant option on the way to a field: the object at `at` has `key` set to `value`. */
export interface VariantChoice {
  at: string[];
  key: string;
  value: unknown;
}

export interface SchemaField {
  /** `opaque`: a record, unknown or custom value whose strings the walk cannot see. */
  kind: 'string' | 'array' | 'opaque';
  path: PathStep[];
  /** The smallest maxLength of the field's pipe; undefined when it has none. */
  max: number | undefined;
  variants: VariantChoice[];
  schema: v.GenericSchema;
}

type Node = {
  type: string;
  kind?: string;
  pipe?: Node[];
  entries?: Record<string, Node>;
  wrapped?: Node;
  item?: Node;
  options?: Node[];
  key?: string;
  literal?: unknown;
  getter?: (input: unknown) => Node;
  requirement?: unknown;
};

/** Every action of a schema's pipe, through pipes of pipes. */
function actionsOf(node: Node): Node[] {
  if (!node.pipe) return [];
  const [root, ...rest] = node.pipe;
  return [...(root && root !== node ? actionsOf(root) : []), ...rest];
}

/** The smallest `maxLength` requirement of a schema's pipe. */
export function maxLengthOf(schema: v.GenericSchema): number | undefined {
  const maxima = actionsOf(schema as unknown as Node)
    .filter((a) => a.kind === 'validation' && a.type === 'max_length')
    .map((a) => a.requirement as number);
  return maxima.length ? Math.min(...maxima) : undefined;
}

const WRAPPERS = new Set(['optional', 'nullable', 'nullish', 'non_optional', 'non_nullable', 'non_nullish', 'undefinedable', 'exact_optional']);
const OBJECTS = new Set(['object', 'strict_object', 'loose_object']);
const OPAQUE = new Set(['record', 'unknown', 'any', 'custom', 'tuple', 'strict_tuple', 'loose_tuple', 'object_with_rest', 'map', 'set']);

/**
 * Every string, array and opaque field of `schema` (through entries, pipes, optional/nullable
 * wrappers, unions, variants, arrays and nested objects), with its path and maximum.
 */
export function schemaFields(schema: v.GenericSchema): SchemaField[] {
  const out: SchemaField[] = [];
  const walk = (node: Node, path: PathStep[], variants: VariantChoice[]): void => {
    const field = (kind: SchemaField['kind'], max = maxLengthOf(node as unknown as v.GenericSchema)) =>
      out.push({ kind, path, max, variants, schema: node as unknown as v.GenericSchema });
    if (WRAPPERS.has(node.type)) return walk(node.wrapped!, path, variants);
    if (node.type === 'lazy') return walk(node.getter!(undefined), path, variants);
    if (node.type === 'string') return void field('string');
    if (OPAQUE.has(node.type)) return void field('opaque', undefined);
    if (node.type === 'array') {
      field('array');
      return walk(node.item!, [...path, { item: true }], variants);
    }
    if (OBJECTS.has(node.type)) {
      for (const [key, entry] of Object.entries(node.entries!)) walk(entry, [...path, key], variants);
      return;
    }
    if (node.type === 'variant') {
      const at = path.filter((s): s is string => typeof s === 'string');
      for (const option of node.options!) {
        const tag = option.entries?.[node.key!];
        walk(option, path, [...variants, { at, key: node.key!, value: tag?.literal }]);
      }
      return;
    }
    if (node.type === 'union' || node.type === 'intersect') for (const option of node.options!) walk(option, path, variants);
  };
  walk(schema as unknown as Node, [], []);
  return out;
}

/** `request.headers.[].key` */
export function pathName(path: PathStep[]): string {
  return path.map((s) => (typeof s === 'string' ? s : '[]')).join('.');
}

/** A field's place in one body: keys and array indexes. */
export type Place = (string | number)[];

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function valueAt(body: unknown, place: Place): unknown {
  return place.reduce<unknown>((cur, step) => (cur as Record<string | number, unknown> | null | undefined)?.[step], body);
}

/** The places in `body` that `path` names and that hold a value (each array step over the items present). */
export function placesOf(body: unknown, path: PathStep[]): Place[] {
  const expand = (cur: unknown, i: number): Place[] => {
    if (i === path.length) return cur === undefined || cur === null ? [] : [[]];
    const step = path[i]!;
    if (typeof step === 'string') return isObject(cur) ? expand(cur[step], i + 1).map((p) => [step, ...p]) : [];
    return Array.isArray(cur) ? cur.flatMap((item, j) => expand(item, i + 1).map((p) => [j, ...p])) : [];
  };
  return expand(body, 0);
}

/** A copy of `body` with `value` at `place`. */
export function withValueAt(body: unknown, place: Place, value: unknown): unknown {
  const copy = structuredClone(body);
  const parent = valueAt(copy, place.slice(0, -1)) as Record<string | number, unknown>;
  parent[place.at(-1)!] = value;
  return copy;
}

/**
 * `base` made `length` characters long and still what it was: an address grows before its @, anything
 * else (a URL ending in /, a name, a PEM block, code) grows at its end.
 */
export function lengthened(base: string, length: number): string {
  const pad = 'a'.repeat(Math.max(0, length - base.length));
  return base.includes('@') && !base.includes('://') ? pad + base : base + pad;
}

/** `length` items made from the items of `base`, in turn. */
export function lengthenedList(base: unknown[], length: number): unknown[] {
  return Array.from({ length }, (_, i) => structuredClone(base[i % base.length]));
}

/** A snapshot of every vigil_ table of a SQLite harness but API keys (authentication writes lastUsedAt). */
export async function tableSnapshotter(h: ApiHarness): Promise<() => Promise<string>> {
  const knex = (h.vigil.storage as unknown as { knex: Knex }).knex;
  const rows = (await knex.raw("select name from sqlite_master where type = 'table' and name like 'vigil_%'")) as { name: string }[];
  const tables = rows.map((t) => t.name).filter((n) => n !== 'vigil_api_keys' && n !== 'vigil_migrations');
  return async () => {
    const parts: unknown[] = [];
    for (const t of tables) parts.push(await knex(t).select('*'));
    return JSON.stringify(parts);
  };
}

/** A self-signed certificate and its key, as openssl makes them. */
export function selfSignedPem(cn: string): { cert: string; key: string } {
  const out = execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-subj', `/CN=${cn}`, '-days', '2', '-nodes', '-keyout', '-', '-out', '-'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const block = (label: RegExp) => `${out.match(label)![0]}\n`;
  return { cert: block(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/), key: block(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/) };
}

/** The resources the valid bodies and the paths of the write routes name. */
export interface FuzzContext {
  serviceId: string;
  checks: Record<'tcp' | 'api' | 'browser' | 'heartbeat' | 'dns' | 'url' | 'icmp' | 'multistep' | 'playwright', string>;
  channels: Record<string, number>;
  groupId: number;
  dashboardId: number;
  windowId: number;
  incidentId: string;
  pageId: string;
  pageIncidentId: string;
  snippetId: number;
  pem: { cert: string; key: string };
}

type Body = Record<string, unknown>;

export interface RouteBodies {
  /** Valid bodies, one per variant of the schema; `n` keeps values that must be unique unique. */
  bodies: (ctx: FuzzContext, n: number) => unknown[];
  /** The path parameters for a body. */
  params?: (ctx: FuzzContext, body: unknown) => Record<string, string | number>;
}

const TAGS = ['prod', 'api', 'edge'];
const assertion = (source: string) => ({ source, comparison: 'CONTAINS', target: '200', property: 'status', regex: '2..' });
const keyValues = [{ key: 'Accept', value: 'application/json' }, { key: 'X-Trace', value: 'on' }];

const checkCommon = (ctx: FuzzContext, name: string): Body => ({
  name,
  tags: TAGS,
  description: 'Watches the service',
  privateLocations: ['dc-one', 'dc-two'],
  retryStrategy: { type: 'FIXED', onlyOn: ['NETWORK_ERROR'] },
  triggerIncident: { serviceId: ctx.serviceId, name: 'Service down', description: 'The service does not answer' },
});

const CHECKS: Record<keyof FuzzContext['checks'], (ctx: FuzzContext) => Body> = {
  tcp: (ctx) => ({
    ...checkCommon(ctx, 'orders-db'),
    request: { hostname: 'db.internal', port: 5432, data: 'PING', assertions: [assertion('RESPONSE_DATA'), assertion('RESPONSE_DATA')] },
  }),
  api: (ctx) => ({
    ...checkCommon(ctx, 'orders API'),
    request: {
      url: 'https://api.example.com/orders/', headers: keyValues, queryParameters: keyValues, body: '{"q":1}', bodyType: 'JSON',
      basicAuth: { username: 'ops', password: 'secret' }, assertions: [assertion('TEXT_BODY')],
    },
  }),
  browser: (ctx) => ({
    ...checkCommon(ctx, 'home page'),
    script: "await page.goto('https://example.com')",
    scriptPath: 'tests/home.spec.ts',
    dependencies: [{ path: 'lib/util.ts', content: 'export const x = 1;' }, { path: 'lib/data.json', content: '{}' }],
    sslCheckDomain: 'example.com',
    environmentVariables: [{ key: 'BASE_URL', value: 'https://example.com/' }],
  }),
  heartbeat: (ctx) => ({ ...checkCommon(ctx, 'nightly backup'), heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'hours' } }),
  dns: (ctx) => ({
    ...checkCommon(ctx, 'shop mail'),
    request: {
      query: 'shop.example.com', recordType: 'MX', nameServer: '9.9.9.9', port: 53, protocol: 'TCP',
      // Text targets only: a response code's or a count's target is bounded by what it must be.
      assertions: [{ source: 'TEXT_ANSWER', comparison: 'CONTAINS', target: 'mx1', regex: 'mx.' }, { source: 'TEXT_ANSWER', comparison: 'NOT_CONTAINS', target: 'mx9' }],
    },
  }),
  url: (ctx) => ({
    ...checkCommon(ctx, 'home page'),
    request: { url: 'https://shop.example.com/health', method: 'HEAD', followRedirects: false, skipSSL: true, ipFamily: 'IPv6', expectedStatus: '200-399' },
  }),
  multistep: (ctx) => ({
    ...checkCommon(ctx, 'login flow'),
    script: "await step('home', async () => {\n  expect((await request.get('https://example.com/')).status()).toBe(200);\n});",
    scriptPath: 'checks/login.flow.js',
    environmentVariables: [{ key: 'BASE_URL', value: 'https://example.com/' }],
    degradedResponseTime: 15_000,
    maxResponseTime: 45_000,
  }),
  playwright: (ctx) => ({
    ...checkCommon(ctx, 'shop suite'),
    files: {
      'playwright.config.ts': "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ retries: 1 });\n",
      'tests/home.spec.ts': "import { expect, test } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('https://example.com/'); });\n",
      'tests/fixtures/user.json': '{"name":"ops"}',
    },
    projects: ['chromium'], grep: '@smoke', grepInvert: '@slow', globalTimeout: 60_000,
    environmentVariables: [{ key: 'BASE_URL', value: 'https://example.com/' }],
  }),
  icmp: (ctx) => ({
    ...checkCommon(ctx, 'edge router'),
    degradedPacketLossThreshold: 5,
    maxPacketLossThreshold: 50,
    request: {
      hostname: 'edge.example.com', ipFamily: 'IPv6', pingCount: 5, timeout: 1500,
      // Numeric targets only: an assertion's property and target are bounded by what they must be.
      assertions: [{ source: 'LATENCY', property: 'max', comparison: 'LESS_THAN', target: '250' }, { source: 'PACKET_LOSS', comparison: 'EQUALS', target: '0' }],
    },
  }),
};

const CHANNEL_CONFIGS: Record<string, Body> = {
  EMAIL: { address: 'ops@example.com' },
  WEBHOOK: {
    name: 'hook', url: 'https://hooks.example.com/', method: 'POST', headers: keyValues, queryParameters: keyValues,
    template: '{"text": "{{ALERT_TITLE}}"}', webhookSecret: 'whsec',
  },
  SMS: { number: '+14155550100', name: 'on call' },
  CALL: { number: '+14155550100', name: 'on call' },
  CHAT: { url: 'https://chat.example.com/hooks/', channel: '#ops' },
  CHAT_APP: { url: 'https://chat-app.example.com/hooks/' },
  PAGING_A: { serviceKey: 'service-key', account: 'acme', serviceName: 'api' },
  PAGING_B: { name: 'on call', apiKey: 'api-key', region: 'EU' },
};

const group = (): Body => ({
  name: 'core',
  tags: TAGS,
  apiCheckDefaults: { url: 'https://api.example.com/', headers: keyValues, queryParameters: keyValues, assertions: [assertion('STATUS_CODE')], basicAuth: { username: 'ops', password: 'secret' } },
  browserCheckDefaults: 'export default {}',
  environmentVariables: [{ key: 'REGION', value: 'eu' }],
  localSetupScript: 'request.headers.x = 1;',
  localTearDownScript: 'console.log(response.statusCode);',
  privateLocations: ['dc-one', 'dc-two'],
  retryStrategy: { type: 'FIXED', onlyOn: ['NETWORK_ERROR'] },
});

const dashboard = (n: number): Body => ({
  header: 'Acme status', customUrl: `acme-${n}`, customDomain: `status-${n}.acme.example`, logo: 'https://cdn.example.com/logo/',
  favicon: 'https://cdn.example.com/icon/', link: 'https://acme.example/', description: 'Our services', tags: TAGS, customCSS: 'body { color: red; }',
});

const window = (): Body => ({
  name: 'deploy', startsAt: '2026-06-01T00:00:00Z', endsAt: '2026-06-01T01:00:00Z', repeatUnit: 'WEEK', repeatEndsAt: '2026-12-01T00:00:00Z',
  tags: TAGS, silenceAlertsTags: TAGS, timezone: 'Europe/Berlin',
});

/** Every colour of a theme set to `color`. */
const theme = (color: string): Body => Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, color]));

const page = (ctx: FuzzContext, n: number): Body => ({
  name: 'Public', url: `public-${n}`, description: 'How we are doing', customDomain: `page-${n}.acme.example`,
  themeColors: { light: theme('#ffffff'), dark: theme('rgb(0, 0, 0)') },
  logo: 'https://cdn.example.com/logo/', redirectTo: 'https://acme.example/', favicon: 'https://cdn.example.com/icon/',
  cards: [{ name: 'Core', serviceIds: [ctx.serviceId] }, { name: 'Edge', serviceIds: [ctx.serviceId] }],
});

const incident = (): Body => ({ name: 'API outage', impact: 'MAJOR', startedAt: '2026-05-01T11:00:00Z', stoppedAt: '2026-05-01T11:30:00Z' });

const pageIncidentUpdate = (): Body => ({ description: 'Looking into it', status: 'INVESTIGATING', publicIncidentUpdateDate: '2026-05-01T11:00:00Z' });

const channelId = (ctx: FuzzContext, body: unknown) => ctx.channels[(body as { type: string }).type]!;

/** A valid body of every write route that has one, keyed `METHOD path`, made from the spec's examples. */
export const VALID_BODIES: Record<string, RouteBodies> = {
  'POST /v1/checks/tcp': { bodies: (ctx) => [CHECKS.tcp(ctx)] },
  'PUT /v1/checks/tcp/:id': { bodies: (ctx) => [CHECKS.tcp(ctx)], params: (ctx) => ({ id: ctx.checks.tcp }) },
  'POST /v1/checks/api': { bodies: (ctx) => [CHECKS.api(ctx)] },
  'PUT /v1/checks/api/:id': { bodies: (ctx) => [CHECKS.api(ctx)], params: (ctx) => ({ id: ctx.checks.api }) },
  'POST /v1/checks/browser': { bodies: (ctx) => [CHECKS.browser(ctx)] },
  'PUT /v1/checks/browser/:id': { bodies: (ctx) => [CHECKS.browser(ctx)], params: (ctx) => ({ id: ctx.checks.browser }) },
  'POST /v1/checks/heartbeat': { bodies: (ctx) => [CHECKS.heartbeat(ctx)] },
  'PUT /v1/checks/heartbeat/:id': { bodies: (ctx) => [CHECKS.heartbeat(ctx)], params: (ctx) => ({ id: ctx.checks.heartbeat }) },
  'POST /v1/checks/dns': { bodies: (ctx) => [CHECKS.dns(ctx)] },
  'PUT /v1/checks/dns/:id': { bodies: (ctx) => [CHECKS.dns(ctx)], params: (ctx) => ({ id: ctx.checks.dns }) },
  'POST /v1/checks/url': { bodies: (ctx) => [CHECKS.url(ctx)] },
  'PUT /v1/checks/url/:id': { bodies: (ctx) => [CHECKS.url(ctx)], params: (ctx) => ({ id: ctx.checks.url }) },
  'POST /v1/checks/icmp': { bodies: (ctx) => [CHECKS.icmp(ctx)] },
  'POST /v1/checks/playwright': { bodies: (ctx) => [CHECKS.playwright(ctx)] },
  'PUT /v1/checks/playwright/:id': { bodies: (ctx) => [CHECKS.playwright(ctx)], params: (ctx) => ({ id: ctx.checks.playwright }) },
  'POST /v1/checks/multistep': { bodies: (ctx) => [CHECKS.multistep(ctx)] },
  'PUT /v1/checks/multistep/:id': { bodies: (ctx) => [CHECKS.multistep(ctx)], params: (ctx) => ({ id: ctx.checks.multistep }) },
  'PUT /v1/checks/icmp/:id': { bodies: (ctx) => [CHECKS.icmp(ctx)], params: (ctx) => ({ id: ctx.checks.icmp }) },
  'POST /v2/check-groups': { bodies: () => [group()] },
  'PUT /v2/check-groups/:id': { bodies: () => [group()], params: (ctx) => ({ id: ctx.groupId }) },
  'POST /v1/alert-channels': { bodies: () => Object.entries(CHANNEL_CONFIGS).map(([type, config]) => ({ type, config })) },
  'PUT /v1/alert-channels/:id': {
    bodies: () => Object.entries(CHANNEL_CONFIGS).map(([type, config]) => ({ type, config })),
    params: (ctx, body) => ({ id: channelId(ctx, body) }),
  },
  'PUT /v1/alert-channels/:id/subscriptions': {
    bodies: (ctx) => [[{ checkId: ctx.checks.tcp }, { groupId: ctx.groupId }, { checkId: ctx.checks.api, activated: false }]],
    params: (ctx) => ({ id: ctx.channels.EMAIL! }),
  },
  'POST /v1/dashboards': { bodies: (_ctx, n) => [dashboard(n)] },
  'PUT /v1/dashboards/:id': { bodies: (_ctx, n) => [dashboard(n)], params: (ctx) => ({ id: ctx.dashboardId }) },
  'POST /v1/maintenance-windows': { bodies: () => [window()] },
  'PUT /v1/maintenance-windows/:id': { bodies: () => [window()], params: (ctx) => ({ id: ctx.windowId }) },
  'POST /v1/incidents': {
    bodies: (ctx) => [{ ...incident(), dashboardId: ctx.dashboardId, incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking into errors' }] }],
  },
  'PUT /v1/incidents/:id': { bodies: () => [incident()], params: (ctx) => ({ id: ctx.incidentId }) },
  'POST /v1/incidents/:id/updates': { bodies: () => [{ status: 'IDENTIFIED', description: 'Found it' }], params: (ctx) => ({ id: ctx.incidentId }) },
  'POST /v1/status-pages/services': { bodies: (_ctx, n) => [{ name: `API ${n}` }] },
  'PUT /v1/status-pages/services/:id': { bodies: (_ctx, n) => [{ name: `API ${n}` }], params: (ctx) => ({ id: ctx.serviceId }) },
  'POST /v1/status-pages/incidents': { bodies: (ctx) => [{ name: 'Slow API', serviceIds: [ctx.serviceId], incidentUpdate: pageIncidentUpdate() }] },
  'POST /v1/status-pages/incidents/:id/updates': { bodies: () => [pageIncidentUpdate()], params: (ctx) => ({ id: ctx.pageIncidentId }) },
  'POST /v1/status-pages': { bodies: (ctx, n) => [page(ctx, n)] },
  'PUT /v1/status-pages/:statusPageId': { bodies: (ctx, n) => [page(ctx, n)], params: (ctx) => ({ statusPageId: ctx.pageId }) },
  'POST /v1/client-certificates': { bodies: (ctx, n) => [{ host: `api-${n}.internal`, cert: ctx.pem.cert, ca: ctx.pem.cert, key: ctx.pem.key, passphrase: 'unused' }] },
  'POST /v1/snippets': { bodies: () => [{ name: 'setup', script: 'request.headers.x = 1;' }] },
  'PUT /v1/snippets/:id': { bodies: () => [{ name: 'setup', script: 'request.headers.x = 1;' }], params: (ctx) => ({ id: ctx.snippetId }) },
  'POST /v1/check-sessions/trigger': {
    bodies: (ctx) => [{ target: { checkId: [ctx.checks.tcp, ctx.checks.api], matchTags: [['prod', 'api'], ['edge']] }, projectId: 'web-app', environment: 'staging' }],
  },
  'POST /v1/check-sessions/:checkSessionId/cancel': {
    bodies: () => [{ sequenceId: ['00000000-0000-4000-8000-000000000000'] }],
    params: () => ({ checkSessionId: '00000000-0000-4000-8000-000000000000' }),
  },
};

/** Creates, through the API, every resource the valid bodies and paths name (each from its valid body). */
export async function createContext(h: ApiHarness): Promise<FuzzContext> {
  const ctx = { checks: {}, channels: {}, pem: selfSignedPem('api.internal') } as FuzzContext;
  const create = async (key: string, body?: unknown, path = key.split(' ')[1]!) => {
    const res = await h.a.post(`/api${path}`, body ?? VALID_BODIES[key]!.bodies(ctx, 0)[0]);
    if (res.status !== 201) throw new Error(`${key}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: never };
  };
  ctx.serviceId = (await create('POST /v1/status-pages/services')).id;
  for (const body of VALID_BODIES['POST /v1/alert-channels']!.bodies(ctx, 0)) ctx.channels[(body as Body).type as string] = (await create('POST /v1/alert-channels', body)).id;
  for (const type of Object.keys(CHECKS) as (keyof FuzzContext['checks'])[]) ctx.checks[type] = (await create(`POST /v1/checks/${type}`)).id;
  ctx.groupId = (await create('POST /v2/check-groups')).id;
  ctx.dashboardId = (await create('POST /v1/dashboards')).id;
  ctx.windowId = (await create('POST /v1/maintenance-windows')).id;
  ctx.incidentId = (await create('POST /v1/incidents')).id;
  ctx.pageId = (await create('POST /v1/status-pages')).id;
  ctx.pageIncidentId = (await create('POST /v1/status-pages/incidents')).id;
  ctx.snippetId = (await create('POST /v1/snippets')).id;
  await create('POST /v1/client-certificates');
  return ctx;
}
