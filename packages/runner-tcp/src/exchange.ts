import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { lookupChecked, type LookupAllFunction, type TargetPolicy } from '@vigil/core';
import {
  abortFailure,
  literalFamilyFailure,
  lookupFailure,
  policyFailure,
  socketFailure,
  timeoutFailure,
  type ExchangeFailure,
  type Stage,
  type Target,
} from './failures.js';
import type { Sweeper } from './sweeper.js';

/** Resolves a hostname to one address of the given family, as `dns.lookup` does. */
export type LookupFunction = (hostname: string, family: 4 | 6) => Promise<{ address: string; family: number }>;

export const systemLookup: LookupFunction = (hostname, family) => dnsLookup(hostname, { family });

/** What every exchange of one runner shares. */
export interface ExchangeSettings {
  maxBytes: number;
  quietMs: number;
  lookup: LookupFunction;
  lookupAll: LookupAllFunction;
  sweeper: Sweeper;
}

export interface ExchangeRequest {
  hostname: string;
  port: number;
  family: 4 | 6;
  /** Sent once connected; null sends nothing. */
  data: string | null;
  /** False: the exchange ends as soon as the connection is open. */
  readResponse: boolean;
  limitMs: number;
  /** Which limit limitMs is, for messages: the run's time limit or the check's maxResponseTime. */
  limitIsMaxResponseTime: boolean;
  /**
   * With a policy that refuses internal addresses: every address of the name is looked up with
   * `lookupAll` and checked, and the run connects to the first only when none is refused.
   */
  policy: TargetPolicy | null;
}

export type EndReason = 'peer-closed' | 'byte-limit' | 'quiet' | 'not-read';

export interface ExchangeOutcome {
  failure: ExchangeFailure | null;
  /** Milliseconds (to 0.01): dns lookup, TCP handshake, from connected to the end of the response, and all. */
  phases: { dns: number; connection: number; data: number; total: number };
  /** Milliseconds from connected to the first response byte; null when none came. */
  firstByte: number | null;
  address: string | null;
  response: Buffer;
  bytesSent: number;
  bytesReceived: number;
  ended: EndReason | null;
}

// RFC 6761 §6.4: resolvers should answer names under .invalid negatively at once, without asking a server.
const RESERVED_INVALID = /(^|\.)invalid\.?$/i;

const EMPTY = Buffer.alloc(0);

const round = (ms: number) => Math.round(ms * 100) / 100;

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

const EXCHANGE = Symbol('vigil.tcpExchange');
/** What the shared socket listeners call on the exchange a socket belongs to. */
interface SocketOwner {
  readonly stage: Stage;
  readonly received: number;
  target(): Target;
  connected(): void;
  data(chunk: Buffer): void;
  fail(failure: ExchangeFailure): void;
  finish(failure: ExchangeFailure | null, at: number, ended: EndReason | null): void;
}
type Tagged = net.Socket & { [EXCHANGE]: SocketOwner };

// Listeners shared by all sockets (each finds its exchange on the socket), so that a run
// allocates no closures of its own: at thousands of checks a second, garbage is what costs.
// They are added with `on`, not `once`: 'connect' and 'end' come once anyway, and `once` would
// wrap each in a closure and remove it again on every run.
function onConnect(this: Tagged) {
  this[EXCHANGE].connected();
}
function onData(this: Tagged, chunk: Buffer) {
  this[EXCHANGE].data(chunk);
}
function onEnd(this: Tagged) {
  this[EXCHANGE].finish(null, performance.now(), 'peer-closed');
}
// Kept for the socket's whole life: an error after the exchange ended must not go unhandled.
function onError(this: Tagged, err: NodeJS.ErrnoException) {
  const x = this[EXCHANGE];
  x.fail(socketFailure(err, x.stage, x.target(), x.received));
}

/**
 * One TCP exchange: look the name up, connect, send, read until the peer closes, the byte
 * limit, a quiet period after the response started, or the time limit. Every way it can end is
 * an outcome, which `conclude` turns into what the promise resolves with (the promise rejects
 * only when `conclude` throws). The socket is always destroyed before the promise settles.
 */
class Exchange<T> implements SocketOwner {
  readonly promise: Promise<T>;
  stage: Stage = 'dns';
  received = 0;
  private resolve!: (value: T) => void;
  private reject!: (err: unknown) => void;
  private readonly t0 = performance.now();
  private readonly deadlineAt: number;
  private readonly host: string;
  private tDns: number | undefined;
  private tConnect: number | undefined;
  private tFirst: number | undefined;
  private tLast = 0;
  private socket: net.Socket | null = null;
  private address: string | null = null;
  private bytesSent = 0;
  // Most responses come in one chunk: it is kept alone, and an array only holds a longer response.
  private first: Buffer | null = null;
  private more: Buffer[] | null = null;
  private done = false;

  constructor(
    private readonly req: ExchangeRequest,
    private readonly settings: ExchangeSettings,
    private readonly signal: AbortSignal,
    private readonly conclude: (outcome: ExchangeOutcome) => T,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.deadlineAt = this.t0 + req.limitMs;
    this.host = unbracket(req.hostname);
  }

  start(): void {
    const { req, host, settings } = this;
    if (this.signal.aborted) {
      this.fail({ ...abortFailure('dns', this.target(), 0), message: 'The run was stopped before it started: its signal was already aborted' });
      return;
    }
    settings.sweeper.add(this);
    const literal = net.isIP(host);
    const policy = req.policy?.refuseInternalAddresses ? req.policy : null;
    if (literal !== 0) {
      const refusal = policy?.checkAddress(host);
      if (literal !== req.family) this.fail(literalFamilyFailure(host, req.family));
      else if (refusal) this.fail(policyFailure(refusal, host));
      else this.connect(host, this.t0);
      return;
    }
    if (RESERVED_INVALID.test(host)) {
      this.fail(lookupFailure(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), host, req.family));
      return;
    }
    if (policy) {
      // Every address is checked, so a name with one internal address among public ones is refused.
      lookupChecked(policy, host, req.family, settings.lookupAll).then(
        ({ refusal, addresses }) => {
          if (refusal) {
            this.tDns = performance.now();
            this.fail(policyFailure(refusal, host));
          } else {
            this.connect(addresses[0]!.address, performance.now());
          }
        },
        (err: NodeJS.ErrnoException) => this.fail(lookupFailure(err, host, req.family)),
      );
      return;
    }
    settings.lookup(host, req.family).then(
      (found) => this.connect(found.address, performance.now()),
      (err: NodeJS.ErrnoException) => this.fail(lookupFailure(err, host, req.family)),
    );
  }

  target(): Target {
    return { hostname: this.host, address: this.address, port: this.req.port, family: this.req.family };
  }

  // The signal is read on each tick rather than listened to: an abort is seen within one tick,
  // and a listener added and removed per run costs more than the tick's look.
  sweep(now: number): void {
    if (this.signal.aborted) {
      this.fail(abortFailure(this.stage, this.target(), now - this.t0));
    } else if (now >= this.deadlineAt) {
      const { limitMs, limitIsMaxResponseTime } = this.req;
      const limit = limitIsMaxResponseTime ? `the check's maxResponseTime of ${limitMs} ms` : `the run's time limit of ${limitMs} ms`;
      this.fail(timeoutFailure(this.stage, this.target(), { bytesSent: this.bytesSent, received: this.received, limitLabel: limit }));
    } else if (this.received > 0 && now - this.tLast >= this.settings.quietMs) {
      this.finish(null, this.tLast, 'quiet');
    }
  }

  connected(): void {
    this.tConnect = performance.now();
    this.stage = 'response';
    const { data, readResponse } = this.req;
    if (!readResponse) {
      this.finish(null, this.tConnect, 'not-read');
    } else if (data !== null) {
      this.bytesSent = Buffer.byteLength(data);
      this.socket!.write(data);
    }
  }

  data(chunk: Buffer): void {
    if (this.done) return;
    const now = performance.now();
    this.tFirst ??= now;
    this.tLast = now;
    if (this.first === null) this.first = chunk;
    else (this.more ??= [this.first]).push(chunk);
    this.received += chunk.length;
    if (this.received >= this.settings.maxBytes) this.finish(null, now, 'byte-limit');
  }

  fail(failure: ExchangeFailure): void {
    this.finish(failure, performance.now(), null);
  }

  finish(failure: ExchangeFailure | null, at: number, ended: EndReason | null): void {
    if (this.done) return;
    this.done = true;
    this.settings.sweeper.delete(this);
    this.socket?.destroy();
    const { t0, tDns, tConnect, tFirst, first, more } = this;
    const size = Math.min(this.received, this.settings.maxBytes);
    const outcome: ExchangeOutcome = {
      failure,
      phases: {
        dns: round((tDns ?? at) - t0),
        connection: tDns === undefined ? 0 : round((tConnect ?? at) - tDns),
        data: tConnect === undefined ? 0 : round(at - tConnect),
        total: round(at - t0),
      },
      firstByte: tFirst === undefined || tConnect === undefined ? null : round(tFirst - tConnect),
      address: this.address,
      response: more !== null ? Buffer.concat(more, size) : first === null ? EMPTY : first.length === size ? first : first.subarray(0, size),
      bytesSent: this.bytesSent,
      bytesReceived: size,
      ended,
    };
    let concluded: T;
    try {
      concluded = this.conclude(outcome);
    } catch (err) {
      this.reject(err);
      return;
    }
    this.resolve(concluded);
  }

  private connect(ip: string, resolvedAt: number): void {
    if (this.done) return;
    this.tDns = resolvedAt;
    this.address = ip;
    this.stage = 'connect';
    const s = net.connect({ host: ip, port: this.req.port, family: this.req.family, noDelay: true }) as Tagged;
    s[EXCHANGE] = this;
    this.socket = s;
    s.on('error', onError);
    s.on('connect', onConnect);
    s.on('data', onData);
    // 'end' or 'error' come before any 'close' the peer causes; the time limit backs both up.
    s.on('end', onEnd);
  }
}

/**
 * Runs one exchange; the promise resolves with what `conclude` makes of its outcome, so that a
 * run needs no promise of its own beside the exchange's.
 */
export function exchange<T>(req: ExchangeRequest, settings: ExchangeSettings, signal: AbortSignal, conclude: (outcome: ExchangeOutcome) => T): Promise<T> {
  const x = new Exchange(req, settings, signal, conclude);
  x.start();
  return x.promise;
}
