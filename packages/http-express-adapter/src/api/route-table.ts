// The route table of the public API: every operation as data (method, path, schemas, handler), in
// the order a router matches them. Nothing here knows a web framework: the Express router mounts
// these routes, and the OpenAPI document is written from them.
import type { CheckTypeDefinition } from '@vigil/core';
import type { RouteDef } from './route-def.js';
import { checkRoutes, checkTypeRoutes, groupRoutes, unservedAgentic } from './routes-checks.js';
import {
  certificateRoutes,
  channelRoutes,
  dashboardRoutes,
  incidentRoutes,
  maintenanceRoutes,
  snippetRoutes,
  statusPageRoutes,
} from './routes-resources.js';
import { errorGroupRoutes, resultRoutes, sessionRoutes } from './routes-results.js';

export { JsonText, Reply, type HttpMethod, type NamedSchema, type ResponseKind, type RouteDef, type RouteInput } from './route-def.js';
export { checkTypeRoutes } from './routes-checks.js';

/** Every authenticated operation of the public API, in the order a router matches them. */
export const API_ROUTES: readonly RouteDef[] = [
  ...checkRoutes,
  ...groupRoutes,
  ...channelRoutes,
  ...dashboardRoutes,
  ...maintenanceRoutes,
  ...incidentRoutes,
  ...statusPageRoutes,
  ...certificateRoutes,
  ...snippetRoutes,
  ...errorGroupRoutes,
  ...resultRoutes,
  ...sessionRoutes,
];

/**
 * Every operation, with the routes of the check types plugins added (`vigil.checks.pluginCheckTypes`)
 * after the built-in check routes.
 */
export function apiRoutes(checkTypes: readonly CheckTypeDefinition[] = []): readonly RouteDef[] {
  if (checkTypes.length === 0) return API_ROUTES;
  // A plugin that serves AGENTIC takes its create route's place.
  const checks = checkTypes.some((t) => t.slug === 'agentic') ? checkRoutes.filter((r) => r !== unservedAgentic) : checkRoutes;
  return [...checks, ...checkTypes.flatMap(checkTypeRoutes), ...API_ROUTES.slice(checkRoutes.length)];
}
