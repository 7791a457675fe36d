import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import type { DependencyContainer } from 'tsyringe';
import { noopMetrics, runForRequest, ValidationError, type AuthContext, type Logger, type Page, type Vigil } from '@vigil/core';
import { errorBody, errorHandler, sendError } from './errors.js';
import { authThrottle, inFlightCap, inFlightLimit, type AuthThrottle, type AuthThrottleOptions, type InFlightOptions } from './guards.js';
import { apiRequestMetrics, routeLabel, UNMATCHED_ROUTE } from './metrics.js';
import { bodyErrors, jsonBody } from './body.js';
import { openApiDocument, withServer } from './api/openapi.js';
import { apiDocs } from './api-docs.js';
import { apiRoutes, JsonText, Reply, type RouteDef } from './api/route-table.js';
import { vigilFrom } from './vigil-from.js';
import { HangUp } from './hang-up.js';
import { sharedGets, type SharedResult } from './shared-gets.js';

export interface RateLimitOptions {
  /** Requests per window per API key. Default 600. */
  limit?: number;
  /** Window length in milliseconds. Default 60,000. */
  windowMs?: number;
  /**
   * Where counts are kept. Default: this process's memory. Several processes behind one balancer
   * each count on their own unless they share a store (any express-rate-limit store).
   */
  store?: Store;
}

export interface VigilRouterOptions {
  /**
   * Largest accepted JSON body (browser scripts and their dependencies count). Default `1mb`. It
   * holds for a body a parser in front of the router already read, too.
   */
  bodyLimit?: string | number;
  /**
   * Per-key rate limit; `false` turns it off, and with it the failed-authentication throttle and
   * the in-flight cap unless `authThrottle` or `maxInFlight` is given.
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * Failed authentications allowed per client address (default 30 a minute); beyond them that
   * address's attempts answer 429 with `Retry-After` until the window passes, except with a key that
   * authenticated within it. `false` turns it off (also the default with `rateLimit: false`).
   */
  authThrottle?: AuthThrottleOptions | false;
  /**
   * Requests of one API key under way at once (a number, or `{ limit, queue, waitMs }`; default 4).
   * Further requests of that key wait in line for a slot (default up to 1,000 of them, each up to
   * 10 s); beyond that, 429 with `Retry-After: 1`. `false` turns the cap off (also the default with
   * `rateLimit: false`). Counted in each process.
   */
  maxInFlight?: number | InFlightOptions | false;
  /**
   * The client address (of the failed-authentication throttle) is the socket's peer by default.
   * With `trustProxy: true` it is Express's `req.ip`, which follows the host app's `trust proxy`
   * setting: set both when a balancer in front of the host adds `X-Forwarded-For`.
   */
  trustProxy?: boolean;
  /**
   * By default every request that reaches the router and matches no route answers the API's 404.
   * With `fallthrough: true` only unknown paths under /v1 and /v2 do; others go on to the host's
   * routes (for a router mounted at the host's root).
   */
  fallthrough?: boolean;
  /** Serve `GET /openapi.json`. Default true. */
  openapi?: boolean;
  /**
   * Serve the interactive API reference (Swagger UI on the document, all from the host) at
   * `GET /docs/`, public like the document. Default true; off with `openapi: false` too.
   */
  docs?: boolean;
  /** Serve the heartbeat ping endpoints `GET|POST /ping/{token}`. Default true. */
  pings?: boolean;
  /** Where the router logs internal errors. Default: Vigil's logger. */
  logger?: Logger;
  /**
   * Count requests in Vigil's metrics (`vigil_api_requests_total`, by route template). Default
   * true; nothing is counted when Vigil was made without `metrics`.
   */
  metrics?: boolean;
}

/** Wraps an async handler so a rejection reaches the router's error handler. */
export function asyncHandler(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res, next) => {
    fn(req, res).catch(next);
  };
}

/** True once the client has hung up before its response was sent: the work for it is dropped. */
function abandoned(res: Response): boolean {
  return (res.locals.vigilAbort as HangUp | undefined)?.gone === true;
}

/**
 * The request's hang-up watch, gone when the response closes before it finished (the client hung
 * up): a request that waited for a slow store or authentication is dropped rather than served.
 */
const watchHangUp: RequestHandler = (_req, res, next) => {
  const hangUp = new HangUp();
  res.locals.vigilAbort = hangUp;
  // A response closes once: a plain listener does what `once` does without its wrapper.
  res.on('close', () => {
    if (!res.writableFinished) hangUp.hungUp();
  });
  next();
};

/**
 * A route's handlers as one: each runs when the one before calls `next()`, as Express runs a
 * route's handlers (an error, or a rejected promise, goes on to the router's error handlers), but
 * without a routing step between them.
 */
function chain(handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      // As Express: any truthy value is an error ('route' and 'router' included), a falsy one is not.
      if (err) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const returned = handler(req, res, step) as unknown;
        if (returned instanceof Promise) returned.then(undefined, (e: unknown) => next(e || new Error('Rejected promise')));
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}

/** Authenticates the request and passes on; a failure answers 401 or 403 through the error handler. */
function authenticate(vigil: Vigil, throttle: AuthThrottle | null): RequestHandler {
  return (req, res, next) => {
    if (abandoned(res)) return;
    vigil.authenticator
      .authenticate({ authorization: req.get('authorization'), account: req.get('x-service-account') })
      .then((ctx) => {
        throttle?.succeeded(req);
        if (abandoned(res)) return;
        res.locals.vigilAuth = ctx;
        next();
      }, (err: unknown) => {
        if (!throttle) return next(err);
        throttle.failed(req, err).then(() => next(err), () => next(err));
      });
  };
}

/** The key a request's per-key limits count it under (its API key, or its account without one). */
function keyOf(res: Response): string {
  const ctx = res.locals.vigilAuth as AuthContext;
  return `key:${ctx.apiKeyId ?? `account:${ctx.accountId}`}`;
}

function limiter(options: RateLimitOptions, key: (req: Request, res: Response) => string): RequestHandler {
  return rateLimit({
    windowMs: options.windowMs ?? 60_000,
    limit: options.limit ?? 600,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    // Vigil keys on the API key, never on addresses, so the proxy checks do not apply.
    validate: false,
    keyGenerator: key,
    ...(options.store ? { store: options.store } : {}),
    handler: (_req, res, _next, opts) => {
      sendError(res, 429, errorBody(429, `Rate limit of ${opts.limit} requests per ${Math.round(opts.windowMs / 1000)} s exceeded; retry after the time in Retry-After`));
    },
  });
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** Whether the host app changes how res.json writes a body (then a body written already is written again its way). */
function customJson(res: Response): boolean {
  const app = res.app;
  return app.get('json spaces') !== undefined || app.get('json replacer') !== undefined || Boolean(app.get('json escape'));
}

function sendResult(route: RouteDef, res: Response, result: unknown): void {
  if (result instanceof JsonText) {
    if (customJson(res)) {
      res.status(route.status ?? 200).json(JSON.parse(result.text.toString()));
      return;
    }
    // As res.json sends a body: the same Content-Type and ETag.
    if (!res.get('Content-Type')) res.set('Content-Type', 'application/json; charset=utf-8');
    res.status(route.status ?? 200).send(result.text);
    return;
  }
  if (result instanceof Reply) {
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
    return;
  }
  const status = route.status ?? 200;
  switch (route.response.kind) {
    case 'empty':
      res.status(status).end();
      return;
    case 'page': {
      const page = result as Page<unknown>;
      const last = page.offset + page.items.length - 1;
      res.setHeader('Content-Range', page.items.length > 0 ? `${page.offset}-${last}/${page.total}` : `*/${page.total}`);
      res.status(status).json(page.items);
      return;
    }
    default:
      res.status(status).json(result);
  }
}

/**
 * A result several requests share, as the JSON text each of them is sent: written once. Sent as
 * res.json would send it, so only where res.json is Express's own and writes it plainly and no
 * Content-Type is set yet; a page, a reply and a body already written are sent as they are.
 */
function sharedJson(route: RouteDef, res: Response, answered: SharedResult): unknown {
  const { result } = answered;
  if (result === undefined || result instanceof JsonText || result instanceof Reply || route.response.kind === 'page' || route.response.kind === 'empty') return result;
  if (res.json !== express.response.json || customJson(res) || res.get('Content-Type')) return result;
  answered.text ??= Buffer.from(JSON.stringify(result));
  return new JsonText(answered.text);
}

function routeHandler(vigil: Vigil, route: RouteDef): RequestHandler {
  const share = sharedGets();
  return asyncHandler(async (req, res) => {
    const auth = res.locals.vigilAuth as AuthContext;
    if (route.body && req.body === undefined && hasBody(req)) {
      throw new ValidationError([{ path: '', message: 'must be a JSON object sent with Content-Type: application/json' }]);
    }
    // A client that hung up while the request waited (behind the cap, for authentication, for the
    // body) gets nothing computed; the handler sees the same signal (a long poll stops early).
    const hangUp = res.locals.vigilAbort as HangUp;
    if (hangUp.gone) return;
    const handle = (signal: AbortSignal) => route.handle({
      vigil,
      accountId: auth.accountId,
      params: req.params as Record<string, string>,
      query: req.query,
      body: req.body ?? {},
      signal,
    });
    // A read is given up once its client has gone (the store sends no further query and cancels
    // the one under way); a write always completes, so it never stops halfway. Identical reads
    // that arrive together share one run and one JSON text.
    let result: unknown;
    try {
      if (route.method !== 'get') result = await handle(hangUp.signal);
      else if (route.longPoll) result = await runForRequest(hangUp.signal, () => handle(hangUp.signal));
      else {
        const key = JSON.stringify([auth.accountId, req.params, req.query]);
        const answered = await share(key, hangUp, (signal) => runForRequest(signal, () => handle(signal)));
        result = answered.shared ? sharedJson(route, res, answered) : answered.result;
      }
    } catch (err) {
      if (hangUp.gone) return;
      throw err;
    }
    if (hangUp.gone) return;
    sendResult(route, res, result);
  });
}

/** The API's router, and the error handler that goes after it where a body parser comes before it. */
export interface VigilRouter extends Router {
  /**
   * Answers the failures of a body parser in front of the router (a host-wide `express.json()`:
   * malformed JSON, a body over its limit) with the API's JSON error body instead of the host's
   * error page; other errors go on. Express hands an error to error handlers only, never to a
   * router, so mount it right after the router on the same path:
   * `app.use('/api', api, api.bodyErrors)`.
   */
  bodyErrors: ErrorRequestHandler;
}

/**
 * The public HTTP API of Vigil as an Express router: `app.use('/api', vigilRouter(vigil))`.
 * It sets nothing on the host app: its body parser, rate limiter and error handler apply only to
 * requests that reach it.
 */
export function vigilRouter(source: Vigil | DependencyContainer, options: VigilRouterOptions = {}): VigilRouter {
  const vigil = vigilFrom(source);
  const logger = options.logger ?? vigil.deps.logger;
  const router = express.Router();
  const metrics = vigil.deps.metrics;
  const counted = options.metrics !== false && metrics !== undefined && metrics !== noopMetrics;
  // Every handler chain starts by naming its route template, so the label never holds a raw path.
  const named = (template: string): RequestHandler[] => (counted ? [routeLabel(template)] : []);
  if (counted) router.use(apiRequestMetrics(metrics));
  const bodyLimit = options.bodyLimit ?? '1mb';
  const json = jsonBody(bodyLimit);
  // `rateLimit: false` is a router that limits nothing (the host limits in front of it): the
  // failed-authentication throttle and the in-flight cap are then off unless given.
  const limits = options.rateLimit !== false;
  const throttleOptions = options.authThrottle ?? (limits ? {} : false);
  const throttle = throttleOptions === false ? null : authThrottle(throttleOptions, options.trustProxy === true);
  const auth = authenticate(vigil, throttle);
  const rate = options.rateLimit === false ? null : limiter(options.rateLimit ?? {}, (_req, res) => keyOf(res));
  const maxInFlight = options.maxInFlight ?? (limits ? {} : false);
  const cap = maxInFlight === false ? null : inFlightCap(maxInFlight);
  // Waiting for a session to end takes no work but a slot's time, so those polls have a lane of
  // their own: up to 10 of a key at once (or its limit, if higher), refused beyond without waiting.
  const pollCap = maxInFlight === false ? null : inFlightCap({ limit: Math.max(10, inFlightLimit(maxInFlight)), queue: 0 });

  // Check types plugins added get their routes (and their place in the document) like built-in ones.
  const checkTypes = [...vigil.checks.pluginCheckTypes.values()];
  if (options.openapi !== false) {
    let doc: ReturnType<typeof openApiDocument> | undefined;
    router.get('/openapi.json', ...named('/openapi.json'), (req, res) => {
      doc ??= openApiDocument({ pings: options.pings !== false, checkTypes });
      // The server is where the host mounted the router, whatever path that is.
      res.json(withServer(doc, req.baseUrl || '/'));
    });
    if (options.docs !== false) router.use('/docs', apiDocs(named));
  }

  if (options.pings !== false) {
    const pingRate = options.rateLimit === false ? null : limiter(options.rateLimit ?? {}, (req) => `ping:${String(req.params.token)}`);
    const ping = asyncHandler(async (req, res) => {
      const { at } = await vigil.heartbeats.ping(req.params.token, req.get('user-agent') ?? null);
      res.status(200).json({ ok: true, at });
    });
    for (const method of ['get', 'post'] as const) {
      router[method]('/ping/:token', ...named('/ping/:token'), ...(pingRate ? [pingRate] : []), ping);
    }
  }

  for (const route of apiRoutes(checkTypes)) {
    const handlers: RequestHandler[] = [...named(route.path), watchHangUp];
    if (throttle) handlers.push(throttle.before);
    const lane = route.longPoll ? pollCap : cap;
    if (lane) handlers.push(lane);
    handlers.push(auth);
    if (rate) handlers.push(rate);
    if (route.body) handlers.push(json);
    handlers.push(routeHandler(vigil, route));
    router[route.method](route.path, chain(handlers));
  }

  const notFound: RequestHandler = (req, res) => {
    res.locals.vigilRoute ??= UNMATCHED_ROUTE;
    sendError(res, 404, errorBody(404, `No route ${req.method} ${req.baseUrl}${req.path}`));
  };
  if (options.fallthrough) router.use(['/v1', '/v2'], notFound);
  else router.use(notFound);

  // An error before any route matched (a malformed path) is still counted, as unmatched.
  if (counted) {
    router.use(((err, _req, res, next) => {
      res.locals.vigilRoute ??= UNMATCHED_ROUTE;
      next(err);
    }) as ErrorRequestHandler);
  }
  router.use(errorHandler(logger));
  return Object.assign(router, { bodyErrors: bodyErrors(bodyLimit, options.fallthrough === true, logger) });
}

