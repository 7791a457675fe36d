import * as v from 'valibot';
import { recordEntries, responseEntries, typeEntries, withFrequencyOffsetRule } from './check-common.js';
import { DEFAULT_FREQUENCY, MAX_URL_LENGTH, TcpFrequencySchema, type Same } from './primitives.js';
import { integerAtLeast, integerBetween, modelObject, oneOf, updateEntries } from './shared.js';
import { isAbsoluteHttpUrl } from './urls.js';

/** The methods of a URL check: it reads a page's status, never sends a body. */
export const URL_METHODS = ['GET', 'HEAD'] as const;
export type UrlMethod = (typeof URL_METHODS)[number];

/** `200`, `2xx` or `200-299`; for a range both ends count. */
const EXPECTED_STATUS = /^(?:[1-5]\d\d|[1-5]xx|[1-5]\d\d-[1-5]\d\d)$/;

/** Whether an HTTP status is what `expectedStatus` (`200`, `2xx`, `200-399`) asks for. */
export function statusMatches(expected: string, status: number): boolean {
  if (/^\d{3}$/.test(expected)) return status === Number(expected);
  if (/^\dxx$/.test(expected)) return Math.floor(status / 100) === Number(expected[0]);
  const [low = 0, high = 0] = expected.split('-').map(Number);
  return status >= low && status <= high;
}

const urlRequestSchema = modelObject({
  url: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
    v.check(isAbsoluteHttpUrl, 'must be an http:// or https:// URL'),
  ),
  method: v.optional(oneOf(URL_METHODS), 'GET'),
  followRedirects: v.optional(v.boolean(), true),
  skipSSL: v.optional(v.boolean(), false),
  ipFamily: v.optional(oneOf(['IPv4', 'IPv6']), 'IPv4'),
  expectedStatus: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(EXPECTED_STATUS, 'must be a status (200), a class (2xx) or a range (200-399) of 100..599'),
      v.check((s) => !s.includes('-') || Number(s.slice(0, 3)) <= Number(s.slice(4)), 'must be a range whose first status is not above its last'),
    ),
    '2xx',
  ),
});
/** UrlRequestSchema's type, by name (see `Same`). */
export interface UrlRequestSchema extends Same<typeof urlRequestSchema> {}
/**
 * A URL check's request: a light uptime check of one http(s) URL. `expectedStatus` is a code
 * (`200`), a class (`2xx`) or a range (`200-399`); a run passes when the final answer's status is
 * in it (after redirects, when followed).
 */
export const UrlRequestSchema: UrlRequestSchema = urlRequestSchema;
export type UrlRequest = v.InferOutput<typeof UrlRequestSchema>;

// URL checks run as often as TCP and API checks; an HTTP answer is slower than a TCP handshake,
// so their response times are bounded as API checks' are: 0..30000 ms, defaults 5000 and 10000.
const urlResponseTimeSchema = (fallback: number) => v.optional(v.nullable(integerBetween(0, 30_000)), fallback);

const urlEntries = typeEntries({
  frequency: v.optional(TcpFrequencySchema, DEFAULT_FREQUENCY),
  request: UrlRequestSchema,
  frequencyOffset: v.optional(v.nullable(integerAtLeast(1)), null),
  degradedResponseTime: urlResponseTimeSchema(5000),
  maxResponseTime: urlResponseTimeSchema(10_000),
});

export const UrlCheckCreateSchema = withFrequencyOffsetRule(urlEntries);
export type UrlCheckCreate = v.InferOutput<typeof UrlCheckCreateSchema>;
export const UrlCheckUpdateSchema = modelObject(updateEntries(urlEntries));
export type UrlCheckUpdate = v.InferOutput<typeof UrlCheckUpdateSchema>;
export const UrlCheckSchema = v.object(recordEntries(urlEntries, 'URL'));
export type UrlCheck = v.InferOutput<typeof UrlCheckSchema>;
export const UrlCheckResponseSchema = v.object(responseEntries(urlEntries, 'URL'));
export type UrlCheckResponse = v.InferOutput<typeof UrlCheckResponseSchema>;
