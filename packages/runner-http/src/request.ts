import { credentialSecrets, fillVariables, isCredentialHeader, isRelativeApiUrl, SCRUBBED, type ApiAssertion, type ApiRequest, type HttpMethod } from '@vigil/core';

/** What goes on the wire for the first hop, variables filled in. */
export interface OutgoingRequest {
  method: HttpMethod;
  /** The url with the query parameters appended: what is sent. */
  url: URL;
  /** The url as written, variables filled, and the query parameters it is sent with. */
  baseUrl: URL;
  queryParameters: { key: string; value: string }[];
  /** Name/value pairs in order; a name may repeat. */
  headers: [string, string][];
  body: string | null;
  assertions: ApiAssertion[];
}

export type BuiltRequest = { ok: true; request: OutgoingRequest } | { ok: false; message: string };

const CONTENT_TYPES: Record<string, string | null> = {
  NONE: null,
  JSON: 'application/json',
  FORM: 'application/x-www-form-urlencoded',
  GRAPHQL: 'application/json',
  RAW: null,
};

const hasHeader = (headers: readonly [string, string][], name: string) => headers.some(([k]) => k.toLowerCase() === name);

/**
 * A GRAPHQL body is sent as the JSON object GraphQL servers take over HTTP: as written when it
 * already is one with a `query`, else wrapped as `{"query": body}`.
 */
function graphqlBody(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed !== null && typeof parsed === 'object' && 'query' in parsed) return body;
  } catch {
    // A bare query document.
  }
  return JSON.stringify({ query: body });
}

/** Appends query parameters to a URL without re-encoding the query it already has. */
export function withQuery(url: URL, params: readonly { key: string; value: string }[]): URL {
  if (params.length === 0) return url;
  const added = params.map((p) => `${encodeURIComponent(p.key)}=${encodeURIComponent(p.value)}`).join('&');
  const out = new URL(url);
  out.search = url.search && url.search !== '?' ? `${url.search}&${added}` : `?${added}`;
  return out;
}

/**
 * The request a check sends: `{{KEY}}` placeholders filled from the run's environment in the url,
 * header values, query parameters, body, basic auth and assertion targets; query parameters
 * appended; basic auth as an Authorization header unless one is set; a Content-Type for the
 * bodyType unless one is set.
 */
export function buildRequest(request: ApiRequest, environment: Readonly<Record<string, string>>, userAgent: string): BuiltRequest {
  const fill = (text: string) => fillVariables(text, environment);
  const written = fill(request.url);
  if (isRelativeApiUrl(written)) {
    return { ok: false, message: `The url "${written}" is relative, and the check's group has no apiCheckDefaults.url to complete it` };
  }
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return { ok: false, message: `The url "${written}" is not a valid URL once its variables are filled in` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: `The url "${written}" is not an http:// or https:// URL` };
  }
  const baseUrl = url;
  const queryParameters = request.queryParameters.map((p) => ({ key: fill(p.key), value: fill(p.value) }));
  url = withQuery(url, queryParameters);

  const headers: [string, string][] = request.headers.map((h) => [h.key, fill(h.value)]);
  const auth = request.basicAuth;
  if (auth && auth.username !== '' && !hasHeader(headers, 'authorization')) {
    headers.push(['Authorization', `Basic ${Buffer.from(`${fill(auth.username)}:${fill(auth.password)}`).toString('base64')}`]);
  }
  if (!hasHeader(headers, 'user-agent')) headers.push(['User-Agent', userAgent]);

  // HEAD has no body (RFC 9110 §9.3.2); NONE sends none whatever `body` holds.
  let body: string | null = request.bodyType === 'NONE' || request.method === 'HEAD' ? null : fill(request.body);
  if (body !== null && request.bodyType === 'GRAPHQL') body = graphqlBody(body);
  const contentType = CONTENT_TYPES[request.bodyType];
  if (body !== null && contentType && !hasHeader(headers, 'content-type')) headers.push(['Content-Type', contentType]);

  const assertions = request.assertions.map((a) => ({ ...a, target: fill(a.target ?? ''), property: fill(a.property ?? '') }));
  return { ok: true, request: { method: request.method, url, baseUrl, queryParameters, headers, body, assertions } };
}

/** Headers as a result records them: the values of credential headers (Authorization, Cookie, ...) masked. */
export function recordedHeaders(headers: readonly [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    const shown = isCredentialHeader(name) ? SCRUBBED : value;
    out[name] = out[name] === undefined ? shown : `${out[name]}, ${shown}`;
  }
  return out;
}

/** A response's headers as a result records them: each Set-Cookie (and any other credential header) masked. */
export function recordedResponseHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string | string[] | undefined> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [
    name,
    value === undefined || !isCredentialHeader(name) ? value : Array.isArray(value) ? value.map(() => SCRUBBED) : SCRUBBED,
  ]));
}

/**
 * What the credential headers among `headers` carry (`credentialSecrets`): for a request a setup
 * script changed, or a response's Set-Cookie, which the job's secrets cannot name in advance.
 */
export function headerCredentials(headers: Readonly<Record<string, string | string[] | undefined>> | readonly (readonly [string, string])[]): string[] {
  const pairs = Array.isArray(headers)
    ? (headers as readonly (readonly [string, string])[])
    : Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [value].flat().map((v) => [name, v] as const)));
  return pairs.flatMap(([name, value]) => credentialSecrets(name, value));
}
