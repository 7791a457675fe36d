// Masking of secrets in what a run produced (results, logs, bodies, screenshots): runners and the engine both use it.
export const SCRUBBED = '********';

/** Secrets shorter than this are not masked: a value of one or two characters would shred the text. */
export const MIN_SCRUBBED_LENGTH = 3;

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
 * Base64 forms that were themselves URL-encoded or JSON-escaped (`\/`) are masked as they stand.
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
  for (const form of encoded) {
    const escaped = encodeURIComponent(form);
    if (escaped !== form) {
      literal.add(escaped);
      literal.add(escaped.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
    }
    if (form.includes('/')) literal.add(form.replaceAll('/', '\\/'));
  }
  const nonEmpty = (set: Set<string>) => [...set].filter((f) => f.length > 0);
  return { literal: nonEmpty(literal), encoded: nonEmpty(encoded) };
}

const isBase64Char = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 95 || code === 45;

/**
 * Replaces every secret value in `text` (in each of its forms) with a mask. Every form of every
 * secret is looked for in the text as given and the places found are masked together, so one
 * secret's mask cannot hide another's form from the search; a base64 form's place grows over the
 * encoded value around it. Linear in the text for each form.
 */
export function scrubSecrets(text: string, secrets: readonly string[], json = false): string {
  const ranges: [number, number][] = [];
  for (const secret of secrets) {
    if (secret.length < MIN_SCRUBBED_LENGTH) continue;
    const { literal, encoded } = forms(secret, json);
    for (const form of literal) {
      for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) ranges.push([at, at + form.length]);
    }
    for (const form of encoded) {
      let from = 0;
      for (let at = text.indexOf(form, from); at >= 0; at = text.indexOf(form, from)) {
        let start = at;
        while (start > 0 && isBase64Char(text.charCodeAt(start - 1))) start--;
        let end = at + form.length;
        while (end < text.length && isBase64Char(text.charCodeAt(end))) end++;
        while (end < text.length && text.charCodeAt(end) === 61 /* = */) end++;
        ranges.push([start, end]);
        // The encoded value is masked whole: the search goes on after it.
        from = end;
      }
    }
  }
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  let current = ranges[0]!;
  const flush = (range: [number, number]) => {
    out += text.slice(at, range[0]) + SCRUBBED;
    at = range[1];
  };
  for (const range of ranges.slice(1)) {
    if (range[0] <= current[1]) current = [current[0], Math.max(current[1], range[1])];
    else {
      flush(current);
      current = range;
    }
  }
  flush(current);
  return out + text.slice(at);
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
