/**
 * The operations of the public API as the router mounts them, and what a test needs to call each
 * one with ids: the kind of resource each path parameter names, and a valid query and body where
 * the route reads one. The lists come from the route table (`apiRoutes`) and from the mounted
 * router itself, so a route added later either finds its kind here or fails the tests that use
 * this file with a message naming it.
 */
import { apiRoutes, openApiDocument, vigilRouter, type RouteDef } from '@vigil/http-express-adapter';
import type { Vigil } from '@vigil/core';

/** The resources a path parameter can name. */
export const KINDS = [
  'check', 'group', 'channel', 'dashboard', 'dashboardKey', 'window', 'incident', 'service', 'statusPage', 'statusPageIncident',
  'subscriber', 'certificate', 'snippet', 'errorGroup', 'result', 'session', 'project',
] as const;
export type Kind = (typeof KINDS)[number];

/** The ids of one account's resources, by kind. */
export type Ids = Record<Kind, string[]>;

/**
 * Which kind of resource each path parameter names, by the route's path. The first row whose
 * path pattern and parameter name match decides.
 */
const PARAM_KINDS: { path: RegExp; param: string; kind: Kind }[] = [
  { path: /^\/v1\/checks\//, param: 'id', kind: 'check' },
  { path: /^\/v1\/checks\/heartbeats\/:checkId\//, param: 'checkId', kind: 'check' },
  { path: /^\/v[12]\/check-groups\//, param: 'id', kind: 'group' },
  { path: /^\/v1\/alert-channels\//, param: 'id', kind: 'channel' },
  { path: /^\/v1\/dashboards\//, param: 'id', kind: 'dashboard' },
  { path: /^\/v1\/dashboards\/:id\/keys\//, param: 'keyId', kind: 'dashboardKey' },
  { path: /^\/v1\/maintenance-windows\//, param: 'id', kind: 'window' },
  { path: /^\/v1\/incidents\//, param: 'id', kind: 'incident' },
  { path: /^\/v1\/status-pages\/services\//, param: 'id', kind: 'service' },
  { path: /^\/v1\/status-pages\/incidents\//, param: 'id', kind: 'statusPageIncident' },
  { path: /^\/v1\/status-pages\//, param: 'statusPageId', kind: 'statusPage' },
  { path: /^\/v1\/status-pages\/:statusPageId\/subscribers\//, param: 'subscriberId', kind: 'subscriber' },
  { path: /^\/v1\/client-certificates\//, param: 'id', kind: 'certificate' },
  { path: /^\/v1\/snippets\//, param: 'id', kind: 'snippet' },
  { path: /^\/v1\/error-groups\/checks\//, param: 'checkId', kind: 'check' },
  { path: /^\/v1\/error-groups\//, param: 'id', kind: 'errorGroup' },
  { path: /^\/v1\/test-session-error-groups\/projects\//, param: 'projectId', kind: 'project' },
  { path: /^\/v1\/check-results\//, param: 'checkId', kind: 'check' },
  { path: /^\/v1\/check-results\//, param: 'checkResultId', kind: 'result' },
  { path: /^\/v1\/check-statuses\//, param: 'checkId', kind: 'check' },
  { path: /^\/v1\/analytics\/(api|tcp|dns|url|icmp|multistep|playwright)-checks\//, param: 'id', kind: 'check' },
  { path: /^\/v1\/check-sessions\//, param: 'checkSessionId', kind: 'session' },
];

/**
 * Labels rather than stored resources: a project id is whatever a trigger named, so another
 * account's project must answer exactly what a project nobody used answers (no groups), not 404.
 */
export const LABEL_KINDS: ReadonlySet<Kind> = new Set<Kind>(['project']);

/** A valid query and body per operation that reads one, so that only the ids decide the answer. */
type Input = { query?: string; body?: (own: Ids) => unknown };
const INPUTS: Record<string, Input> = {
  createTcpCheck: { body: () => ({ name: 'probe', request: { hostname: '127.0.0.1', port: 1 } }) },
  updateTcpCheck: { body: () => ({ name: 'renamed', request: { hostname: '127.0.0.1', port: 1 } }) },
  createApiCheck: { body: () => ({ name: 'probe', request: { url: 'http://127.0.0.1:1/' } }) },
  updateApiCheck: { body: () => ({ name: 'renamed', request: { url: 'http://127.0.0.1:1/' } }) },
  createBrowserCheck: { body: () => ({ name: 'probe', script: 'await page.goto("http://127.0.0.1:1/")' }) },
  updateBrowserCheck: { body: () => ({ name: 'renamed', script: 'await page.goto("http://127.0.0.1:1/")' }) },
  createHeartbeatCheck: { body: () => ({ name: 'probe', heartbeat: { period: 1, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } }) },
  updateHeartbeatCheck: { body: () => ({ name: 'renamed', heartbeat: { period: 2, periodUnit: 'hours', grace: 5, graceUnit: 'minutes' } }) },
  createDnsCheck: { body: () => ({ name: 'probe', request: { query: 'probe.example.com', nameServer: '127.0.0.1', port: 1 } }) },
  updateDnsCheck: { body: () => ({ name: 'renamed', request: { query: 'probe.example.com', nameServer: '127.0.0.1', port: 1 } }) },
  createUrlCheck: { body: () => ({ name: 'probe', request: { url: 'http://127.0.0.1:1/' } }) },
  updateUrlCheck: { body: () => ({ name: 'renamed', request: { url: 'http://127.0.0.1:1/' } }) },
  createIcmpCheck: { body: () => ({ name: 'probe', request: { hostname: '127.0.0.1', pingCount: 1 } }) },
  updateIcmpCheck: { body: () => ({ name: 'renamed', request: { hostname: '127.0.0.1', pingCount: 1 } }) },
  createMultiStepCheck: { body: () => ({ name: 'probe', script: "await step('home', () => request.get('http://127.0.0.1:1/'));" }) },
  updateMultiStepCheck: { body: () => ({ name: 'renamed', script: "await step('home', () => request.get('http://127.0.0.1:1/'));" }) },
  createPlaywrightCheck: { body: () => ({ name: 'probe', files: { 'tests/home.spec.ts': "import { test } from '@playwright/test';\ntest('home', async ({ page }) => { await page.goto('http://127.0.0.1:1/'); });\n" } }) },
  updatePlaywrightCheck: { body: () => ({ name: 'renamed', files: { 'tests/home.spec.ts': "import { test } from '@playwright/test';\ntest('home', async () => {});\n" } }) },
  createCheckGroup: { body: () => ({ name: 'probe' }) },
  updateCheckGroup: { body: () => ({ name: 'renamed', muted: true }) },
  createAlertChannel: { body: () => ({ type: 'EMAIL', config: { address: 'probe@example.com' } }) },
  updateAlertChannel: { body: () => ({ sendDegraded: true, sendRecovery: false }) },
  // The asker's own check: only the channel in the path is foreign.
  updateAlertChannelSubscriptions: { body: (own) => [{ checkId: own.check[0], activated: true }] },
  listAlertChannelDeliveries: { query: 'limit=5' },
  createDashboard: { body: () => ({ header: 'probe' }) },
  updateDashboard: { body: () => ({ header: 'renamed' }) },
  createMaintenanceWindow: { body: () => ({ name: 'probe', startsAt: '2030-01-01T00:00:00.000Z', endsAt: '2030-01-01T01:00:00.000Z', repeatUnit: 'DAY' }) },
  updateMaintenanceWindow: { body: () => ({ name: 'renamed', startsAt: '2030-01-01T00:00:00.000Z', endsAt: '2030-01-01T01:00:00.000Z', repeatUnit: 'DAY' }) },
  createIncident: { body: (own) => ({ name: 'probe', dashboardId: Number(own.dashboard[0]), incidentUpdates: [{ status: 'INVESTIGATING', description: 'probe' }] }) },
  updateIncident: { body: () => ({ name: 'renamed', impact: 'MAJOR' }) },
  createIncidentUpdate: { body: () => ({ status: 'RESOLVED', description: 'closed by someone else' }) },
  createStatusPageService: { body: () => ({ name: 'probe' }) },
  updateStatusPageService: { body: () => ({ name: 'renamed' }) },
  createStatusPageIncident: { body: (own) => ({ name: 'probe', serviceIds: [own.service[0]], incidentUpdate: { description: 'probe' } }) },
  createStatusPageIncidentUpdate: { body: () => ({ description: 'closed by someone else', status: 'RESOLVED' }) },
  createStatusPage: { body: () => ({ name: 'probe', url: `probe-${Date.now()}` }) },
  updateStatusPage: { body: () => ({ name: 'renamed' }) },
  // Only sent without credentials (no route takes ids with it): the shape is enough.
  createClientCertificate: { body: () => ({ host: 'probe.internal', cert: '-----BEGIN CERTIFICATE-----' }) },
  createSnippet: { body: () => ({ name: 'probe', script: 'request.headers["X-Probe"] = "1";' }) },
  updateSnippet: { body: () => ({ name: 'renamed', script: 'request.headers["X-Probe"] = "2";' }) },
  updateErrorGroup: { body: () => ({ archivedUntilNextEvent: true }) },
  listCheckResults: { query: 'limit=5' },
  getReporting: { query: 'quickRange=last7Days' },
  getApiCheckAnalytics: { query: 'metrics=responseTime,availability&quickRange=last7Days' },
  getTcpCheckAnalytics: { query: 'metrics=total,availability&quickRange=last7Days' },
  getDnsCheckAnalytics: { query: 'metrics=responseTime,availability&quickRange=last7Days' },
  getIcmpCheckAnalytics: { query: 'metrics=latencyAvg,packetLoss_max,availability&quickRange=last7Days' },
  getMultiStepCheckAnalytics: { query: 'metrics=responseTime,step1_p95,availability&quickRange=last7Days' },
  getPlaywrightCheckAnalytics: { query: 'metrics=responseTime_max,availability&quickRange=last7Days' },
  getUrlCheckAnalytics: { query: 'metrics=responseTime,availability&quickRange=last7Days' },
  getHeartbeatAvailability: {},
  triggerCheckSessions: { body: (own) => ({ target: { checkId: [own.check[0]] } }) },
  awaitCheckSession: { query: 'maxWaitSeconds=1' },
  cancelCheckSession: { body: () => ({}) },
};

/** The routes of the router a Vigil instance mounts: the table's, with the check types plugins added. */
export function mountedRoutes(vigil: Vigil): readonly RouteDef[] {
  return apiRoutes([...vigil.checks.pluginCheckTypes.values()]);
}

/** The operations the router answers without an API key, on purpose. */
const PUBLIC_ROUTES = new Set(['GET /openapi.json', 'GET /ping/:token', 'POST /ping/:token']);

/**
 * Routes the mounted Express router serves that are neither in the route table nor public on
 * purpose (a route added to the router by hand would skip the table's authentication).
 */
export function unlistedRouterRoutes(vigil: Vigil): string[] {
  // Express's own layer list: each route layer names its path and methods.
  const layers = (vigilRouter(vigil, { rateLimit: false }) as unknown as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] }).stack;
  const listed = new Set(mountedRoutes(vigil).map((r) => `${r.method.toUpperCase()} ${r.path}`));
  const mounted = layers.flatMap(({ route }) => (route ? Object.keys(route.methods).map((m) => `${m.toUpperCase()} ${route.path}`) : []));
  if (mounted.length === 0) throw new Error('could not read the routes of the mounted router');
  return mounted.filter((r) => !listed.has(r) && !PUBLIC_ROUTES.has(r));
}

export const routeName = (route: RouteDef) => `${route.method.toUpperCase()} ${route.path}`;

/** The kind of each path parameter of a route; throws naming the route when one is not covered. */
export function paramKinds(route: RouteDef): Record<string, Kind> {
  const out: Record<string, Kind> = {};
  for (const param of Object.keys(route.params ?? {})) {
    const row = PARAM_KINDS.find((p) => p.param === param && p.path.test(route.path));
    if (!row) throw new Error(`${routeName(route)}: the reliability tests do not know which resource :${param} names; add it to PARAM_KINDS in test/reliability/support/routes.ts`);
    out[param] = row.kind;
  }
  // Parameters Express sees in the path but the route does not declare would be left unfilled.
  for (const [, param] of route.path.matchAll(/:(\w+)/g)) {
    if (!(param! in out)) throw new Error(`${routeName(route)}: :${param} is in the path but not in the route's params`);
  }
  return out;
}

let requiredQueries: Map<string, string[]> | undefined;
/** Query parameters the OpenAPI document marks required, by operation id. */
function requiredQuery(operationId: string): string[] {
  if (!requiredQueries) {
    requiredQueries = new Map();
    const doc = openApiDocument() as { paths: Record<string, Record<string, { operationId: string; parameters?: { in: string; name: string; required: boolean }[] }>> };
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        requiredQueries.set(op.operationId, (op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name));
      }
    }
  }
  return requiredQueries.get(operationId) ?? [];
}

/**
 * The routes of `routes` that this file cannot call properly, each with the reason: a path
 * parameter of unknown kind, or a body or required query without a valid value in INPUTS.
 */
export function uncovered(routes: readonly RouteDef[]): string[] {
  const out: string[] = [];
  for (const route of routes) {
    try {
      paramKinds(route);
    } catch (err) {
      out.push((err as Error).message);
    }
    const input = INPUTS[route.operationId];
    if (route.body && !input?.body) out.push(`${routeName(route)} (${route.operationId}): no valid body in INPUTS of test/reliability/support/routes.ts`);
    const missing = requiredQuery(route.operationId).filter((q) => !new URLSearchParams(input?.query ?? '').has(q));
    if (missing.length) out.push(`${routeName(route)} (${route.operationId}): no value for the required query ${missing.join(', ')} in INPUTS`);
  }
  return out;
}

export interface Call {
  route: RouteDef;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The path under /api, ids filled in, with the route's query. */
  path: string;
  body: unknown;
  /** The kind of every id in the path, and whose it is. */
  filled: { param: string; kind: Kind; id: string; owner: 'own' | 'other' }[];
}

const fill = (path: string, values: Record<string, string>) => path.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(values[name]!));

function withQuery(route: RouteDef, path: string): string {
  const query = INPUTS[route.operationId]?.query;
  return query ? `${path}?${query}` : path;
}

/**
 * The calls of a route with path parameters that name at least one of `other`'s resources: each
 * parameter takes every id of its kind of either account (so `/v1/dashboards/{own}/keys/{other}`
 * is tried as well as `/{other}/keys/{other}`), except the combinations of own ids only. The body
 * is valid and names only `own`'s resources.
 */
export function foreignCalls(route: RouteDef, own: Ids, other: Ids): Call[] {
  const kinds = Object.entries(paramKinds(route));
  if (kinds.length === 0) return [];
  let combos: Call['filled'][] = [[]];
  for (const [param, kind] of kinds) {
    const options = [
      ...other[kind].map((id) => ({ param, kind, id, owner: 'other' as const })),
      ...own[kind].map((id) => ({ param, kind, id, owner: 'own' as const })),
    ];
    combos = combos.flatMap((c) => options.map((o) => [...c, o]));
  }
  return combos
    .filter((c) => c.some((f) => f.owner === 'other'))
    .map((filled) => ({
      route,
      method: route.method,
      path: withQuery(route, fill(route.path, Object.fromEntries(filled.map((f) => [f.param, f.id])))),
      body: INPUTS[route.operationId]?.body?.(own),
      filled,
    }));
}

/** The calls of a GET route with the asking account's own ids (every combination; a route without parameters once). */
export function ownReads(route: RouteDef, own: Ids): Call[] {
  if (route.method !== 'get') return [];
  let combos: Call['filled'][] = [[]];
  for (const [param, kind] of Object.entries(paramKinds(route))) {
    combos = combos.flatMap((c) => own[kind].map((id) => [...c, { param, kind, id, owner: 'own' as const }]));
  }
  return combos.map((filled) => ({
    route,
    method: route.method,
    path: withQuery(route, fill(route.path, Object.fromEntries(filled.map((f) => [f.param, f.id])))),
    body: undefined,
    filled,
  }));
}

/** One call of any route, ids from `ids` (the first of each kind), with a valid body: for the credential checks. */
export function anyCall(route: RouteDef, ids: Ids, bodyIds: Ids): Call {
  const filled = Object.entries(paramKinds(route)).map(([param, kind]) => ({ param, kind, id: ids[kind][0]!, owner: 'other' as const }));
  return {
    route,
    method: route.method,
    path: withQuery(route, fill(route.path, Object.fromEntries(filled.map((f) => [f.param, f.id])))),
    body: INPUTS[route.operationId]?.body?.(bodyIds),
    filled,
  };
}

/** An id of a kind that no account has, in the same format as `example`. */
export function unknownId(kind: Kind, example: string): string {
  if (/^\d+$/.test(example)) return String(2_000_000_000);
  if (/^[0-9a-f-]{36}$/i.test(example)) return '00000000-0000-4000-8000-00000000f00d';
  return `${kind}-that-nobody-has`;
}
