export const SCRUBBED = '********';

/**
 * The base64 (and base64url) characters that encode only the secret's own bytes, at each of the
 * three byte offsets it may start at inside a longer encoded value (`Basic base64(user:secret)`,
 * a token that embeds it). Only cores of 2 groups (8 characters) or more, so that short runs that
 * could occur anywhere are left alone.
 */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (const encoding of ['base64', 'base64url'] as const) {
    for (let lead = 0; lead < 3; lead++) {
      const encoded = Buffer.concat([Buffer.alloc(lead), bytes]).toString(encoding);
      const first = Math.ceil(lead / 3);
      const last = Math.floor((lead + bytes.length) / 3) - 1;
      if (last - first + 1 >= 2) out.push(encoded.slice(first * 4, (last + 1) * 4));
    }
  }
  return out;
}

/**
 * The forms a secret may take in text a run produced: as is, URL- and form-encoded (either case of
 * hex), JSON-escaped; and base64 (whole, or inside a longer encoded value), which is masked
 * together with the rest of the encoded value around it (`Basic base64(user:secret)` becomes
 * `Basic ********`), since what is left of it would decode to bytes of the secret's neighbours.
 */
function forms(secret: string, json: boolean): { literal: string[]; encoded: string[] } {
  const bytes = Buffer.from(secret);
  const uri = encodeURIComponent(secret);
  const literal = new Set([
    secret,
    uri,
    uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    new URLSearchParams({ x: secret }).toString().slice(2),
  ]);
  if (json) literal.add(JSON.stringify(secret).slice(1, -1));
  const encoded = new Set([bytes.toString('base64'), ...base64Cores(bytes)]);
  const longestFirst = (set: Set<string>) => [...set].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
  return { literal: longestFirst(literal), encoded: longestFirst(encoded) };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Replaces every secret value in `text` (in each of its forms) with a mask. */
export function scrubSecrets(text: string, secrets: readonly string[], json = false): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 3) continue;
    const { literal, encoded } = forms(secret, json);
    for (const form of encoded) {
      if (!out.includes(form)) continue;
      out = out.replace(new RegExp(`[A-Za-z0-9+/_-]*${escapeRegExp(form)}[A-Za-z0-9+/_-]*=*`, 'g'), SCRUBBED);
    }
    for (const form of literal) out = out.split(form).join(SCRUBBED);
  }
  return out;
}

/** A copy of `value` with every string in it scrubbed (JSON-escaped forms too); numbers and booleans stay as they are. */
export function scrubDeep<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return scrubSecrets(x, secrets, true);
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === 'object') {
      return Object.fromEntries(Object.entries(x).map(([k, inner]) => [k, walk(inner)]));
    }
    return x;
  };
  return walk(value) as T;
}
