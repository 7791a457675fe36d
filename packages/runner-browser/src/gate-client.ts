import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { DevToolsGate } from './devtools-gate.js';
import { BROWSER_LEVEL, CONTEXT_DEFAULTED, NAVIGABLE, NO_SESSION, NOT_ALLOWED, Refusal, REFUSED, REFUSED_DOMAINS, scheme, type Message, type TargetInfo } from './gate-rules.js';

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
