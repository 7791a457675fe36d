import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { parse as parseCookies } from 'cookie';
import { hasCode, type Vigil } from '@vigil/core';

/** Who a console request acts for, and the token its forms must send back. */
export interface ConsoleContext {
  accountId: string;
  /** The CSRF token of this browser: every form and every script's POST carries it. */
  csrf: string;
  /** Signed in with an API key (the console can sign it out), or by the host's own `auth`. */
  via: 'key' | 'host';
}

/** The host's own sign-in: the account a request acts for, or null when nobody is signed in. */
export type ConsoleAuth = (req: Request) => string | null | undefined | Promise<string | null | undefined>;

export interface SessionOptions {
  auth?: ConsoleAuth;
  /** How long an API-key session lasts, in milliseconds. Default 12 hours. */
  sessionTtlMs?: number;
  /** Mark cookies Secure. Default: when the request came over https (`req.secure`). */
  secureCookies?: boolean;
}

export const SESSION_COOKIE = 'vigil_console';
export const CSRF_COOKIE = 'vigil_console_csrf';
const DEFAULT_TTL_MS = 12 * 3_600_000;

interface SealedSession {
  /** The account, as the sign-in form named it. */
  a: string;
  /** The API key: checked again on every request, so a revoked key ends its sessions at once. */
  k: string;
  /** Expiry, epoch ms. */
  e: number;
}

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Sessions of the console. Both cookies are sealed with the host's secret key (Vigil's SecretBox,
 * AES-GCM): the session cookie holds the API key and its expiry, the CSRF cookie a random token
 * that forms repeat in plain. Neither can be read or made without the key, so a page of another
 * site can neither forge the token nor learn it; both are HttpOnly and SameSite=Strict besides.
 */
export class ConsoleSessions {
  private readonly ttlMs: number;

  constructor(private readonly vigil: Vigil, private readonly options: SessionOptions) {
    this.ttlMs = options.sessionTtlMs ?? DEFAULT_TTL_MS;
  }

  private get box() {
    return this.vigil.deps.secretBox;
  }

  private now(): number {
    return this.vigil.deps.clock.now().getTime();
  }

  private cookies(req: Request): Record<string, string | undefined> {
    return req.headers.cookie ? parseCookies(req.headers.cookie) : {};
  }

  private open(sealed: string | undefined): string | null {
    if (!sealed) return null;
    try {
      return this.box.decrypt(sealed);
    } catch {
      return null;
    }
  }

  private cookieOptions(req: Request, maxAge?: number) {
    return {
      httpOnly: true,
      sameSite: 'strict' as const,
      secure: this.options.secureCookies ?? req.secure,
      path: req.baseUrl || '/',
      ...(maxAge === undefined ? {} : { maxAge }),
    };
  }

  /** The token and the account it was made for, from the CSRF cookie; null when it is missing or not this host's. */
  private sealedCsrf(req: Request): { t: string; a: string } | null {
    const raw = this.open(this.cookies(req)[CSRF_COOKIE]);
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as { t?: unknown; a?: unknown };
      return typeof parsed.t === 'string' && typeof parsed.a === 'string' ? { t: parsed.t, a: parsed.a } : null;
    } catch {
      return null;
    }
  }

  /**
   * This browser's CSRF token for an account ('' before sign-in; undefined: any); made and set as a
   * cookie when there is none for that account. Bound to the account, so a token a page of another site
   * planted (a cookie set from a sibling domain, say) is worth nothing to a signed-in viewer.
   */
  csrfToken(req: Request, res: Response, accountId?: string): string {
    const existing = this.sealedCsrf(req);
    // Undefined: a page outside the session (an error page) keeps whatever token the browser has.
    if (existing && (accountId === undefined || existing.a === accountId)) return existing.t;
    const token = randomBytes(24).toString('base64url');
    res.cookie(CSRF_COOKIE, this.box.encrypt(JSON.stringify({ t: token, a: accountId ?? '' })), this.cookieOptions(req));
    return token;
  }

  /**
   * Whether a state-changing request carries this browser's token (form field `_csrf` or header
   * `x-csrf-token`) made for `accountId` ('' before sign-in; undefined: for any account).
   */
  csrfValid(req: Request, accountId?: string): boolean {
    const expected = this.sealedCsrf(req);
    const body = req.body as { _csrf?: unknown } | undefined;
    const given = typeof body?._csrf === 'string' ? body._csrf : req.get('x-csrf-token');
    if (!expected || typeof given !== 'string') return false;
    return (accountId === undefined || expected.a === accountId) && sameText(expected.t, given);
  }

  /** The signed-in account of a request, or why there is none. */
  async context(req: Request, res: Response): Promise<ConsoleContext | 'signed-out' | 'expired'> {
    if (this.options.auth) {
      const accountId = await this.options.auth(req);
      return accountId ? { accountId, csrf: this.csrfToken(req, res, accountId), via: 'host' } : 'signed-out';
    }
    const raw = this.open(this.cookies(req)[SESSION_COOKIE]);
    if (!raw) return 'signed-out';
    let session: SealedSession;
    try {
      session = JSON.parse(raw) as SealedSession;
    } catch {
      return 'signed-out';
    }
    if (typeof session.a !== 'string' || typeof session.k !== 'string' || typeof session.e !== 'number') return 'signed-out';
    if (session.e <= this.now()) return 'expired';
    const accountId = await this.accountOf(session.a, session.k);
    if (!accountId) return 'signed-out';
    return { accountId, csrf: this.csrfToken(req, res, accountId), via: 'key' };
  }

  /** The account an account id and API key prove (through Vigil's Authenticator, as the API does); null for a wrong, malformed or revoked key. */
  async accountOf(accountId: string, key: string): Promise<string | null> {
    try {
      return (await this.vigil.authenticator.authenticate({ authorization: `Bearer ${key}`, account: accountId })).accountId;
    } catch (err) {
      if (hasCode(err, 'UNAUTHORIZED') || hasCode(err, 'FORBIDDEN') || hasCode(err, 'VALIDATION')) return null;
      throw err;
    }
  }

  /** Starts a session for a key already known good. */
  signIn(req: Request, res: Response, accountId: string, key: string): void {
    const session: SealedSession = { a: accountId, k: key, e: this.now() + this.ttlMs };
    res.cookie(SESSION_COOKIE, this.box.encrypt(JSON.stringify(session)), this.cookieOptions(req, this.ttlMs));
    // A new token with the new session: one an attacker planted before sign-in is worth nothing after it.
    res.clearCookie(CSRF_COOKIE, this.cookieOptions(req));
  }

  signOut(req: Request, res: Response): void {
    res.clearCookie(SESSION_COOKIE, this.cookieOptions(req));
    res.clearCookie(CSRF_COOKIE, this.cookieOptions(req));
  }
}
