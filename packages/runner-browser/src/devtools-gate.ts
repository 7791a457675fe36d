import type { ConnectionTransport } from 'puppeteer-core';
import { GateClient } from './gate-client.js';
import { NOT_ALLOWED, type Message, type TargetInfo } from './gate-rules.js';

export { GateClient } from './gate-client.js';

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
 * with that message. The rules' tables are in gate-rules.ts, a script's connection in
 * gate-client.ts.
 */

/** The message ids the host's puppeteer uses stay below this; the gate's own and its clients' are renumbered from it. */
const GATE_IDS = 1_000_000_000;

type Pending =
  | { kind: 'client'; client: GateClient; id: number; sessionId: string | undefined; method: string }
  | { kind: 'gate'; resolve: (m: Message) => void };

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
