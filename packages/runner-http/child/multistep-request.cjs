'use strict';
/*
 * `request` of a multi-step script: an API request context in the spirit of Playwright's
 * APIRequestContext, on Node's global fetch (whose connections go through the target fence when
 * the host has a target policy). Each call sends one request, follows redirects itself (so that
 * it can count them and keep credentials with their origin: every header it scrubs as a
 * credential is left out of a hop to another origin), reads the whole body up to the
 * runner's maxResponseBytes and times the exchange: firstByte (headers received), download (body
 * read), total. Every request is reported to the host (`onRequest`), and the credentials it sends
 * (`onCredentials`) before it is sent, so that the host scrubs them from what the run records.
 */
const { performance } = require('node:perf_hooks');

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_REDIRECTS = 20;

class RequestError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'RequestError';
    this.code = code;
  }
}

/**
 * Headers whose values are credentials, as the host scrubs them (core's isCredentialHeader):
 * Authorization, Proxy-Authorization, Cookie, Set-Cookie and any name containing token, key or
 * secret. None of them goes on to another origin on a redirect.
 */
const isCredentialHeader = (name) => ['authorization', 'proxy-authorization', 'cookie', 'set-cookie'].includes(name) || /token|key|secret/.test(name);

const round = (ms) => Math.round(ms * 100) / 100;
const isPlainData = (data) => data !== null && typeof data === 'object' && !Buffer.isBuffer(data) && !(data instanceof Uint8Array) && !(data instanceof ArrayBuffer);

/** Header names lower-cased; a list joined as one value. */
function headersOf(given, userAgent) {
  const out = { 'user-agent': userAgent };
  if (given !== null && typeof given === 'object') {
    for (const [name, value] of Object.entries(given)) {
      if (value === undefined || value === null) continue;
      out[String(name).toLowerCase()] = Array.isArray(value) ? value.map(String).join(', ') : String(value);
    }
  }
  return out;
}

/** The body to send and the content-type it implies: an object or array as JSON, text and bytes as they are. */
function bodyOf(data, headers) {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string' || Buffer.isBuffer(data) || data instanceof Uint8Array || data instanceof ArrayBuffer) return data;
  if (isPlainData(data) || typeof data === 'number' || typeof data === 'boolean') {
    if (!headers['content-type']) headers['content-type'] = 'application/json';
    return JSON.stringify(data);
  }
  return String(data);
}

/** The response's headers as an object of lower-case names; repeated Set-Cookie headers joined by new lines, as Playwright does. */
function responseHeaders(headers) {
  const out = {};
  for (const [name, value] of headers) out[name] = value;
  const cookies = typeof headers.getSetCookie === 'function' ? headers.getSetCookie() : [];
  if (cookies.length > 0) out['set-cookie'] = cookies.join('\n');
  return out;
}

/** Reads a body to its end, failing past `maxBytes`. */
async function readCapped(response, maxBytes, describe) {
  const tooLarge = () => new RequestError(`${describe()}: the response body is larger than ${maxBytes} bytes, the most a multi-step check reads of one response (the runner's maxResponseBytes)`, 'ERESPONSETOOLARGE');
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return Buffer.concat(chunks, size);
}

/** The response a script gets: Playwright's APIResponse methods, on a body already read. */
function apiResponse(response, url, body) {
  const headers = responseHeaders(response.headers);
  return {
    status: () => response.status,
    statusText: () => response.statusText,
    ok: () => response.status >= 200 && response.status <= 299,
    headers: () => ({ ...headers }),
    headersArray: () => [...response.headers].map(([name, value]) => ({ name, value })),
    url: () => url,
    body: async () => Buffer.from(body),
    text: async () => body.toString('utf8'),
    json: async () => JSON.parse(body.toString('utf8')),
    dispose: async () => {},
    toString: () => `APIResponse: ${response.status} ${response.statusText}`,
  };
}

/** What fetch's "fetch failed" hides: the cause's message and code. */
function failureOf(err, label, timedOut, timeoutMs) {
  if (timedOut) return new RequestError(`${label}: no complete response within its timeout of ${timeoutMs} ms`, 'ETIMEDOUT');
  if (err instanceof RequestError) return err;
  const cause = err && err.cause instanceof Error ? err.cause : null;
  const code = (cause && cause.code) || (err && err.code) || 'EREQUEST';
  const text = cause ? cause.message : err instanceof Error ? err.message : String(err);
  return new RequestError(`${label} failed: ${text}`, String(code));
}

/**
 * The `request` object of one run. `hooks.onRequest(record)` gets each request when it is over
 * (`{ method, url, status, statusText, timings, error }`), `hooks.onCredentials({ headers, values })`
 * the header name/value pairs sent, the cookies set and the password of a URL, before they are
 * recorded anywhere.
 */
function createRequestContext({ maxResponseBytes, userAgent, onRequest, onCredentials }) {
  async function send(methodGiven, urlGiven, options) {
    const opts = options !== null && typeof options === 'object' ? options : {};
    const method = String(methodGiven || 'GET').toUpperCase();
    let url;
    try {
      url = new URL(String(urlGiven));
    } catch {
      throw new RequestError(`request.${method.toLowerCase()}(${JSON.stringify(String(urlGiven))}): not an absolute URL`, 'EINVALIDURL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RequestError(`request.${method.toLowerCase()}("${url.href}"): not an http:// or https:// URL`, 'EINVALIDURL');
    if (opts.params !== null && typeof opts.params === 'object') {
      for (const [key, value] of Object.entries(opts.params)) if (value !== undefined && value !== null) url.searchParams.append(key, String(value));
    }
    const headers = headersOf(opts.headers, userAgent);
    if (url.username || url.password) {
      // fetch sends no credentials written in a URL: they become a Basic Authorization header.
      const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
      if (!headers.authorization) headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
      onCredentials({ values: [decodeURIComponent(url.password), pair] });
      url.username = '';
      url.password = '';
    }
    onCredentials({ headers: Object.entries(headers) });
    const timeoutMs = opts.timeout === undefined || opts.timeout === null ? DEFAULT_TIMEOUT_MS : Number(opts.timeout);
    const maxRedirects = opts.maxRedirects === undefined || opts.maxRedirects === null ? DEFAULT_MAX_REDIRECTS : Math.max(0, Math.floor(Number(opts.maxRedirects)));
    let body = bodyOf(opts.data, headers);
    const record = { method, url: url.href, status: null, statusText: null, timings: { firstByte: 0, download: 0, total: 0 }, error: null };
    const label = `${method} ${url.href}`;
    const controller = new AbortController();
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => {
      timedOut = true;
      controller.abort(new RequestError('timeout', 'ETIMEDOUT'));
    }, timeoutMs) : null;
    const started = performance.now();
    let headersAt = null;
    try {
      let current = url;
      let currentMethod = method;
      let currentHeaders = headers;
      let response;
      for (let hops = 0; ; hops++) {
        response = await fetch(current, { method: currentMethod, headers: currentHeaders, body, redirect: 'manual', signal: controller.signal });
        const location = response.headers.get('location');
        if (!REDIRECTS.has(response.status) || !location || maxRedirects === 0) break;
        if (hops >= maxRedirects) throw new RequestError(`${label}: more than ${maxRedirects} redirects (maxRedirects), the last to ${new URL(location, current).href}`, 'EREDIRECT');
        await response.body?.cancel().catch(() => {});
        const next = new URL(location, current);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new RequestError(`${label}: redirected to "${location}", which is not an http:// or https:// URL`, 'EREDIRECT');
        const toGet = (response.status === 303 && currentMethod !== 'HEAD') || ((response.status === 301 || response.status === 302) && currentMethod === 'POST');
        const sameOrigin = next.origin === current.origin;
        currentHeaders = Object.fromEntries(Object.entries(currentHeaders).filter(([name]) => !(toGet && (name === 'content-type' || name === 'content-length'))
          && (sameOrigin || !isCredentialHeader(name))));
        if (toGet) {
          currentMethod = 'GET';
          body = undefined;
        }
        current = next;
      }
      headersAt = performance.now();
      const cookies = typeof response.headers.getSetCookie === 'function' ? response.headers.getSetCookie() : [];
      if (cookies.length > 0) onCredentials({ headers: cookies.map((c) => ['set-cookie', c]) });
      Object.assign(record, { url: current.href, status: response.status, statusText: response.statusText });
      const bytes = await readCapped(response, maxResponseBytes, () => label);
      return apiResponse(response, current.href, bytes);
    } catch (err) {
      const failure = failureOf(err, label, timedOut, timeoutMs);
      record.error = failure.message;
      throw failure;
    } finally {
      if (timer) clearTimeout(timer);
      const end = performance.now();
      const firstByte = (headersAt ?? end) - started;
      record.timings = { firstByte: round(firstByte), download: round(headersAt === null ? 0 : end - headersAt), total: round(end - started) };
      onRequest(record);
    }
  }

  const context = { fetch: (url, options = {}) => send(options && options.method ? options.method : 'GET', url, options) };
  for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head']) {
    context[method] = (url, options) => send(method.toUpperCase(), url, options);
  }
  return context;
}

module.exports = { createRequestContext, RequestError };
