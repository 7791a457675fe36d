import { randomBytes } from 'node:crypto';
import type { Response } from 'express';

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * CSS from a user inside a style element: `<` becomes the CSS escape `\3c `, which means the same
 * character to CSS but can never close the element (`</style>`) or open markup.
 */
export function styleText(css: string | null | undefined): string {
  return (css ?? '').replace(/</g, '\\3c ');
}

/** An image URL as a CSP source: origin and path only, CSP's delimiters escaped. Null when it is not a plain http(s) URL. */
export function imageSource(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return `${u.origin}${u.pathname}`.replace(/[;,\s']/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  } catch {
    return null;
  }
}

/**
 * Headers of every page: scripts and styles only with this response's nonce, images only inline
 * data and the page's own configured logo and favicon, no other connection,
 * and no referrer, so a `?key=` in the address never travels to an image host.
 */
export function pageHeaders(res: Response, nonce: string, images: (string | null)[], options: { private: boolean }): void {
  // Not even 'self': a user's CSS could otherwise make viewers' browsers GET any path of the host.
  const img = ['data:', ...images.filter((s): s is string => !!s)].join(' ');
  res.set({
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      `img-src ${img}`,
      "form-action 'self'",
      "base-uri 'none'",
    ].join('; '),
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': options.private ? 'private, no-store' : 'no-cache',
  });
}

/**
 * JSON for a `<script type="application/json">` element: `<`, `>` and `&` as JSON's `\u` escapes
 * (the same string to JSON.parse), so no value can close the element or open a comment in it.
 */
export function jsonScriptText(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
