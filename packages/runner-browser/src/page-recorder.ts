import { scrubSecrets } from '@vigil/core';
import type { BrowserContext, CDPEvents, CDPSession, Page, Target } from 'puppeteer-core';

/** Web vitals of one navigation of a page's main frame, in milliseconds (CLS has no unit). */
export interface NavigationVitals {
  url: string;
  status: number | null;
  TTFB: number | null;
  FCP: number | null;
  LCP: number | null;
  CLS: number | null;
}

export interface ConsoleEntry {
  type: string;
  text: string;
  url: string | null;
}

export interface FailedRequest {
  method: string;
  url: string;
  /** The network error, for a request that got no answer. */
  error: string | null;
  /** The status, for an answer of 400 or more. */
  status: number | null;
}

/** The most entries of each kind a run keeps, and the longest text of one. */
const MAX_ENTRIES = 200;
const MAX_TEXT = 2000;

const clipText = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);
const ms = (x: number) => Math.round(x * 10) / 10;

interface Navigation {
  url: string;
  status: number | null;
  /** Monotonic seconds (CDP's timestamps) and wall-clock milliseconds of the navigation's start. */
  startTs: number;
  startWall: number;
  ttfb: number | null;
  fcp: number | null;
  lcp: number | null;
  shifts: { at: number; value: number }[];
}

/** CLS as web-vitals defines it: the largest sum of shifts in a session window (gaps under 1 s, at most 5 s long). */
export function cumulativeLayoutShift(shifts: readonly { at: number; value: number }[]): number {
  let best = 0;
  let sum = 0;
  let first = -Infinity;
  let last = -Infinity;
  for (const s of shifts) {
    if (s.at - last < 1000 && s.at - first < 5000) {
      sum += s.value;
    } else {
      sum = s.value;
      first = s.at;
    }
    last = s.at;
    best = Math.max(best, sum);
  }
  return Math.round(best * 10_000) / 10_000;
}

/** Strips user:password from a URL before it is recorded. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
}

/**
 * Watches every page of a run's context from the host's side (the script cannot forge or hide
 * it): console messages, page errors, failed requests, the web vitals of each main-frame
 * navigation (through the DevTools protocol, nothing is injected into the page) and the
 * certificate of the domain whose expiry the check watches.
 */
export class PageRecorder {
  readonly console: ConsoleEntry[] = [];
  readonly pageErrors: string[] = [];
  readonly failedRequests: FailedRequest[] = [];
  private readonly navigations: Navigation[] = [];
  private readonly sessions: CDPSession[] = [];
  /** What stop() undoes: the listeners put on the pages' sessions, and the sessions of the recorder's own. */
  private readonly undo: (() => void)[] = [];
  private readonly pages = new Set<Page>();
  /** Expiry (epoch ms) of the certificate the browser was served for the watched domain. */
  certificateValidTo: number | null = null;
  private readonly onTarget = (target: Target) => {
    if (target.type() === 'page') void target.page().then((page) => page && this.watch(page)).catch(() => {});
  };

  /** The domain whose certificate the check watches (sslCheckDomain), set when the run starts. */
  sslDomain: string | null = null;
  /** The run's secret values: scrubbed from text before it is cut to length. */
  secrets: readonly string[] = [];
  private clip(text: string): string {
    return clipText(scrubSecrets(text, this.secrets, true));
  }

  constructor(private readonly context: BrowserContext) {}

  async start(page: Page): Promise<void> {
    this.context.on('targetcreated', this.onTarget);
    await this.watch(page, true);
  }

  /**
   * Waits for the events Chromium sent before now: the script drives the page over a connection
   * of its own, so its last console messages may still be on their way over the host's. One
   * round trip per page on the host's connection brings everything sent before it.
   */
  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.sessions.map((s) => s.send('Page.getFrameTree').catch(() => {}))),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  stop(): void {
    this.context.off('targetcreated', this.onTarget);
    for (const undo of this.undo.splice(0)) undo();
  }

  private push<T>(list: T[], entry: T) {
    if (list.length < MAX_ENTRIES) list.push(entry);
  }

  /**
   * Records a page. The run's first page (`first`), watched before the script starts, is read on
   * its own DevTools session, where puppeteer has Page, Network, Runtime and Log enabled already:
   * a session of the recorder's own would have Chromium send every event of the page twice. A page
   * the script opens (a popup, a tab) gets a session of its own, whose enabling makes Chromium
   * send again the console messages and log entries it logged while it loaded.
   */
  private async watch(page: Page, first = false): Promise<void> {
    if (this.pages.has(page)) return;
    this.pages.add(page);
    page.on('pageerror', (err) => this.push(this.pageErrors, this.clip(err instanceof Error ? err.message : String(err))));
    page.on('requestfailed', (req) => {
      this.push(this.failedRequests, { method: req.method(), url: withoutCredentials(req.url()), error: req.failure()?.errorText ?? 'failed', status: null });
    });
    page.on('response', (res) => {
      if (res.status() >= 400) {
        this.push(this.failedRequests, { method: res.request().method(), url: withoutCredentials(res.url()), error: null, status: res.status() });
      }
    });
    try {
      const own = first ? pageSession(page) : null;
      const session = own ?? await page.createCDPSession();
      if (!own) this.undo.push(() => void session.detach().catch(() => {}));
      this.sessions.push(session);
      await this.vitals(session, own !== null);
    } catch {
      // A page closed as it opened has no vitals to give.
    }
  }

  private async vitals(session: CDPSession, enabled: boolean): Promise<void> {
    const on = <E extends keyof CDPEvents>(event: E, listener: (e: CDPEvents[E]) => void) => {
      session.on(event, listener);
      this.undo.push(() => session.off(event, listener));
    };
    const { frameTree } = await session.send('Page.getFrameTree');
    const mainFrame = frameTree.frame.id;
    const byLoader = new Map<string, Navigation>();
    // This page's navigations, newest last: a timeline event belongs to the newest that began before it.
    const navs: Navigation[] = [];
    const current = (wallMs: number) => navs.findLast((nav) => nav.startWall <= wallMs) ?? null;

    on('Network.requestWillBeSent', (e) => {
      if (e.type !== 'Document' || e.frameId !== mainFrame || e.requestId !== e.loaderId) return;
      const seen = byLoader.get(e.loaderId);
      if (seen) {
        seen.url = withoutCredentials(e.request.url); // a redirect keeps its start
        return;
      }
      const nav: Navigation = {
        url: withoutCredentials(e.request.url), status: null, startTs: e.timestamp, startWall: e.wallTime * 1000,
        ttfb: null, fcp: null, lcp: null, shifts: [],
      };
      byLoader.set(e.loaderId, nav);
      navs.push(nav);
      this.push(this.navigations, nav);
    });
    on('Network.responseReceived', (e) => {
      const details = e.response.securityDetails;
      if (details && this.sslDomain && safeHost(e.response.url) === this.sslDomain.toLowerCase()) {
        this.certificateValidTo = details.validTo * 1000;
      }
      const nav = byLoader.get(e.requestId);
      if (!nav || e.type !== 'Document') return;
      nav.status = e.response.status;
      const timing = e.response.timing;
      if (timing) {
        const headers = timing.receiveHeadersStart && timing.receiveHeadersStart > 0 ? timing.receiveHeadersStart : timing.receiveHeadersEnd;
        nav.ttfb = ms((timing.requestTime - nav.startTs) * 1000 + headers);
      }
    });
    on('Page.lifecycleEvent', (e) => {
      if (e.frameId !== mainFrame || e.name !== 'firstContentfulPaint') return;
      const nav = byLoader.get(e.loaderId);
      if (nav && nav.fcp === null) nav.fcp = ms((e.timestamp - nav.startTs) * 1000);
    });
    // Console messages are read here rather than through puppeteer's page events, which drop a
    // message whose execution context puppeteer has not registered yet.
    on('Runtime.consoleAPICalled', (e) => {
      const text = e.args.map(remoteText).join(' ');
      this.push(this.console, { type: consoleType(e.type), text: this.clip(text), url: locationUrl(e.stackTrace?.callFrames[0]?.url) });
    });
    on('Log.entryAdded', ({ entry }) => {
      if (entry.source === 'worker') return;
      this.push(this.console, { type: consoleType(entry.level), text: this.clip(entry.text), url: locationUrl(entry.url) });
    });
    on('PerformanceTimeline.timelineEventAdded', ({ event }) => {
      if (event.frameId !== mainFrame) return;
      const at = event.time * 1000;
      const nav = current(at);
      if (!nav) return;
      if (event.lcpDetails) {
        const painted = event.lcpDetails.renderTime || event.lcpDetails.loadTime;
        if (painted) nav.lcp = ms(painted * 1000 - nav.startWall);
      } else if (event.layoutShiftDetails && !event.layoutShiftDetails.hadRecentInput) {
        nav.shifts.push({ at, value: event.layoutShiftDetails.value });
      }
    });

    // On the page's own session only what puppeteer does not enable itself.
    if (enabled) {
      await session.send('PerformanceTimeline.enable', { eventTypes: ['largest-contentful-paint', 'layout-shift'] });
      return;
    }
    await Promise.all([
      session.send('Page.enable'),
      session.send('Page.setLifecycleEventsEnabled', { enabled: true }),
      session.send('Network.enable'),
      session.send('PerformanceTimeline.enable', { eventTypes: ['largest-contentful-paint', 'layout-shift'] }),
      session.send('Runtime.enable'),
      session.send('Log.enable'),
    ]);
  }

  /** Web vitals of each navigation, in the order they started. */
  webVitals(): NavigationVitals[] {
    return this.navigations.map((n) => ({
      url: n.url,
      status: n.status,
      TTFB: n.ttfb,
      FCP: n.fcp,
      LCP: n.lcp,
      // Shifts are only reported after a paint; a page that never painted has no CLS to give.
      CLS: n.fcp === null && n.shifts.length === 0 ? null : cumulativeLayoutShift(n.shifts),
    }));
  }
}

/** The DevTools session puppeteer drives `page` through (its internal `_client()`), or null in a puppeteer without it. */
function pageSession(page: Page): CDPSession | null {
  const client = (page as unknown as { _client?: () => CDPSession })._client;
  return typeof client === 'function' ? client.call(page) : null;
}

/** A console argument as text: its value, or the description DevTools shows for an object. */
function remoteText(arg: { type: string; subtype?: string; value?: unknown; unserializableValue?: string; description?: string }): string {
  if (arg.unserializableValue !== undefined) return arg.unserializableValue;
  if (arg.type === 'undefined') return 'undefined';
  if ('value' in arg) return typeof arg.value === 'string' ? arg.value : JSON.stringify(arg.value) ?? String(arg.value);
  return arg.description ?? `JSHandle@${arg.subtype ?? arg.type}`;
}

/** The console's names for levels, as puppeteer gives them (`warning` is `warn`). */
function consoleType(type: string): string {
  return type === 'warning' ? 'warn' : type;
}

function locationUrl(url: string | undefined): string | null {
  return url ? withoutCredentials(url) : null;
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}
