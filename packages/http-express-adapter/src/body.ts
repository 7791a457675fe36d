import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import { PayloadTooLargeError, ValidationError, VigilError, type Logger } from '@vigil/core';
import { sendError, toErrorResponse } from './errors.js';

/** The content types the router reads as JSON. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4, pb: 1024 ** 5 };

/** A body limit in bytes: a number, or a string such as `1mb`, `100kb`, `512` (as body-parser reads it). */
export function limitBytes(limit: string | number): number {
  if (typeof limit === 'number') return limit;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(limit);
  if (!m) throw new TypeError(`vigilRouter: bodyLimit "${limit}" is not a size such as 1mb or 512kb`);
  return Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]!);
}

/** True once something before this router read the request's body (body-parser's own test). */
function bodyRead(req: Request): boolean {
  return req.readableEnded || (req.complete && !req.readable);
}

/** The size of a body another parser read: its Content-Length when it was sent plain, else its JSON's. */
function parsedSize(req: Request, body: unknown): number {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const length = Number(req.headers['content-length']);
  if (encoding === 'identity' && Number.isFinite(length) && req.headers['content-length'] !== undefined) return length;
  return Buffer.byteLength(JSON.stringify(body) ?? '');
}

const NOT_JSON = () => new ValidationError([{ path: '', message: 'must be a JSON object sent with Content-Type: application/json' }]);

function overLimit(size: number, limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request body is too large: ${size} bytes, over the limit of ${limit} bytes`);
}

/**
 * The router's JSON body parser. A body a parser in front of the router (the host's
 * `express.json()`, say) already read is taken as it is, under the router's own rules: JSON content
 * types only, and no larger than the router's limit.
 */
export function jsonBody(limit: string | number): RequestHandler {
  const bytes = limitBytes(limit);
  const json = express.json({ limit: bytes, type: JSON_TYPES });
  return (req, res, next) => {
    if (!bodyRead(req) || req.body === undefined) {
      json(req, res, next);
      return;
    }
    if (!req.is(JSON_TYPES)) return next(NOT_JSON());
    const body: unknown = req.body;
    // A text or raw parser in front left the JSON unparsed.
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const size = Buffer.byteLength(body);
      if (size > bytes) return next(overLimit(size, bytes));
      try {
        req.body = JSON.parse(body.toString());
      } catch {
        return next(new VigilError('VALIDATION', 400, 'Malformed JSON in request body'));
      }
      return next();
    }
    const size = parsedSize(req, body);
    if (size > bytes) return next(overLimit(size, bytes));
    next();
  };
}

type ParserError = { type?: unknown; status?: unknown; statusCode?: unknown; limit?: unknown; length?: unknown; expected?: unknown };

/** The 4xx status of a body parser's error (body-parser's errors carry a `type`), else null. */
function parserErrorStatus(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as ParserError;
  const status = typeof e.status === 'number' ? e.status : e.statusCode;
  return typeof e.type === 'string' && typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

/** Paths the router answers when mounted with `fallthrough` (others belong to the host). */
const SERVED = /^\/(?:v1|v2|ping)(?:\/|$)|^\/openapi\.json$/;

/**
 * The error handler for body-parser failures of parsers in front of the router: mounted right after
 * the router on the same path, it answers them with the API's error body; every other error goes
 * on to the host's handlers.
 */
export function bodyErrors(limit: string | number, fallthrough: boolean, logger: Logger): ErrorRequestHandler {
  const bytes = limitBytes(limit);
  return (err, req, res, next) => {
    if (parserErrorStatus(err) === null || (fallthrough && !SERVED.test(req.path))) return next(err);
    const e = err as ParserError;
    if (e.type === 'entity.too.large') {
      const size = typeof e.expected === 'number' ? e.expected : typeof e.length === 'number' ? e.length : null;
      const hostLimit = typeof e.limit === 'number' ? e.limit : null;
      const message = size !== null && size > bytes
        ? `Request body is too large: ${size} bytes, over the limit of ${bytes} bytes`
        : hostLimit !== null && hostLimit < bytes
          ? `Request body is too large for the body parser in front of the API (its limit is ${hostLimit} bytes, the API's ${bytes}): mount the API's router before that parser, or raise its limit`
          : 'Request body is too large';
      sendError(res, 413, new PayloadTooLargeError(message).toJSON());
      return;
    }
    const answer = toErrorResponse(err, logger, { method: req.method, route: null });
    sendError(res, answer.status, answer.body);
  };
}
