import * as v from 'valibot';
import { MAX_URL_LENGTH, maxChars, type Same } from './primitives.js';

const subdomainSchema = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i, 'must be a subdomain label: letters, digits and inner hyphens, at most 63'),
  v.toLowerCase(),
);
/** SubdomainSchema's type, by name (see `Same`). */
export interface SubdomainSchema extends Same<typeof subdomainSchema> {}
/** A subdomain label: what customUrl of a dashboard and url of a status page hold. */
export const SubdomainSchema: SubdomainSchema = subdomainSchema;

const hostNameSchema = v.pipe(
  v.string(),
  v.regex(/^(?=.{1,253}$)(?:(?!-)[a-z0-9-]{1,63}(?<!-)\.)*(?!-)[a-z0-9-]{1,63}(?<!-)$/i, 'must be a host name without scheme, path or port'),
  v.toLowerCase(),
);
/** HostNameSchema's type, by name (see `Same`). */
export interface HostNameSchema extends Same<typeof hostNameSchema> {}
/** A host name (no scheme, path or port). */
export const HostNameSchema: HostNameSchema = hostNameSchema;

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

const httpUrlSchema = v.pipe(
  v.string(),
  maxChars(MAX_URL_LENGTH),
  v.check(isHttpUrl, 'must be an http or https URL'),
);
/** HttpUrlSchema's type, by name (see `Same`). */
export interface HttpUrlSchema extends Same<typeof httpUrlSchema> {}
/** An absolute http(s) URL (logos, favicons, links). */
export const HttpUrlSchema: HttpUrlSchema = httpUrlSchema;

/** A URL that holds `{{KEY}}` placeholders is only known at run time. */
export const isTemplatedUrl = (url: string) => url.includes('{{');

/**
 * A path (and query) without scheme and host, `/health` or `?q=1`, which a group's
 * apiCheckDefaults.url completes. `//host/path` is not one: it names a host.
 */
export function isRelativeApiUrl(url: string): boolean {
  return (url.startsWith('/') && !url.startsWith('//')) || url.startsWith('?');
}

/** An absolute http:// or https:// URL with a host and no whitespace. */
export function isAbsoluteHttpUrl(url: string): boolean {
  if (/\s/.test(url)) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}
