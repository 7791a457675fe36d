// How every runner's assertions compare what a run saw with a target written as text: the
// comparisons of the check models (EQUALS … NOT_NULL), the same for TCP data, HTTP bodies, DNS
// answers and ping statistics.

/** Longest quoted value in a failure message. */
const MAX_QUOTED = 200;

/** Text cut to `max` characters, with `…` when it was longer. */
export function cutText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A value quoted for a failure message, cut to a readable length. */
export function quoteText(text: string): string {
  return JSON.stringify(cutText(text, MAX_QUOTED));
}

/** A finite number written as text (surrounding whitespace allowed), or null. */
export function asNumber(text: string | null | undefined): number | null {
  if (text === null || text === undefined || text.trim() === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** A value as text: strings as they are, objects as JSON, null and undefined as null. */
export function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Null, undefined, `''`, `[]` and `{}` are empty. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

/** Comparisons that take no target. */
export function takesTarget(comparison: string): boolean {
  return !['IS_EMPTY', 'NOT_EMPTY', 'IS_NULL', 'NOT_NULL'].includes(comparison);
}

/** The comparisons a number (a status code, a time, a count) can be held to. */
export const NUMERIC_COMPARISONS: ReadonlySet<string> = new Set(['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN']);

export interface Compared {
  passed: boolean;
  /** Why the comparison could not be made (a target that is not a number), when it could not. */
  problem?: string;
}

function equals(value: unknown, target: string): boolean {
  if (typeof value === 'number') return asNumber(target) === value;
  const text = asText(value);
  return text !== null && text === target;
}

function hasKey(value: unknown, key: string, caseInsensitiveKeys: boolean): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.hasOwn(value, caseInsensitiveKeys ? key.toLowerCase() : key);
}

/** Whether an array holds, or an object has under some key, a value equal to the target; a scalar must equal it. */
function hasValue(value: unknown, target: string): boolean {
  if (Array.isArray(value)) return value.some((x) => equals(x, target));
  if (value !== null && typeof value === 'object') return Object.values(value).some((x) => equals(x, target));
  return value !== undefined && equals(value, target);
}

export interface CompareOptions {
  /** HAS_KEY reads lower-case keys (HTTP header names). */
  caseInsensitiveKeys?: boolean;
}

/**
 * Compares a value a run saw with an assertion's target. A number equals a target that reads as
 * the same number; anything else compares as text. LESS_THAN and GREATER_THAN need both sides to
 * read as numbers; a missing value never equals, contains or has anything.
 */
export function compareValue(comparison: string, value: unknown, target: string, options: CompareOptions = {}): Compared {
  switch (comparison) {
    case 'EQUALS':
      return { passed: equals(value, target) };
    case 'NOT_EQUALS':
      return { passed: !equals(value, target) };
    case 'IS_EMPTY':
      return { passed: isEmptyValue(value) };
    case 'NOT_EMPTY':
      return { passed: !isEmptyValue(value) };
    case 'CONTAINS':
    case 'NOT_CONTAINS': {
      const text = asText(value);
      const contains = text !== null && text.includes(target);
      return { passed: comparison === 'CONTAINS' ? contains : !contains };
    }
    case 'LESS_THAN':
    case 'GREATER_THAN': {
      const limit = asNumber(target);
      if (limit === null) return { passed: false, problem: `the target ${quoteText(target)} is not a number` };
      const actual = typeof value === 'number' ? value : asNumber(asText(value));
      if (actual === null) return { passed: false, problem: value === undefined || value === null ? 'there was no value to compare' : `the value ${quoteText(asText(value)!)} is not a number` };
      return { passed: comparison === 'LESS_THAN' ? actual < limit : actual > limit };
    }
    case 'HAS_KEY':
      return { passed: hasKey(value, target, !!options.caseInsensitiveKeys) };
    case 'NOT_HAS_KEY':
      return { passed: !hasKey(value, target, !!options.caseInsensitiveKeys) };
    case 'HAS_VALUE':
      return { passed: hasValue(value, target) };
    case 'NOT_HAS_VALUE':
      return { passed: !hasValue(value, target) };
    // A missing property reads as null: a body either says nothing or says null.
    case 'IS_NULL':
      return { passed: value === null || value === undefined };
    case 'NOT_NULL':
      return { passed: value !== null && value !== undefined };
    default:
      return { passed: false, problem: `${comparison} is not a comparison` };
  }
}

/**
 * Compares a measured number (milliseconds, a count, a percentage) with a target: EQUALS,
 * NOT_EQUALS, LESS_THAN or GREATER_THAN only; `what` names the measure in the problem.
 */
export function compareNumber(comparison: string, actual: number, target: string, what: string): Compared {
  if (!NUMERIC_COMPARISONS.has(comparison)) {
    return { passed: false, problem: `${comparison} does not apply to ${what} (use EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN)` };
  }
  const limit = asNumber(target);
  if (limit === null) return { passed: false, problem: `the target ${quoteText(target)} is not a number` };
  switch (comparison) {
    case 'EQUALS':
      return { passed: actual === limit };
    case 'NOT_EQUALS':
      return { passed: actual !== limit };
    case 'LESS_THAN':
      return { passed: actual < limit };
    default:
      return { passed: actual > limit };
  }
}
