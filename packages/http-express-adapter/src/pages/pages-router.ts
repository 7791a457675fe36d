import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { DependencyContainer } from 'tsyringe';
import { hasCode, type CheckResult, type Dashboard, type DashboardView, type Logger, type PublicCheck, type StatusPage, type StatusPageView, type Vigil } from '@vigil/core';
import { vigilFrom } from '../vigil-from.js';
import { chartAssets } from './assets.js';
import { badgeSvg } from './badges.js';
import { DASHBOARD_SCRIPT, STATUS_PAGE_SCRIPT } from './client-script.js';
import { dayBar, dayChart, hourClass, sparkChart, sparkLabel } from './page-charts.js';
import { imageSource, jsonScriptText, newNonce, pageHeaders, styleText } from './security.js';
import { BASE_CSS, themeCss } from './styles.js';
import { checkRunsTemplate, dashboardTemplate, messageTemplate, statusPageTemplate } from './templates.js';

export interface PrivatePageRef {
  kind: 'dashboard' | 'status-page';
  accountId: string;
  id: string;
}

export interface VigilPagesOptions {
  /**
   * Lets a viewer in to a private dashboard or status page without a dashboard key, e.g. by the
   * host's own session. A private status page has no keys, so without this it opens to nobody.
   */
  authorize?: (req: Request, page: PrivatePageRef) => boolean | Promise<boolean>;
  /** Serve `/badges/checks/{checkId}` and `/badges/groups/{groupId}`. Default true. */
  badges?: boolean;
  /**
   * Answer `/` (and `/checks/{id}`) of a request whose Host is a dashboard's customDomain with
   * that dashboard. Off by default: a customDomain is whatever an account typed, so turn it on
   * only where the hostnames reaching this router are your customers' domains, or pass a
   * function that says which hostnames may be served so (e.g. those you verified).
   */
  customDomains?: boolean | ((hostname: string) => boolean | Promise<boolean>);
  /** Requests per client address (req.ip; set Express's `trust proxy` behind a proxy) and window; `false` for none. Default 300 per minute. */
  rateLimit?: { limit?: number; windowMs?: number } | false;
  /** Show a page's configured logo and favicon from their own hosts. Default true; false keeps every image on this host (they are left out). */
  externalImages?: boolean;
  /** Subscription requests per client address and hour (each sends an email). Default 10. */
  subscribeRateLimit?: number;
  /** Seconds between reloads of a status page. Default 60; 0 never. */
  statusPageRefresh?: number;
  /** Where internal errors are logged. Default: Vigil's logger. */
  logger?: Logger;
}

const STATE_ORDER = ['FAILING', 'DEGRADED', 'PENDING', 'PASSING', 'PAUSED'] as const;

function resultState(r: CheckResult): string {
  if (r.hasFailures || r.hasErrors) return 'FAILING';
  return r.isDegraded ? 'DEGRADED' : 'PASSING';
}

function presentedKey(req: Request): string | null {
  const q = req.query.key;
  const fromQuery = typeof q === 'string' ? q : null;
  return fromQuery || req.get('x-dashboard-key') || null;
}

/** The page asked for (the view keeps it within the pages there are). */
function pageNumber(raw: unknown): number {
  return typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : 1;
}

/**
 * Dashboards, status pages and badges as web pages: `app.use(vigilPages(vigil))` serves
 * `/d/{customUrl}`, `/s/{id or url}` and `/badges/...`. Every value a user typed is escaped by
 * the templates; each response carries a Content-Security-Policy that admits only its own nonce'd
 * style and script.
 */
export function vigilPages(source: Vigil | DependencyContainer, options: VigilPagesOptions = {}): Router {
  const vigil = vigilFrom(source);
  const logger = options.logger ?? vigil.deps.logger;
  const router = express.Router();
  if (options.rateLimit !== false) {
    // Every page reads a whole account's checks or incidents: a flood from one address is cut off.
    router.use(['/d', '/s', '/badges'], rateLimit({
      windowMs: options.rateLimit?.windowMs ?? 60_000,
      limit: options.rateLimit?.limit ?? 300,
      standardHeaders: 'draft-6',
      legacyHeaders: false,
      validate: false,
      handler: (_req, res) => message(res, 429, 'Too many requests', 'Try again in a minute.'),
    }));
  }
  const assets = chartAssets();
  // The chart files' URLs under the mount path, and the page's chart data (JSON, never script).
  const charts = (req: Request, data: unknown[]) => (data.length === 0 ? {} : {
    chartAssets: Object.fromEntries(Object.entries(assets.names).map(([k, name]) => [k, `${req.baseUrl}/assets/${name}`])),
    chartJson: jsonScriptText({ charts: data }),
  });
  const images = (...urls: (string | null)[]) => (options.externalImages === false ? urls.map(() => null) : urls);

  const send = (res: Response, status: number, html: string) => res.status(status).type('html').send(html);

  function message(res: Response, status: number, heading: string, text: string, askKey = false, confirmForm?: { action: string; token: string; label: string }): void {
    const nonce = newNonce();
    pageHeaders(res, nonce, [], { private: true });
    send(res, status, messageTemplate({ nonce, title: heading, heading, text, askKey, confirmForm, css: `${themeCss(undefined, true)}\n${BASE_CSS}` }));
  }

  async function mayView(req: Request, ref: PrivatePageRef, isPrivate: boolean, dashboard?: Dashboard): Promise<boolean> {
    if (!isPrivate) return true;
    if (dashboard && vigil.dashboards.verifyKey(dashboard, presentedKey(req))) return true;
    return options.authorize ? !!(await options.authorize(req, ref)) : false;
  }

  async function dashboardPage(req: Request, res: Response, dashboard: Dashboard, base: string): Promise<void> {
    if (!(await mayView(req, { kind: 'dashboard', accountId: dashboard.accountId, id: String(dashboard.id) }, dashboard.isPrivate, dashboard))) {
      message(res, 401, 'This dashboard is private', 'Open it with one of its access keys.', true);
      return;
    }
    // A sparkline shows response times: only where the dashboard shows them (expanded cards' average, p95 or p99).
    const sparkline = dashboard.expandChecks || dashboard.showP95 || dashboard.showP99;
    // The figures of the page shown alone are worked out (a dashboard that paginates).
    const view: DashboardView = await vigil.publicPages.dashboardView(dashboard, { hours: sparkline, page: pageNumber(req.query.page) });
    const d = view.dashboard;
    const { page, pages } = view;
    const key = typeof req.query.key === 'string' ? req.query.key : null;
    const keyQuery = key ? `?key=${encodeURIComponent(key)}` : '';
    const link = (n: number) => {
      const q = new URLSearchParams();
      if (n > 1) q.set('page', String(n));
      if (key) q.set('key', key);
      return q.size ? `${base}?${q}` : base;
    };
    const [logo, favicon] = images(d.logo, d.favicon);
    const nonce = newNonce();
    const shown = view.checks;
    const sparks = sparkline ? shown.map(sparkChart) : [];
    pageHeaders(res, nonce, [imageSource(logo), imageSource(favicon)], { private: d.isPrivate });
    send(res, 200, dashboardTemplate({
      ...charts(req, sparks),
      nonce,
      title: d.header,
      favicon,
      d: { ...d, logo },
      logoAlt: d.header,
      css: `${themeCss(undefined, true)}\n${BASE_CSS}`,
      customCss: styleText(d.customCSS),
      widthClass: d.width === '960PX' ? 'w-960' : '',
      expand: d.expandChecks,
      sparkline,
      runLinks: d.showCheckRunLinks,
      runBase: base === '/' ? '' : base,
      keyQuery,
      incidents: view.incidents,
      summary: STATE_ORDER.filter((s) => view.counts[s] > 0).map((state) => ({ state, count: view.counts[state] })),
      checks: shown.map((c: PublicCheck, i) => ({ ...c, chart: i, chartLabel: sparkLabel(c), hours: c.hours.map((h) => ({ ...h, cls: hourClass(h) })) })),
      pagination: pages > 1 ? Array.from({ length: pages }, (_, i) => ({ n: i + 1, current: i + 1 === page, href: link(i + 1) })) : null,
      generatedAt: view.generatedAt,
      refreshSeconds: d.refreshRate,
      data: { page, pages, refresh: d.refreshRate, rotate: d.paginate && pages > 1 ? d.paginationRate : 0 },
      script: DASHBOARD_SCRIPT,
    }));
  }

  async function checkRunsPage(req: Request, res: Response, dashboard: Dashboard, base: string, checkId: string): Promise<void> {
    if (!(await mayView(req, { kind: 'dashboard', accountId: dashboard.accountId, id: String(dashboard.id) }, dashboard.isPrivate, dashboard))) {
      message(res, 401, 'This dashboard is private', 'Open it with one of its access keys.', true);
      return;
    }
    const runs = await vigil.publicPages.dashboardCheckRuns(dashboard, checkId);
    if (!runs) {
      message(res, 404, 'Not found', 'This dashboard shows no such check.');
      return;
    }
    const key = typeof req.query.key === 'string' ? req.query.key : null;
    const [logo, favicon] = images(dashboard.logo, dashboard.favicon);
    const nonce = newNonce();
    pageHeaders(res, nonce, [imageSource(logo), imageSource(favicon)], { private: dashboard.isPrivate });
    send(res, 200, checkRunsTemplate({
      nonce,
      title: `${runs.check.name} · ${dashboard.header}`,
      favicon,
      d: { ...dashboard, logo },
      logoAlt: dashboard.header,
      css: `${themeCss(undefined, true)}\n${BASE_CSS}`,
      customCss: styleText(dashboard.customCSS),
      widthClass: dashboard.width === '960PX' ? 'w-960' : '',
      back: `${base}${key ? `?key=${encodeURIComponent(key)}` : ''}`,
      check: runs.check,
      results: runs.results.map((r) => ({ ...r, state: resultState(r) })),
    }));
  }

  function statusPageHtml(req: Request, res: Response, view: StatusPageView, subscribeAction: string | null): void {
    const p = view.page;
    // Every service of every card in page order: the chart box and its data share the index.
    const dayCharts = view.cards.flatMap((c) => c.services.map(dayChart));
    let chart = 0;
    const [logo, favicon] = images(p.logo, p.favicon);
    const nonce = newNonce();
    const refresh = options.statusPageRefresh ?? 60;
    pageHeaders(res, nonce, [imageSource(logo), imageSource(favicon)], { private: p.isPrivate });
    send(res, 200, statusPageTemplate({
      ...charts(req, dayCharts),
      nonce,
      title: `${p.name} status`,
      favicon,
      theme: p.defaultTheme === 'AUTO' ? null : p.defaultTheme.toLowerCase(),
      p: { ...p, logo },
      logoAlt: p.name,
      css: `${themeCss(p.themeColors, p.defaultTheme === 'AUTO')}\n${BASE_CSS}`,
      state: view.state,
      days: vigil.publicPages.uptimeDays,
      cards: view.cards.map((c) => ({ ...c, services: c.services.map((s) => ({ ...s, chart: chart++, bars: s.days.map(dayBar) })) })),
      activeIncidents: view.activeIncidents,
      pastIncidents: view.pastIncidents,
      generatedAt: view.generatedAt,
      refreshSeconds: refresh || null,
      data: { auto: p.defaultTheme === 'AUTO' ? 1 : 0, refresh },
      script: STATUS_PAGE_SCRIPT,
      subscribeAction,
    }));
  }

  async function statusPage(req: Request, res: Response, page: StatusPage): Promise<void> {
    if (!(await mayView(req, { kind: 'status-page', accountId: page.accountId, id: page.id }, page.isPrivate))) {
      message(res, 401, 'This status page is private', 'Sign in to the site that hosts it to see it.');
      return;
    }
    const subscribeAction = vigil.statusPageSubscribers.takesSubscribers(page) ? `${req.baseUrl}/s/${encodeURIComponent(page.url)}/subscribe` : null;
    statusPageHtml(req, res, await vigil.publicPages.statusPageView(page), subscribeAction);
  }

  /** The public status page a subscription is for; otherwise answered here (404). */
  async function subscribablePage(req: Request, res: Response): Promise<StatusPage | null> {
    const page = await vigil.publicPages.findStatusPage(String(req.params.idOrUrl));
    if (!page || !vigil.statusPageSubscribers.takesSubscribers(page)) {
      message(res, 404, 'Not found', page ? 'This status page takes no subscribers.' : 'There is no status page at this address.');
      return null;
    }
    return page;
  }
  /** The page of a link in an email: its token is the credential, so a private page answers too. */
  async function linkedPage(req: Request, res: Response): Promise<StatusPage | null> {
    const page = await vigil.publicPages.findStatusPage(String(req.params.idOrUrl));
    if (!page) message(res, 404, 'Not found', 'There is no status page at this address.');
    return page;
  }
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const tokenOf = (req: Request): unknown => (typeof req.query.token === 'string' ? req.query.token : (req.body as { token?: unknown } | undefined)?.token);

  const wrap = (fn: (req: Request, res: Response, next: NextFunction) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
    fn(req, res, next).catch(next);
  };

  // Not rate-limited: files in memory, and a browser asks for each once a year.
  router.get('/assets/:name', assets.serve);

  router.get('/d/:customUrl', wrap(async (req, res) => {
    const dashboard = await vigil.dashboards.findPublic(String(req.params.customUrl));
    if (!dashboard) return message(res, 404, 'Not found', 'There is no dashboard at this address.');
    await dashboardPage(req, res, dashboard, `${req.baseUrl}/d/${encodeURIComponent(dashboard.customUrl)}`);
  }));
  router.get('/d/:customUrl/checks/:checkId', wrap(async (req, res) => {
    const dashboard = await vigil.dashboards.findPublic(String(req.params.customUrl));
    if (!dashboard) return message(res, 404, 'Not found', 'There is no dashboard at this address.');
    await checkRunsPage(req, res, dashboard, `${req.baseUrl}/d/${encodeURIComponent(dashboard.customUrl)}`, String(req.params.checkId));
  }));

  router.get('/s/:idOrUrl', wrap(async (req, res) => {
    const page = await vigil.publicPages.findStatusPage(String(req.params.idOrUrl));
    if (!page) return message(res, 404, 'Not found', 'There is no status page at this address.');
    await statusPage(req, res, page);
  }));

  if (options.rateLimit !== false) {
    // Each subscription sends an email: a few an hour from one address.
    router.post('/s/:idOrUrl/subscribe', rateLimit({
      windowMs: 3_600_000,
      limit: options.subscribeRateLimit ?? 10,
      standardHeaders: 'draft-6',
      legacyHeaders: false,
      validate: false,
      handler: (_req, res) => message(res, 429, 'Too many requests', 'Try again in an hour.'),
    }));
  }
  router.post('/s/:idOrUrl/subscribe', form, wrap(async (req, res) => {
    const page = await subscribablePage(req, res);
    if (!page) return;
    try {
      await vigil.statusPageSubscribers.subscribe(page, { email: (req.body as { email?: unknown } | undefined)?.email });
    } catch (err) {
      if (hasCode(err, 'VALIDATION')) return message(res, 400, 'Not subscribed', 'That is not an email address. Go back and try again.');
      throw err;
    }
    // The same answer whether or not the address was subscribed already, or is sent an email.
    message(res, 202, 'Check your inbox', `If the address can receive email, a link to confirm the subscription to ${page.name} is on its way.`);
  }));
  // Links in emails are opened by mail scanners too: a GET asks, the button (a POST) acts.
  const linkAction = (action: 'confirm' | 'unsubscribe', heading: string, text: (page: StatusPage | null) => string, label: string) =>
    wrap(async (req, res) => {
      const page = await linkedPage(req, res);
      if (!page) return;
      const token = tokenOf(req);
      // A private page's name is not shown to whoever opens the address.
      message(res, 200, heading, text(page.isPrivate ? null : page), false, {
        action: `${req.baseUrl}/s/${encodeURIComponent(String(req.params.idOrUrl))}/subscription/${action}`, token: typeof token === 'string' ? token : '', label,
      });
    });
  router.get('/s/:idOrUrl/subscription/confirm', linkAction('confirm', 'Confirm your subscription', (p) => `Get an email when ${p ? p.name : 'this status page'} posts an incident update?`, 'Confirm'));
  router.post('/s/:idOrUrl/subscription/confirm', form, wrap(async (req, res) => {
    const page = await linkedPage(req, res);
    if (!page) return;
    if (!(await vigil.statusPageSubscribers.confirm(page, tokenOf(req)))) {
      return message(res, 404, 'This link does not work', 'It may be from an older email, or the subscription was ended. Subscribe again on the status page.');
    }
    message(res, 200, 'Subscribed', `You will get an email when ${page.name} posts an incident update.`);
  }));
  router.get('/s/:idOrUrl/subscription/unsubscribe', linkAction('unsubscribe', 'Unsubscribe', (p) => `Stop the emails about ${p ? p.name : 'this status page'}?`, 'Unsubscribe'));
  // The button, and mail clients' one-click unsubscribe (RFC 8058: a POST to the List-Unsubscribe address).
  router.post('/s/:idOrUrl/subscription/unsubscribe', form, wrap(async (req, res) => {
    const page = await linkedPage(req, res);
    if (!page) return;
    if (!(await vigil.statusPageSubscribers.unsubscribe(page, tokenOf(req)))) {
      return message(res, 404, 'This link does not work', 'The subscription may have ended already.');
    }
    message(res, 200, 'Unsubscribed', `You will get no more emails about ${page.name}.`);
  }));

  if (options.badges !== false) {
    const badge = (kind: 'checks' | 'groups') => wrap(async (req, res) => {
      const id = String(req.params.id).replace(/\.svg$/, '');
      const view = kind === 'checks'
        ? await vigil.publicPages.checkBadge(id)
        : /^\d{1,15}$/.test(id) ? await vigil.publicPages.groupBadge(Number(id)) : null;
      const responseTime = req.query.responseTime === 'true';
      res.set({ 'Cache-Control': 'no-cache, max-age=0', 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'" });
      res.status(view ? 200 : 404).type('image/svg+xml').send(badgeSvg(view, { responseTime }));
    });
    router.get('/badges/checks/:id', badge('checks'));
    router.get('/badges/groups/:id', badge('groups'));
  }

  if (options.customDomains) {
    const allowed = typeof options.customDomains === 'function' ? options.customDomains : () => true;
    const byDomain = async (req: Request) => (req.hostname && (await allowed(req.hostname)) ? vigil.dashboards.findByDomain(req.hostname) : null);
    router.get('/', wrap(async (req, res, next) => {
      const dashboard = await byDomain(req);
      if (!dashboard) return next();
      await dashboardPage(req, res, dashboard, req.baseUrl || '/');
    }));
    router.get('/checks/:checkId', wrap(async (req, res, next) => {
      const dashboard = await byDomain(req);
      if (!dashboard) return next();
      await checkRunsPage(req, res, dashboard, req.baseUrl || '/', String(req.params.checkId));
    }));
  }

  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // A client's own mistake (an address that does not decode, say) is not an internal error.
    const status = (err as { status?: unknown } | null)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      if (!res.headersSent) message(res, status, 'Bad request', 'This address could not be read.');
      return;
    }
    logger.error('vigil pages: internal error', { path: req.path, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    if (res.headersSent) return;
    message(res, 500, 'Something went wrong', 'This page could not be shown. Try again in a moment.');
  });
  return router;
}
