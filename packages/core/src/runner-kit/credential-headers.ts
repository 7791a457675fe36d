import { MIN_SCRUBBED_LENGTH } from './scrub.js';

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/**
 * A cookie's bare value shorter than this (`en`, `true`, `dark`) could be any word of a text, so
 * it is not scrubbed on its own; its `name=value` and the whole header still are.
 */
const MIN_COOKIE_VALUE = 8;

/**
 * Headers whose values are credentials: Authorization, Proxy-Authorization, Cookie, Set-Cookie, and
 * any name containing token, key or secret (`X-Api-Key`, `X-Auth-Token`), in any case. Responses
 * and plans mask them, and a run keeps their values out of what it records.
 */
export function isCredentialHeader(name: string): boolean {
  const n = name.trim().toLowerCase();
  return CREDENTIAL_HEADERS.has(n) || /token|key|secret/.test(n);
}

/** The `user:password` a Basic credential encodes, when it is base64 of text with a colon. */
function basicPair(credential: string): string | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credential)) return null;
  const bytes = Buffer.from(credential, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== credential.replace(/=+$/, '')) return null;
  const text = bytes.toString('utf8');
  return text.includes(':') && !text.includes('\uFFFD') ? text : null;
}

/**
 * What one credential header's value holds that a run must keep out of what it records (a list
 * for `scrubSecrets`): the whole value; after an auth scheme, the credential alone (the token of
 * `Bearer xyz`), and for `Basic` the `user:password` it encodes and the password; for Cookie and
 * Set-Cookie, each cookie's `name=value` and its value when that is long enough to be a token.
 * Another header gives nothing, and parts shorter than scrubSecrets masks are left out.
 */
export function credentialSecrets(name: string, value: string): string[] {
  const header = name.trim().toLowerCase();
  if (!isCredentialHeader(header)) return [];
  const whole = value.trim();
  const out = new Set([whole]);
  if (header === 'cookie' || header === 'set-cookie') {
    // A Set-Cookie is one cookie and its attributes (Path, Expires, ...), which are no secret.
    const pairs = header === 'cookie' ? whole.split(';') : [whole.split(';')[0]!];
    for (const pair of pairs.map((p) => p.trim())) {
      out.add(pair);
      const eq = pair.indexOf('=');
      const cookie = eq < 0 ? '' : pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (cookie.length >= MIN_COOKIE_VALUE) out.add(cookie);
    }
  } else {
    const scheme = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s+(\S.*)$/.exec(whole);
    if (scheme) {
      const credential = scheme[2]!.trim();
      out.add(credential);
      const pair = scheme[1]!.toLowerCase() === 'basic' ? basicPair(credential) : null;
      if (pair) {
        out.add(pair);
        out.add(pair.slice(pair.indexOf(':') + 1));
      }
    }
  }
  return [...out].filter((s) => s.length >= MIN_SCRUBBED_LENGTH);
}
