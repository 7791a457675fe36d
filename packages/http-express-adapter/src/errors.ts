import type { ErrorRequestHandler, Response } from 'express';
import { isVigilError, reasonPhrase, type Logger } from '@vigil/core';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  validation?: { source: string; keys: string[] };
}

export function errorBody(statusCode: number, message: string): ErrorBody {
  return { statusCode, error: reasonPhrase(statusCode), message };
}

/** The body-parser failures a client can cause, with the message it should read. */
const BODY_ERRORS: Record<string, [number, string]> = {
  'entity.parse.failed': [400, 'Malformed JSON in request body'],
  'entity.too.large': [413, 'Request body is too large'],
  'entity.verify.failed': [400, 'Request body could not be verified'],
  'encoding.unsupported': [415, 'Unsupported Content-Encoding'],
  'charset.unsupported': [415, 'Unsupported charset'],
  'request.aborted': [400, 'Request aborted'],
  'request.size.invalid': [400, 'Request size did not match Content-Length'],
};

/**
 * Maps what a handler threw to a status and the spec's error body. Domain errors carry their
 * status; body-parser errors are the client's; anything else is ours, logged and answered 500
 * without a stack, SQL or secret in the body.
 */
export function toErrorResponse(err: unknown, logger: Logger, context: Record<string, unknown>): { status: number; body: ErrorBody; retryAfter?: number } {
  if (isVigilError(err)) {
    const body = typeof err.toJSON === 'function' ? (err.toJSON() as ErrorBody) : errorBody(err.statusCode, err.message);
    const retryAfter = (err as { retryAfterSeconds?: number }).retryAfterSeconds;
    if (err.statusCode >= 500) logger.error('vigil api: service unavailable', { ...context, code: err.code, message: err.message });
    return { status: err.statusCode, body, ...(retryAfter === undefined ? {} : { retryAfter }) };
  }
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && BODY_ERRORS[type]) {
    const [status, message] = BODY_ERRORS[type]!;
    return { status, body: errorBody(status, message) };
  }
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  const status = typeof e?.status === 'number' ? e.status : e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: errorBody(status, reasonPhrase(status)) };
  }
  logger.error('vigil api: internal error', { ...context, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  return { status: 500, body: errorBody(500, 'Internal error') };
}

export function sendError(res: Response, status: number, body: ErrorBody, retryAfter?: number): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  res.status(status).json(body);
}

/** The router's own error handler: it answers only for requests that reached the router. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const { status, body, retryAfter } = toErrorResponse(err, logger, { method: req.method, route: (req.route as { path?: string } | undefined)?.path ?? null });
    sendError(res, status, body, retryAfter);
  };
}
