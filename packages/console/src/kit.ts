import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger, Vigil } from '@vigil/core';
import type { ConsoleAssets } from './assets.js';
import type { ConsoleContext, ConsoleSessions } from './session.js';
import { messagePage, NAV } from './templates.js';

/** What every route module of the console is given. */
export interface ConsoleKit {
  vigil: Vigil;
  sessions: ConsoleSessions;
  assets: ConsoleAssets;
  logger: Logger;
  /** Seconds between live refreshes of lists (0: never). */
  refreshSeconds: number;
}

/** The signed-in context of a request that passed the console's sign-in guard. */
export function contextOf(res: Response): ConsoleContext {
  return (res.locals as { console: ConsoleContext }).console;
}

export const wrap = (fn: (req: Request, res: Response, next: NextFunction) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
  fn(req, res, next).catch(next);
};

/**
 * Headers of every console page: scripts and styles only with this response's nonce (the hashed
 * files carry it too), images from the console itself or inline, fetches only back to it, no framing.
 */
export function pageHeaders(res: Response, nonce: string): void {
  res.set({
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'private, no-store',
  });
}

export interface LayoutOptions {
  /** The section the page belongs to (a NAV path), marked in the navigation. */
  section?: string;
  /** Live refresh of the page's list, in seconds. */
  refresh?: number;
}

/** The layout's data for a page: nonce, mount path, asset names, CSRF token, navigation. */
export function layoutOf(kit: ConsoleKit, req: Request, res: Response, options: LayoutOptions & { signIn?: boolean } = {}) {
  const nonce = randomBytes(16).toString('hex');
  pageHeaders(res, nonce);
  const context = (res.locals as { console?: ConsoleContext }).console;
  const base = req.baseUrl;
  return {
    nonce,
    base,
    // The sign-in form needs a token made before sign-in; other pages outside the session keep the browser's.
    csrf: context?.csrf ?? kit.sessions.csrfToken(req, res, options.signIn ? '' : undefined),
    signedIn: !!context,
    canSignOut: context?.via === 'key',
    refresh: options.refresh ?? 0,
    assets: { uplotJs: kit.assets.uplotJs.file, uplotCss: kit.assets.uplotCss.file, css: kit.assets.css.file, js: kit.assets.js.file },
    nav: NAV.map(([path, label]) => ({ href: `${base}${path}`, label, current: path === options.section })),
  };
}

/** A page of one heading and one sentence (errors, confirmations). */
export function sendMessage(kit: ConsoleKit, req: Request, res: Response, status: number, heading: string, text: string, link?: { href: string; label: string }): void {
  const layout = layoutOf(kit, req, res);
  res.status(status).type('html').send(messagePage({ layout, title: heading, heading, text, link }));
}
