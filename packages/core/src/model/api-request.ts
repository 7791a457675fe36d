import * as v from 'valibot';
import { CodeSchema, MAX_URL_LENGTH, type Same } from './primitives.js';
import { ApiAssertionSchema, BasicAuthSchema, HeaderListSchema, HeaderValueSchema, KeyValueSchema, headerListSchema, modelObject, oneOf } from './shared.js';
import { isAbsoluteHttpUrl, isRelativeApiUrl, isTemplatedUrl } from './urls.js';

export { isAbsoluteHttpUrl, isRelativeApiUrl, isTemplatedUrl };

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** How `body` is sent: NONE sends none; the others say which Content-Type it gets unless a header sets one. */
export const API_BODY_TYPES = ['NONE', 'JSON', 'FORM', 'RAW', 'GRAPHQL'] as const;
export type ApiBodyType = (typeof API_BODY_TYPES)[number];

export const MAX_API_URL_LENGTH = MAX_URL_LENGTH;

export const ApiUrlSchema = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_API_URL_LENGTH, `must be at most ${MAX_API_URL_LENGTH} characters`),
  v.check(
    // An empty url is minLength's to report.
    (url) => url === '' || isTemplatedUrl(url) || isRelativeApiUrl(url) || isAbsoluteHttpUrl(url),
    'must be an http:// or https:// URL, or a path starting with / that the group\'s apiCheckDefaults.url completes',
  ),
);

// A header name is an HTTP token (RFC 9110 §5.1); a value holds no line breaks.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const httpHeaderSchema = modelObject({
  key: v.pipe(KeyValueSchema.entries.key, v.regex(HEADER_NAME, 'must be an HTTP header name (letters, digits and !#$%&\'*+.^_`|~-)')),
  value: v.pipe(HeaderValueSchema, v.check((s) => !/[\r\n\0]/.test(s), 'must not hold line breaks')),
});
/** HttpHeaderSchema's type, by name (see `Same`). */
export interface HttpHeaderSchema extends Same<typeof httpHeaderSchema> {}
export const HttpHeaderSchema: HttpHeaderSchema = httpHeaderSchema;

const apiRequestSchema = modelObject({
  method: v.optional(oneOf(HTTP_METHODS), 'GET'),
  url: ApiUrlSchema,
  headers: v.optional(headerListSchema(HttpHeaderSchema), () => []),
  queryParameters: v.optional(HeaderListSchema, () => []),
  body: v.optional(CodeSchema, ''),
  bodyType: v.optional(oneOf(API_BODY_TYPES), 'NONE'),
  basicAuth: v.optional(v.nullable(BasicAuthSchema), null),
  followRedirects: v.optional(v.boolean(), true),
  // TLS verification is on unless the check turns it off.
  skipSSL: v.optional(v.boolean(), false),
  assertions: v.optional(v.array(ApiAssertionSchema), () => []),
  ipFamily: v.optional(oneOf(['IPv4', 'IPv6']), 'IPv4'),
});
/** ApiRequestSchema's type, by name (see `Same`). */
export interface ApiRequestSchema extends Same<typeof apiRequestSchema> {}
/** The request of an API check: what is sent, how, and what the answer must satisfy. */
export const ApiRequestSchema: ApiRequestSchema = apiRequestSchema;
export type ApiRequest = v.InferOutput<typeof ApiRequestSchema>;
