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
  maxBytes: number;
  quietMs: number;
  lookup: LookupFunction;
  /**
   * With a policy that refuses internal addresses: every address of the name is looked up with
   * `lookupAll` and checked, and the run connects to the first only when none is refused.
   */
  policy: TargetPolicy | null;
  lookupAll: LookupAllFunction;
  sweeper: Sweeper;
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

const round = (ms: number) => Math.round(ms * 100) / 100;

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

const EXCHANGE = Symbol('vigil.tcpExchange');
type Tagged = net.Socket & { [EXCHANGE]: Exchange };

// Listeners shared by all sockets (each finds its exchange on the socket), so that a run
// allocates no closures of its own: at thousands of checks a second, garbage is what costs.
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
 * limit, a quiet period after the response started, or the time limit. It never rejects: every
 * way it can end is an outcome. The socket is always destroyed before the promise settles.
 */
class Exchange {
  readonly promise: Promise<ExchangeOutcome>;
  stage: Stage = 'dns';
  received = 0;
  private settle!: (outcome: ExchangeOutcome) => void;
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
  private chunks: Buffer[] = [];
  private done = false;

  constructor(private readonly req: ExchangeRequest, private readonly signal: AbortSignal) {
    this.promise = new Promise<ExchangeOutcome>((resolve) => (this.settle = resolve));
    this.deadlineAt = this.t0 + req.limitMs;
    this.host = unbracket(req.hostname);
  }

  start(): void {
    const { req, host } = this;
    if (this.signal.aborted) {
      this.fail({ ...abortFailure('dns', this.target(), 0), message: 'The run was stopped before it started: its signal was already aborted' });
      return;
    }
    req.sweeper.add(this);
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
      lookupChecked(policy, host, req.family, req.lookupAll).then(
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
    req.lookup(host, req.family).then(
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
    } else if (this.received > 0 && now - this.tLast >= this.req.quietMs) {
      this.finish(null, this.tLast, 'quiet');
    }
  }

  connected(): void {
    this.tConnect = performance.now();
    this.stage = 'response';
    if (!this.req.readResponse) {
      this.finish(null, this.tConnect, 'not-read');
    } else if (this.req.data !== null) {
      this.bytesSent = Buffer.byteLength(this.req.data);
      this.socket!.write(this.req.data);
    }
  }

  data(chunk: Buffer): void {
    const now = performance.now();
    this.tFirst ??= now;
    this.tLast = now;
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (this.received >= this.req.maxBytes) this.finish(null, now, 'byte-limit');
  }

  fail(failure: ExchangeFailure): void {
    this.finish(failure, performance.now(), null);
  }

  finish(failure: ExchangeFailure | null, at: number, ended: EndReason | null): void {
    if (this.done) return;
    this.done = true;
    this.req.sweeper.delete(this);
    this.socket?.destroy();
    const { t0, tDns, tConnect, tFirst, chunks, req } = this;
    const size = Math.min(this.received, req.maxBytes);
    this.settle({
      failure,
      phases: {
        dns: round((tDns ?? at) - t0),
        connection: tDns === undefined ? 0 : round((tConnect ?? at) - tDns),
        data: tConnect === undefined ? 0 : round(at - tConnect),
        total: round(at - t0),
      },
      firstByte: tFirst === undefined || tConnect === undefined ? null : round(tFirst - tConnect),
      address: this.address,
      response: chunks.length === 1 && chunks[0]!.length === size ? chunks[0]! : Buffer.concat(chunks, size),
      bytesSent: this.bytesSent,
      bytesReceived: size,
      ended,
    });
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
    s.once('connect', onConnect);
    s.on('data', onData);
    // 'end' or 'error' come before any 'close' the peer causes; the time limit backs both up.
    s.once('end', onEnd);
  }
}

export function exchange(req: ExchangeRequest, signal: AbortSignal): Promise<ExchangeOutcome> {
  const x = new Exchange(req, signal);
  x.start();
  return x.promise;
}
