import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { DependencyContainer } from 'tsyringe';
import { resolve, VIGIL, type Logger, type Vigil } from '@vigil/core';
import { consoleAssets } from './assets.js';
import { mountCheckPages, type CheckPageOptions } from './check-page.js';
import { homeFilters, homeView } from './home.js';
import { PastHours } from './past-hours.js';
import { mountResourcePages } from './resource-pages.js';
import { contextOf, layoutOf, sendMessage, wrap, type ConsoleKit } from './kit.js';
import { ConsoleSessions, type ConsoleAuth } from './session.js';
import { checkRowsFragment, homePage, signInPage } from './templates.js';

export interface VigilConsoleOptions extends CheckPageOptions {
  /**
   * The host's own sign-in: answers the account a request acts for (from the host's session), or
   * null when nobody is signed in. Without it, people sign in with one of their account's API keys.
   */
  auth?: ConsoleAuth;
  /** Under `auth`, where a signed-out visitor is sent (with `?next=` the page they asked for). Without it they get a 401 page. */
  signInUrl?: string;
  /** How long an API-key session lasts, in milliseconds. Default 12 hours. */
  sessionTtlMs?: number;
  /** Mark the console's cookies Secure. Default: when the request came over https (`req.secure`; set Express's `trust proxy` behind a proxy). */
  secureCookies?: boolean;
  /** Seconds between live updates of the check list. Default 10; 0 turns them off. */
  refreshSeconds?: number;
  /** Sign-in attempts per client address and 15 minutes. Default 20. */
  signInLimit?: number;
  /** Where the host mounts Vigil's API (`vigilRouter`), for the ping address of heartbeat checks. Default `/api`. */
  apiPath?: string;
  /** Where internal errors are logged. Default: Vigil's logger. */
  logger?: Logger;
}

function vigilOf(source: Vigil | DependencyContainer): Vigil {
  const maybe = source as Partial<DependencyContainer>;
  if (typeof maybe.resolve === 'function' && typeof maybe.isRegistered === 'function') return resolve(source as DependencyContainer, VIGIL);
  return source as Vigil;
}

/** A path under the console to return to after sign-in; anything else (another site, `//host`) is the home page. */
function safeNext(raw: unknown): string {
  return typeof raw === 'string' && /^\/(?![/\\])[\x21-\x7e]{0,500}$/.test(raw) ? raw : '/';
}

/**
 * The Vigil console as an Express router: `app.use('/console', vigilConsole(vigil))`. Every page
 * is rendered by the server with every value escaped, under a Content-Security-Policy that admits
 * only the console's own hashed scripts and styles; every form carries a CSRF token.
 */
export function vigilConsole(source: Vigil | DependencyContainer, options: VigilConsoleOptions = {}): Router {
  const vigil = vigilOf(source);
  const kit: ConsoleKit = {
    vigil,
    sessions: new ConsoleSessions(vigil, options),
    assets: consoleAssets(),
    logger: options.logger ?? vigil.deps.logger,
    refreshSeconds: options.refreshSeconds ?? 10,
  };
  const { sessions } = kit;
  const router = express.Router();
  const pastHours = new PastHours(vigil);
  const form = express.urlencoded({ extended: false, limit: '1mb', parameterLimit: 2_000 });

  router.get('/assets/:file', (req, res) => kit.assets.serve(req, res));

  if (!options.auth) {
    const signInPageOf = (req: Request, res: Response, status: number, notice?: string) => {
      const layout = layoutOf(kit, req, res, { signIn: true });
      const ttlHours = Math.round((options.sessionTtlMs ?? 12 * 3_600_000) / 360_000) / 10;
      res.status(status).type('html').send(signInPage({ layout, title: 'Sign in', notice, next: safeNext(req.query.next ?? (req.body as { next?: unknown } | undefined)?.next), hours: ttlHours, account: typeof (req.body as { account?: unknown } | undefined)?.account === 'string' ? (req.body as { account: string }).account.slice(0, 200) : '' }));
    };
    router.get('/sign-in', (req, res) => signInPageOf(req, res, 200, req.query.expired === '1' ? 'Your session ended. Sign in again.' : undefined));
    const signInLimit = rateLimit({
      windowMs: 15 * 60_000,
      limit: options.signInLimit ?? 20,
      // Only failed attempts count: a viewer who signs in is never locked out by their own successes.
      skipSuccessfulRequests: true,
      standardHeaders: 'draft-6',
      legacyHeaders: false,
      validate: false,
      handler: (req, res) => signInPageOf(req, res, 429, 'Too many sign-in attempts. Try again in 15 minutes.'),
    });
    // The token first: a post without it (from another site) neither signs in nor counts against the address.
    const signInToken = (req: Request, res: Response, next: NextFunction) => {
      if (!sessions.csrfValid(req, '')) return signInPageOf(req, res, 403, 'This form has expired. Sign in again.');
      next();
    };
    router.post('/sign-in', form, signInToken, signInLimit, wrap(async (req, res) => {
      const { account, key } = req.body as { account?: unknown; key?: unknown };
      const given = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && v.length <= 512 ? v.trim() : null);
      const accountId = given(account);
      const apiKey = given(key);
      if (!accountId || !apiKey || !(await sessions.accountOf(accountId, apiKey))) return signInPageOf(req, res, 401, 'That account id and API key do not match.');
      sessions.signIn(req, res, accountId, apiKey);
      res.redirect(303, `${req.baseUrl}${safeNext((req.body as { next?: unknown }).next)}`);
    }));
    router.post('/sign-out', form, (req, res) => {
      // Signing out needs the token too: another site must not be able to sign a viewer out.
      if (!sessions.csrfValid(req)) return sendMessage(kit, req, res, 403, 'Not signed out', 'This form has expired. Reload the page and try again.');
      sessions.signOut(req, res);
      res.redirect(303, `${req.baseUrl}/sign-in`);
    });
  }

  // Everything below needs a signed-in account; forms and scripts' POSTs need the CSRF token.
  router.use(wrap(async (req, res, next) => {
    const context = await sessions.context(req, res);
    if (typeof context === 'object') {
      (res.locals as { console?: unknown }).console = context;
      return next();
    }
    if (context === 'expired') sessions.signOut(req, res);
    const wantsPage = req.method === 'GET' && req.query.fragment === undefined && req.accepts(['html', 'json']) === 'html';
    if (!wantsPage) {
      res.status(401).type('json').set('Cache-Control', 'no-store').send({ statusCode: 401, error: 'Unauthorized', message: 'Sign in to the console first' });
      return;
    }
    const next_ = encodeURIComponent(req.url);
    if (!options.auth) return res.redirect(303, `${req.baseUrl}/sign-in?next=${next_}${context === 'expired' ? '&expired=1' : ''}`);
    if (options.signInUrl) return res.redirect(303, `${options.signInUrl}${options.signInUrl.includes('?') ? '&' : '?'}next=${encodeURIComponent(`${req.baseUrl}${req.url}`)}`);
    sendMessage(kit, req, res, 401, 'Sign in first', 'Sign in to this site to use its monitoring console.');
  }));
  router.use(form, (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    if (!sessions.csrfValid(req, contextOf(res).accountId)) {
      if (req.accepts(['html', 'json']) === 'json') return void res.status(403).send({ statusCode: 403, error: 'Forbidden', message: 'Missing or wrong CSRF token' });
      return sendMessage(kit, req, res, 403, 'This form has expired', 'Nothing was changed. Go back, reload the page and try again.');
    }
    next();
  });

  router.get('/', wrap(async (req, res) => {
    const { accountId } = contextOf(res);
    const filters = homeFilters(req.query as Record<string, unknown>);
    const view = await homeView(vigil, pastHours, accountId, filters);
    const layout = layoutOf(kit, req, res, { section: '/', refresh: kit.refreshSeconds });
    if (req.query.fragment === 'rows') {
      res.type('html').send(checkRowsFragment({ layout, ...view }));
      return;
    }
    res.type('html').send(homePage({ layout, title: 'Checks', filters, ...view }));
  }));
  mountCheckPages(router, kit, options);

  mountResourcePages(router, kit, { apiPath: options.apiPath ?? '/api' });

  router.use((req, res) => sendMessage(kit, req, res, 404, 'Not found', 'There is no such page in the console.', { href: `${req.baseUrl}/`, label: 'All checks' }));
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown; statusCode?: unknown } | null)?.statusCode ?? (err as { status?: unknown } | null)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      if (res.headersSent) return;
      if (status === 404) return sendMessage(kit, req, res, 404, 'Not found', 'There is no such thing in this account.', { href: `${req.baseUrl}/`, label: 'All checks' });
      return sendMessage(kit, req, res, status, 'Not done', err instanceof Error ? err.message : 'The request could not be read.');
    }
    kit.logger.error('vigil console: internal error', { path: req.path, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    if (res.headersSent) return;
    sendMessage(kit, req, res, 500, 'Something went wrong', 'This page could not be shown. Try again in a moment.');
  });
  return router;
}
