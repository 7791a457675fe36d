/** What the HTTP transports share: one request with a time limit, and 2xx as the only success. */
import { request as undiciRequest, type Dispatcher } from 'undici';
import type { TargetPolicy } from '@vigil/core';
import { guardedAgent, TARGET_POLICY_CODE } from './target-guard.js';

export interface HttpOptions {
  /** Time limit of one request in milliseconds. Default 10 s. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | null;
  /**
   * The host's target policy, for a URL the account wrote (webhooks, chat webhooks). When it
   * refuses internal addresses, the request connects only to addresses it allows.
   */
  policy?: TargetPolicy | null;
}

export interface HttpAnswer {
  status: number;
  /** The first 64 KiB of the body. */
  body: string;
}

/**
 * A delivery the receiving end refused or never answered, or that the host's target policy
 * refused (`code` ETARGETPOLICY); the dispatcher retries it.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly code: string | null = null,
    /** The receiver refused for good (an SMTP 5xx): sending again cannot succeed. */
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

const MAX_BODY = 64 * 1024;

/** The first 64 KiB of an answer's body; the rest is not read (the connection is let go). */
async function readSome(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= MAX_BODY) break;
    }
  } finally {
    if (size >= MAX_BODY) body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY).toString('utf8');
}

/**
 * Sends one request with undici's request (not fetch: an alert costs the process a fraction of
 * fetch's work, no web streams or Request objects, over the same keep-alive connections). Resolves
 * on a 2xx answer; rejects with a DeliveryError on any other status, on a network error, when
 * `timeoutMs` passes, when `signal` aborts, or when the request's target policy refuses an address
 * of the receiver (nothing is sent then). Redirects are not followed: a 3xx is not a delivery. The
 * error names the status only, never the URL (it may carry a token) nor the answer's body; a
 * refusal names the host and the address.
 */
export async function send(request: HttpRequest, signal: AbortSignal, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<HttpAnswer> {
  if (signal.aborted) throw new DeliveryError('The send was aborted');
  const dispatcher = request.policy?.refuseInternalAddresses ? guardedAgent(request.policy, timeoutMs) : undefined;
  try {
    return await exchange(request, signal, timeoutMs, dispatcher);
  } finally {
    // Each guarded send has its connections of its own: none outlives it.
    await dispatcher?.destroy().catch(() => {});
  }
}

async function exchange(request: HttpRequest, signal: AbortSignal, timeoutMs: number, dispatcher: Dispatcher | undefined): Promise<HttpAnswer> {
  const limit = AbortSignal.timeout(timeoutMs);
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body ?? undefined;
  let res: Dispatcher.ResponseData;
  try {
    if (refusedPort(request.url)) throw new Error('bad port');
    res = await undiciRequest(request.url, {
      method: request.method as Dispatcher.HttpMethod,
      headers: withDefaults(request.headers, body !== undefined),
      body,
      signal: AbortSignal.any([signal, limit]),
      ...(dispatcher ? { dispatcher } : {}),
    });
  } catch (err) {
    throw failure(err, signal, limit, timeoutMs);
  }
  const answer = await readSome(res.body).catch(() => '');
  if (res.statusCode < 200 || res.statusCode > 299) throw new DeliveryError(`The receiver answered ${res.statusCode}`, res.statusCode);
  return { status: res.statusCode, body: answer };
}

/**
 * The headers a request goes with, as fetch would send them: the caller's, and unless it set them
 * a User-Agent (some receivers and firewalls refuse a request without one), `Accept: *\/*`, and a
 * text Content-Type for a body.
 */
function withDefaults(headers: Record<string, string> | undefined, hasBody: boolean): Record<string, string> {
  const out: Record<string, string> = { ...headers };
  const names = new Set(Object.keys(out).map((name) => name.toLowerCase()));
  if (!names.has('user-agent')) out['user-agent'] = USER_AGENT;
  if (!names.has('accept')) out.accept = '*/*';
  if (hasBody && !names.has('content-type')) out['content-type'] = 'text/plain;charset=UTF-8';
  return out;
}

const USER_AGENT = 'Vigil';

/** Ports fetch refuses (the Fetch standard's "bad ports": mail, shell, IRC and other non-HTTP services). */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111,
  113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548,
  554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
  6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Whether the URL names a port that an HTTP request must not be sent to (as fetch refuses it). */
function refusedPort(url: string): boolean {
  let port: string;
  try {
    port = new URL(url).port;
  } catch {
    return false;
  }
  return port !== '' && BAD_PORTS.has(Number(port));
}

/** Why a request got no answer, as a DeliveryError. */
function failure(err: unknown, signal: AbortSignal, limit: AbortSignal, timeoutMs: number): DeliveryError {
  if (limit.aborted) return new DeliveryError(`No answer within ${timeoutMs} ms`);
  if (signal.aborted) return new DeliveryError('The send was aborted');
  // A connection's error is the request's own (fetch wrapped it as the cause of a TypeError).
  const cause = (err as { cause?: { code?: string; message?: string } }).cause ?? (err as { code?: string; message?: string });
  if (cause?.code === TARGET_POLICY_CODE) return new DeliveryError(cause.message ?? 'The target policy refused the receiver', null, TARGET_POLICY_CODE);
  return new DeliveryError(`Request failed: ${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))}`);
}

/** The answer's body as JSON, or null. */
export function jsonOf(answer: HttpAnswer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(answer.body);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A base URL and a path joined with one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** POSTs a JSON body to a URL (with extra headers, under a target policy when the account wrote the URL). */
export async function postJson(
  url: string,
  body: unknown,
  signal: AbortSignal,
  timeoutMs: number,
  extra: { headers?: Record<string, string>; policy?: TargetPolicy | null } = {},
): Promise<HttpAnswer> {
  const headers = { 'content-type': 'application/json', ...extra.headers };
  return send({ method: 'POST', url, headers, body: JSON.stringify(body), policy: extra.policy }, signal, timeoutMs);
}

export const delivered = (answer: HttpAnswer) => `delivered (${answer.status})`;
