export const SCRUBBED = '********';

/** The forms a secret may take in text a run produced: as is, URL-encoded, base64, JSON-escaped. */
function forms(secret: string, json: boolean): string[] {
  const out = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]);
  if (json) out.add(JSON.stringify(secret).slice(1, -1));
  return [...out].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

/** Replaces every secret value in `text` (in each of its forms) with a mask. */
export function scrubSecrets(text: string, secrets: readonly string[], json = false): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 3) continue;
    for (const form of forms(secret, json)) out = out.split(form).join(SCRUBBED);
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
