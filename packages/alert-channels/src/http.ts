/** What the HTTP transports share: one request with a time limit, and 2xx as the only success. */

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
}

export interface HttpAnswer {
  status: number;
  /** The first 64 KiB of the body. */
  body: string;
}

/** A delivery the receiving end refused or never answered; the dispatcher retries it. */
export class DeliveryError extends Error {
  constructor(message: string, readonly status: number | null = null) {
    super(message);
    this.name = 'DeliveryError';
  }
}

const MAX_BODY = 64 * 1024;

async function readSome(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_BODY) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY).toString('utf8');
}

/**
 * Sends one request with Node's fetch. Resolves on a 2xx answer; rejects with a DeliveryError on
 * any other status, on a network error, when `timeoutMs` passes, or when `signal` aborts.
 * Redirects are not followed: a 3xx is not a delivery. The error names the status only, never the
 * URL (it may carry a token) nor the answer's body.
 */
export async function send(request: HttpRequest, signal: AbortSignal, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<HttpAnswer> {
  if (signal.aborted) throw new DeliveryError('The send was aborted');
  const limit = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body ?? undefined,
      redirect: 'manual',
      signal: AbortSignal.any([signal, limit]),
    });
  } catch (err) {
    if (limit.aborted) throw new DeliveryError(`No answer within ${timeoutMs} ms`);
    if (signal.aborted) throw new DeliveryError('The send was aborted');
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new DeliveryError(`Request failed: ${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))}`);
  }
  const body = await readSome(res).catch(() => '');
  if (res.status < 200 || res.status > 299) throw new DeliveryError(`The receiver answered ${res.status}`, res.status);
  return { status: res.status, body };
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

/** POSTs a JSON body to a URL; the receipt names the answer's status. */
export async function postJson(url: string, body: unknown, signal: AbortSignal, timeoutMs: number, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return send({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }, signal, timeoutMs);
}

export const delivered = (answer: HttpAnswer) => `delivered (${answer.status})`;
