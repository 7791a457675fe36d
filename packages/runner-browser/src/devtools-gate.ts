import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { ConnectionTransport } from 'puppeteer-core';

/**
 * The one way into a pooled Chromium. The browser listens on no port: it speaks the DevTools
 * protocol over a pipe that only the host holds (`--remote-debugging-pipe`). The host's own
 * puppeteer goes through untouched; each script process gets a connection of its own (over its
 * IPC channel) that sees and drives only its run's browser context:
 *
 * - its browser-level commands go to a browser session of its own, and only the commands a
 *   script needs are taken there (targets, contexts, permissions, cookies, downloads);
 * - every target, context and session a command names must be its run's;
 * - the targets, contexts and sessions it is told of are its run's alone: other runs' pages,
 *   found by its auto-attach, are let go without it ever seeing them;
 * - it may navigate to http(s), data:, blob: and about: URLs only (no file:, chrome: and such),
 *   and the files it hands to the browser (uploads, drops, downloads) must lie in its run folder;
 * - what reaches across the whole browser (tracing, extensions, closing or crashing it) is
 *   refused;
 * - in a browser fenced by a target policy (its traffic goes through the host's proxy), a
 *   context of its own proxy (`Target.createBrowserContext` with `proxyServer`) is refused.
 *
 * A refused command is answered with a protocol error that says why, so that the script fails
 * with that message.
 */

/** The message ids the host's puppeteer uses stay below this; the gate's own and its clients' are renumbered from it. */
const GATE_IDS = 1_000_000_000;
const NOT_ALLOWED = -32000;
const NO_SESSION = -32001;

/** URL schemes a script may open a page at. */
const NAVIGABLE = new Set(['http:', 'https:', 'about:', 'data:', 'blob:']);

/** Browser-level commands a script's connection may send (puppeteer's own needs and the context-scoped ones). */
const BROWSER_LEVEL = new Set([
  'Target.getBrowserContexts',
  'Target.setDiscoverTargets',
  'Target.setAutoAttach',
  'Target.createTarget',
  'Target.createBrowserContext',
  'Target.disposeBrowserContext',
  'Target.getTargets',
  'Target.getTargetInfo',
  'Target.attachToTarget',
  'Target.detachFromTarget',
  'Target.closeTarget',
  'Target.activateTarget',
  'Target.autoAttachRelated',
  'Browser.getVersion',
  'Browser.grantPermissions',
  'Browser.resetPermissions',
  'Browser.setPermission',
  'Browser.setDownloadBehavior',
  'Browser.getWindowForTarget',
  'Storage.getCookies',
  'Storage.setCookies',
  'Storage.clearCookies',
  'SystemInfo.getInfo',
  'SystemInfo.getFeatureState',
]);

/** Browser-level commands that act on the default context when they name none: a script's act on its run's. */
const CONTEXT_DEFAULTED = new Set([
  'Target.createTarget',
  'Browser.grantPermissions',
  'Browser.resetPermissions',
  'Browser.setPermission',
  'Browser.setDownloadBehavior',
  'Storage.getCookies',
  'Storage.setCookies',
  'Storage.clearCookies',
]);

/** Commands that reach past the run on any session. */
const REFUSED = new Map<string, string>([
  ['Target.attachToBrowserTarget', 'it would give a connection to the whole browser'],
  ['Target.exposeDevToolsProtocol', 'it would give a page a connection to the whole browser'],
  ['Target.setRemoteLocations', 'it would make the browser connect elsewhere'],
  ['Target.sendMessageToTarget', 'sessions are flat'],
  ['Browser.close', 'the browser is shared with other runs'],
  ['Browser.crash', 'the browser is shared with other runs'],
  ['Browser.crashGpuProcess', 'the browser is shared with other runs'],
  ['Browser.executeBrowserCommand', 'the browser is shared with other runs'],
  ['Browser.setWindowBounds', 'windows are shared with other runs'],
  ['Browser.getBrowserCommandLine', 'the browser is shared with other runs'],
  ['Network.loadNetworkResource', 'it loads files of the host'],
]);
const REFUSED_DOMAINS = new Map<string, string>([
  ['Tracing', 'a trace records every page of the browser'],
  ['Extensions', 'extensions act on every page of the browser'],
  ['PWA', 'installed apps outlive the run'],
]);

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  sessionId?: string;
}

interface TargetInfo {
  targetId: string;
  type?: string;
  browserContextId?: string;
}

type Pending =
  | { kind: 'client'; client: GateClient; id: number; sessionId: string | undefined; method: string }
  | { kind: 'gate'; resolve: (m: Message) => void };

class Refusal extends Error {}

/** What the gate needs of the browser's end of the pipe. */
export interface BrowserPipe {
  write(data: string): void;
}

export interface GateOptions {
  /**
   * The browser's traffic goes through the target policy's proxy: a script may not make a
   * context with a proxy (or bypass list) of its own, which would take its pages past it.
   */
  fenced?: boolean;
}

export class DevToolsGate {
  private nextId = GATE_IDS;
  private readonly pending = new Map<number, Pending>();
  /** Sessions and who holds them: a client, or the gate itself (its own browser session). */
  private readonly owners = new Map<string, GateClient | 'gate'>();
  /** Sessions let go of (other runs' targets auto-attached by a client): what still comes on them is dropped. */
  private readonly discarded = new Set<string>();
  private session: Promise<string> | null = null;
  private closed = false;

  /** The host's connection, for `puppeteer.connect({ transport })`: passed through as it is. */
  readonly host: ConnectionTransport;

  readonly fenced: boolean;

  constructor(private readonly pipe: BrowserPipe, options: GateOptions = {}) {
    this.fenced = options.fenced === true;
    const gate = this;
    this.host = {
      send(message: string) {
        if (!gate.closed) pipe.write(message);
      },
      close() {},
    };
  }

  /** The gate's own browser session, made first: the one the clients' sessions come from. */
  ready(): Promise<string> {
    this.session ??= this.command<{ sessionId: string }>('Target.attachToBrowserTarget', {}).then((r) => {
      this.owners.set(r.sessionId, 'gate');
      return r.sessionId;
    });
    return this.session;
  }

  /** A message from the browser. */
  receive(raw: string): void {
    let message: Message;
    try {
      message = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    if (typeof message.id === 'number') {
      if (message.id < GATE_IDS) return this.host.onmessage?.(raw);
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (pending.kind === 'gate') pending.resolve(message);
      else pending.client.answer(pending, message);
      return;
    }
    const { sessionId } = message;
    if (message.method === 'Target.detachedFromTarget' && typeof message.params?.sessionId === 'string') {
      this.discarded.delete(message.params.sessionId);
    }
    if (sessionId !== undefined) {
      const owner = this.owners.get(sessionId);
      if (owner === 'gate') return;
      if (owner) return owner.event(message);
      if (this.discarded.has(sessionId)) return;
    }
    this.host.onmessage?.(raw);
  }

  /** The browser is gone: every connection closes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.pending.values()) {
      if (pending.kind === 'gate') pending.resolve({ error: { code: NOT_ALLOWED, message: 'The browser is gone' } });
    }
    this.pending.clear();
    for (const owner of new Set(this.owners.values())) if (owner !== 'gate') owner.close();
    this.owners.clear();
    this.host.onclose?.();
  }

  /** A connection for a script process, limited to the browser context `contextId` and the folder `dir`. */
  client(options: { contextId: string; dir: string; send: (data: string) => void }): GateClient {
    return new GateClient(this, options);
  }

  /** Sends a command of the gate's own and waits for its answer. */
  async command<T>(method: string, params: Record<string, unknown>, sessionId?: string): Promise<T> {
    if (this.closed) throw new Error('The browser is gone');
    const id = this.nextId++;
    const answer = new Promise<Message>((resolve) => this.pending.set(id, { kind: 'gate', resolve }));
    this.pipe.write(JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId }));
    const message = await answer;
    if (message.error) throw new Error(`${method}: ${message.error.message}`);
    return (message.result ?? {}) as T;
  }

  /** Sends a client's command on, renumbered; its answer goes back to the client. */
  forward(client: GateClient, message: Message, sessionId: string, originalSession: string | undefined): void {
    if (this.closed) return;
    const id = this.nextId++;
    this.pending.set(id, { kind: 'client', client, id: message.id!, sessionId: originalSession, method: message.method! });
    this.pipe.write(JSON.stringify({ id, method: message.method, params: message.params ?? {}, sessionId }));
  }

  hold(sessionId: string, client: GateClient): void {
    this.owners.set(sessionId, client);
  }

  letGo(sessionId: string, discard: boolean): void {
    this.owners.delete(sessionId);
    if (discard) this.discarded.add(sessionId);
  }

  /** What the browser says of a target, or null when it knows none by that id. */
  async targetInfo(targetId: string): Promise<TargetInfo | null> {
    const session = await this.ready();
    const { targetInfo } = await this.command<{ targetInfo: TargetInfo }>('Target.getTargetInfo', { targetId }, session).catch(() => ({ targetInfo: null }));
    return targetInfo;
  }
}

/** One script process's connection through the gate. */
export class GateClient {
  /** Its browser session: where its browser-level commands go and its browser-level events come from. */
  private root: Promise<string | null>;
  private rootId: string | null = null;
  /** Its browser-level sessions: the root, and any it opened on the browser target (gated the same way). */
  private readonly roots = new Set<string>();
  private readonly contexts = new Set<string>();
  private readonly targets = new Set<string>();
  /**
   * The browser-type targets it was told of, also those that ended. Chromium makes one per
   * browser session (every client's own among them) and ends it with that session; none is the
   * run's, and attaching to any of them gives a gated browser session of the client's own.
   */
  private readonly browserTargets = new Set<string>();
  private readonly sessions = new Set<string>();
  private queue: Promise<unknown>;
  private closed = false;
  private readonly runDir: Promise<string>;

  constructor(
    private readonly gate: DevToolsGate,
    private readonly options: { contextId: string; dir: string; send: (data: string) => void },
  ) {
    this.contexts.add(options.contextId);
    this.runDir = realpath(options.dir).catch(() => resolve(options.dir));
    this.root = gate.ready()
      .then((session) => gate.command<{ sessionId: string }>('Target.attachToBrowserTarget', {}, session))
      .then(({ sessionId }) => {
        if (this.closed) {
          void gate.ready().then((session) => gate.command('Target.detachFromTarget', { sessionId }, session)).catch(() => {});
          return null;
        }
        this.rootId = sessionId;
        this.roots.add(sessionId);
        gate.hold(sessionId, this);
        return sessionId;
      })
      .catch(() => null);
    this.queue = this.root;
  }

  /** A message from the script's process, handled in the order they came. */
  receive(data: string): void {
    if (this.closed) return;
    this.queue = this.queue.then(() => this.handle(data)).catch(() => {});
  }

  private async handle(data: string): Promise<void> {
    if (this.closed) return;
    let message: Message;
    try {
      message = JSON.parse(data) as Message;
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null || typeof message.id !== 'number' || typeof message.method !== 'string') return;
    const { sessionId } = message;
    if (sessionId !== undefined && (typeof sessionId !== 'string' || !this.sessions.has(sessionId))) {
      return this.reply({ id: message.id, error: { code: NO_SESSION, message: 'Session with given id not found.' }, sessionId });
    }
    const root = await this.root;
    if (root === null || this.closed) {
      return this.reply({ id: message.id, error: { code: NOT_ALLOWED, message: 'The browser is gone' }, sessionId });
    }
    try {
      message.params = message.params && typeof message.params === 'object' ? message.params : {};
      const browserLevel = sessionId === undefined || this.roots.has(sessionId);
      if (await this.onBrowserTarget(message, browserLevel)) return;
      await this.check(message.method, message.params, browserLevel);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      return this.reply({ id: message.id, error: { code: NOT_ALLOWED, message: err.message }, sessionId });
    }
    this.gate.forward(this, message, sessionId ?? root, sessionId);
  }

  /**
   * Attaching to the browser target gives a second browser-level session, made by the gate and
   * gated like the first; detaching from it ends it. Answers whether the message was handled here.
   */
  private async onBrowserTarget(message: Message, browserLevel: boolean): Promise<boolean> {
    const params = message.params!;
    if (message.method === 'Target.attachToTarget' && browserLevel && typeof params.targetId === 'string' && !this.targets.has(params.targetId)
      && (this.browserTargets.has(params.targetId) || (await this.gate.targetInfo(params.targetId))?.type === 'browser')) {
      const gateSession = await this.gate.ready();
      const { sessionId } = await this.gate.command<{ sessionId: string }>('Target.attachToBrowserTarget', {}, gateSession);
      this.roots.add(sessionId);
      this.sessions.add(sessionId);
      this.gate.hold(sessionId, this);
      const on = message.sessionId === this.rootId ? undefined : message.sessionId;
      this.reply({
        method: 'Target.attachedToTarget',
        params: { sessionId, targetInfo: { targetId: params.targetId, type: 'browser', title: '', url: '', attached: true, canAccessOpener: false }, waitingForDebugger: false },
        sessionId: on,
      });
      this.reply({ id: message.id, result: { sessionId }, sessionId: message.sessionId });
      return true;
    }
    const detaching = message.method === 'Target.detachFromTarget' && typeof params.sessionId === 'string' ? params.sessionId : null;
    if (detaching !== null && detaching !== this.rootId && this.roots.has(detaching)) {
      this.roots.delete(detaching);
      this.sessions.delete(detaching);
      this.gate.letGo(detaching, true);
      const gateSession = await this.gate.ready();
      await this.gate.command('Target.detachFromTarget', { sessionId: detaching }, gateSession).catch(() => {});
      this.reply({ method: 'Target.detachedFromTarget', params: { sessionId: detaching }, sessionId: message.sessionId });
      this.reply({ id: message.id, result: {}, sessionId: message.sessionId });
      return true;
    }
    return false;
  }

  /** Throws a Refusal saying why, or returns with `params` made to act on the run only. */
  private async check(method: string, params: Record<string, unknown>, browserLevel: boolean): Promise<void> {
    const refuse = (why: string) => {
      throw new Refusal(`${method} is not available to check scripts: ${why}`);
    };
    const reason = REFUSED.get(method) ?? REFUSED_DOMAINS.get(method.split('.')[0] ?? '');
    if (reason) refuse(reason);
    if (browserLevel && !BROWSER_LEVEL.has(method)) refuse('it acts on the whole browser');
    if (browserLevel && CONTEXT_DEFAULTED.has(method) && params.browserContextId === undefined) params.browserContextId = this.options.contextId;
    if (method === 'Target.createBrowserContext' && this.gate.fenced && (params.proxyServer !== undefined || params.proxyBypassList !== undefined)) {
      refuse('the browser\'s traffic goes through the host\'s target policy, not a proxy of the script\'s');
    }
    if (params.browserContextId !== undefined && !this.contexts.has(params.browserContextId as string)) refuse('that browser context is not the run\'s');
    if (params.targetId !== undefined && !(await this.ownsTarget(params.targetId))) refuse('that target is not the run\'s');
    if (params.sessionId !== undefined && !this.sessions.has(params.sessionId as string)) refuse('that session is not the run\'s');
    if (method === 'Page.navigate' || method === 'Target.createTarget') {
      const url = typeof params.url === 'string' ? params.url : '';
      if (url !== '' && !NAVIGABLE.has(scheme(url))) refuse(`a check opens http(s), data:, blob: and about: URLs, not ${scheme(url) || url}`);
    }
    const files = [
      ...(Array.isArray(params.files) ? params.files : []),
      ...(Array.isArray((params.data as { files?: unknown } | undefined)?.files) ? (params.data as { files: unknown[] }).files : []),
    ];
    for (const file of files) {
      if (typeof file !== 'string' || !(await this.inRunDir(file))) refuse(`${String(file)} is not in the run's folder`);
    }
    if (params.downloadPath !== undefined && (typeof params.downloadPath !== 'string' || !(await this.inRunDir(params.downloadPath)))) {
      refuse(`downloads go to the run's folder, not ${String(params.downloadPath)}`);
    }
  }

  private async ownsTarget(targetId: unknown): Promise<boolean> {
    if (typeof targetId !== 'string') return false;
    if (this.targets.has(targetId)) return true;
    const context = (await this.gate.targetInfo(targetId))?.browserContextId;
    if (context === undefined || !this.contexts.has(context)) return false;
    this.targets.add(targetId);
    return true;
  }

  /** Whether `path` (as the browser would open it, links followed) lies in the run's folder. */
  private async inRunDir(path: string): Promise<boolean> {
    const dir = await this.runDir;
    const absolute = resolve(dir, path);
    let real = absolute;
    // A path not made yet (a download folder) counts by its nearest existing parent.
    for (let at = absolute, rest = ''; ; ) {
      const found = await realpath(at).then((p) => p, () => null);
      if (found !== null) {
        real = rest === '' ? found : resolve(found, rest);
        break;
      }
      const parent = dirname(at);
      if (parent === at) break;
      rest = rest === '' ? relative(parent, at) : `${relative(parent, at)}${sep}${rest}`;
      at = parent;
    }
    const inside = relative(dir, real);
    return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
  }

  /** The browser's answer to one of this client's commands. */
  answer(pending: { id: number; sessionId: string | undefined; method: string }, message: Message): void {
    if (this.closed) return;
    if (message.result) this.learn(pending.method, message.result);
    this.reply({ id: pending.id, ...(message.error ? { error: message.error } : { result: message.result ?? {} }), sessionId: pending.sessionId });
  }

  /** What a command's answer tells of the run's contexts, targets and sessions; lists are cut to the run's. */
  private learn(method: string, result: Record<string, unknown>): void {
    switch (method) {
      case 'Target.createBrowserContext':
        this.contexts.add(result.browserContextId as string);
        break;
      case 'Target.createTarget':
        this.targets.add(result.targetId as string);
        break;
      case 'Target.attachToTarget':
        this.own(result.sessionId as string);
        break;
      case 'Target.getBrowserContexts':
        result.browserContextIds = ((result.browserContextIds as string[]) ?? []).filter((id) => this.contexts.has(id));
        break;
      case 'Target.getTargets':
        result.targetInfos = ((result.targetInfos as TargetInfo[]) ?? []).filter((t) => this.visible(t));
        for (const t of result.targetInfos as TargetInfo[]) this.know(t);
        break;
      case 'Target.getTargetInfo': {
        const info = result.targetInfo as TargetInfo | undefined;
        // Without a target named, the answer is the browser's own.
        if (info && info.type !== 'browser' && !this.isRuns(info)) delete result.targetInfo;
        break;
      }
    }
  }

  /**
   * Keeps a target the client was told of: the run's as its own; a browser target apart, never
   * owned, so that attaching to it always gives a gated browser session.
   */
  private know(info: TargetInfo): void {
    if (info.type === 'browser') this.browserTargets.add(info.targetId);
    else this.targets.add(info.targetId);
  }

  /** What the client may be told of: the run's targets and the browser's own. */
  private visible(info: TargetInfo | undefined): boolean {
    return info?.type === 'browser' || this.isRuns(info);
  }

  private isRuns(info: TargetInfo | undefined): boolean {
    return info?.browserContextId !== undefined && this.contexts.has(info.browserContextId);
  }

  private own(sessionId: string): void {
    if (typeof sessionId !== 'string') return;
    this.sessions.add(sessionId);
    this.gate.hold(sessionId, this);
  }

  /** An event on one of this client's sessions. */
  event(message: Message): void {
    if (this.closed) return;
    const browserLevel = this.roots.has(message.sessionId!);
    const params = message.params ?? {};
    switch (message.method) {
      case 'Target.targetCreated':
      case 'Target.targetInfoChanged': {
        const info = params.targetInfo as TargetInfo;
        if (!this.visible(info)) return;
        this.know(info);
        break;
      }
      case 'Target.targetDestroyed':
      case 'Target.targetCrashed': {
        const id = params.targetId as string;
        // A browser target that ended with its session is told of too. It stays known as one:
        // puppeteer may keep it as the browser's (Browser.target()), and attaching to it still
        // means a browser session of the client's own.
        if (!this.targets.has(id) && !this.browserTargets.has(id)) return;
        if (message.method === 'Target.targetDestroyed') this.targets.delete(id);
        break;
      }
      case 'Target.attachedToTarget': {
        const info = params.targetInfo as TargetInfo;
        const session = params.sessionId as string;
        // A target attached under one of the run's own (a frame, a worker) is the run's too.
        if (browserLevel && !this.isRuns(info)) {
          this.letGo(session, message.sessionId!, params.waitingForDebugger === true);
          return;
        }
        if (info?.targetId) this.targets.add(info.targetId);
        this.own(session);
        break;
      }
      case 'Target.detachedFromTarget':
        if (!this.sessions.has(params.sessionId as string)) return;
        this.sessions.delete(params.sessionId as string);
        this.gate.letGo(params.sessionId as string, false);
        break;
      case 'Target.receivedMessageFromTarget':
        return;
    }
    this.reply(message.sessionId === this.rootId ? { method: message.method, params } : message);
  }

  /** Another run's target that this client's auto-attach reached: resumed and detached unseen. */
  private letGo(sessionId: string, parent: string, waiting: boolean): void {
    this.gate.letGo(sessionId, true);
    if (waiting) void this.gate.command('Runtime.runIfWaitingForDebugger', {}, sessionId).catch(() => {});
    void this.gate.command('Target.detachFromTarget', { sessionId }, parent).catch(() => {});
  }

  private reply(message: Message): void {
    if (message.sessionId === undefined) delete message.sessionId;
    if (!this.closed) this.options.send(JSON.stringify(message));
  }

  /** The script's process is gone: its sessions are detached and what still comes on them is dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const session of this.sessions) this.gate.letGo(session, true);
    this.sessions.clear();
    for (const root of this.roots) {
      this.gate.letGo(root, true);
      void this.gate.ready().then((session) => this.gate.command('Target.detachFromTarget', { sessionId: root }, session)).catch(() => {});
    }
    this.roots.clear();
  }
}

function scheme(url: string): string {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url.trim());
  return match ? `${match[1]!.toLowerCase()}:` : '';
}
