/** @vigil/http-express-adapter: the public HTTP API of Vigil as an Express router. */
export { vigilRouter, type RateLimitOptions, type VigilRouter, type VigilRouterOptions } from './router.js';
export type { AuthThrottleOptions, InFlightOptions } from './guards.js';
export { vigilFrom } from './vigil-from.js';
export { vigilAdminRouter, type AdminRouterOptions } from './admin.js';
export { agentHealthServer, type AgentHealthOptions, type AgentHealthServer } from './agent-health.js';
export { openApiDocument, type OpenApiOptions } from './api/openapi.js';
export { API_ROUTES, apiRoutes, checkTypeRoutes, type RouteDef } from './api/route-table.js';
export { errorBody, type ErrorBody } from './errors.js';
export { API_METRICS, metricsHandler, prometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from './metrics.js';

export const API_VERSIONS = ['v1', 'v2'] as const;
export { vigilPages, type PrivatePageRef, type VigilPagesOptions } from './pages/pages-router.js';
