import { scrubSecrets } from '@vigil/core';

/** A copy of `value` with every string in it scrubbed; numbers and booleans stay as they are. */
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
