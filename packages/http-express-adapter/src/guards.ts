// The router's guards against one client crowding others out: failed authentication throttled per
// client address (before the key is looked up), and a cap on the requests each key has in flight.
import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { isVigilError } from '@vigil/core';
import { errorBody, sendError } from './errors.js';

export interface AuthThrottleOptions {
  /** Failed authentications allowed per client address and window. Default 30. */
  limit?: number;
  /** Window length in milliseconds. Default 60,000. */
  windowMs?: number;
  /**
   * Where failures are counted (any express-rate-limit store that can `get`). Default: this
   * process's memory; processes behind one balancer each count their own unless they share one.
   */
  store?: Store;
}

/**
 * The address a request comes from: the socket's peer, or with `trustProxy` Express's `req.ip`
 * (which follows the host app's `trust proxy` setting, e.g. `X-Forwarded-For` from its balancer).
 */
export function clientAddress(req: Request, trustProxy: boolean): string {
  return (trustProxy ? req.ip : undefined) ?? req.socket.remoteAddress ?? 'unknown';
}

/** Credentials that authenticated within the window, by digest, so a throttled address still lets them in. */
class KnownCredentials {
  private readonly until = new Map<string, number>();
  constructor(private readonly windowMs: number, private readonly max = 10_000) {}

  add(digest: string): void {
    this.until.delete(digest);
    this.until.set(digest, Date.now() + this.windowMs);
    if (this.until.size > this.max) this.until.delete(this.until.keys().next().value!);
  }

  has(digest: string): boolean {
    const until = this.until.get(digest);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.until.delete(digest);
    return false;
  }
}

export interface AuthThrottle {
  /** Runs before authentication: answers 429 while the address is over its failures, unless its key authenticated lately. */
  before: RequestHandler;
  /** Called with what authentication threw (counted when it is a 401 or 403) or with success. */
  failed(req: Request, err: unknown): Promise<void>;
  succeeded(req: Request): void;
}

/**
 * Only failures count: a client whose keys are right is never slowed by this, and a right key
 * from another address never is. Once an address has `limit` failures in the window, its further
 * attempts are refused with 429 and `Retry-After` without looking the key up, except for a key
 * that authenticated within the window (from anywhere): a host behind one NAT address keeps working
 * while someone there guesses.
 */
export function authThrottle(options: AuthThrottleOptions, trustProxy: boolean): AuthThrottle {
  const windowMs = options.windowMs ?? 60_000;
  const limit = options.limit ?? 30;
  const store = options.store ?? new MemoryStore();
  if (typeof store.get !== 'function') throw new TypeError('authThrottle.store must implement get()');
  void store.init?.({ windowMs } as Options);
  const known = new KnownCredentials(windowMs);
  const key = (req: Request) => `auth-failures:${clientAddress(req, trustProxy)}`;

  const before: RequestHandler = (req, res, next) => {
    Promise.resolve(store.get!(key(req))).then((info) => {
      if (!info || info.totalHits < limit) return next();
      const digest = presentedKey(req);
      if (digest && known.has(digest)) return next();
      const seconds = Math.max(1, Math.ceil(((info.resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
      sendError(res, 429, errorBody(429, `Too many failed authentications from this address; retry after the time in Retry-After`), seconds);
    }, next);
  };
  return {
    before,
    async failed(req, err) {
      if (isVigilError(err) && (err.statusCode === 401 || err.statusCode === 403)) await store.increment(key(req));
    },
    succeeded(req) {
      const digest = presentedKey(req);
      if (digest) known.add(digest);
    },
  };
}

/** A digest of the API key the request presents (`Bearer <key>`, the scheme in any case), if any. */
function presentedKey(req: Request): string | undefined {
  const key = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
  return key === undefined ? undefined : createHash('sha256').update(key).digest('base64url');
}

export interface InFlightOptions {
  /** Requests of one API key under way at once. Default 4. */
  limit?: number;
  /**
   * Requests of one key that wait for a slot beyond those, served in order as slots free; beyond
   * them 429 with `Retry-After: 1`. Default 1,000; 0 refuses at once.
   */
  queue?: number;
  /** How long a request may wait for a slot before it is answered 429. Default 10,000 ms. */
  waitMs?: number;
}

/** The requests of one key under way at once that the options allow. */
export function inFlightLimit(options: number | InFlightOptions): number {
  return (typeof options === 'number' ? options : options.limit) ?? 4;
}

interface KeySlots {
  running: number;
  waiting: (() => void)[];
}

/**
 * At most `limit` requests of one key under way; the next ones wait in line for a slot (up to
 * `queue` of them, each up to `waitMs`), and beyond that the key gets 429 with `Retry-After: 1`.
 * Counted before authentication, by the key presented, so a key's excess costs no key lookup and
 * does not queue in front of other keys' requests. A key that opens hundreds of connections thus
 * has only `limit` requests taking turns with everyone else's, and its other connections wait
 * quietly instead of retrying in a loop. A slot is released when its response finishes or its
 * client hangs up (the response's `close`); a waiting request whose client hung up leaves the line.
 * Counted in this process.
 */
export function inFlightCap(options: number | InFlightOptions): RequestHandler {
  const limit = inFlightLimit(options);
  const { queue = 1_000, waitMs = 10_000 } = typeof options === 'number' ? {} : options;
  const slots = new Map<string, KeySlots>();
  const refuse = (res: Response) =>
    sendError(res, 429, errorBody(429, `More than ${limit} requests of this API key in flight; retry after the time in Retry-After`), 1);
  const release = (key: string, entry: KeySlots) => {
    const next = entry.waiting.shift();
    if (next) return next();
    entry.running -= 1;
    if (entry.running === 0) slots.delete(key);
  };
  return (req, res, next) => {
    const key = presentedKey(req);
    // Without a key the request fails authentication, which the throttle above counts.
    if (key === undefined) return next();
    let entry = slots.get(key);
    if (!entry) slots.set(key, (entry = { running: 0, waiting: [] }));
    const start = () => {
      res.once('close', () => release(key, entry));
      next();
    };
    if (entry.running < limit) {
      entry.running += 1;
      return start();
    }
    if (entry.waiting.length >= queue) return refuse(res);
    // The slot passes from the request that ends to this one, so `running` stays as it is.
    const admit = () => {
      clearTimeout(timer);
      res.off('close', leave);
      start();
    };
    const leave = () => {
      clearTimeout(timer);
      const at = entry.waiting.indexOf(admit);
      if (at >= 0) entry.waiting.splice(at, 1);
    };
    const timer = setTimeout(() => {
      leave();
      res.off('close', leave);
      refuse(res);
    }, waitMs);
    entry.waiting.push(admit);
    res.once('close', leave);
  };
}
