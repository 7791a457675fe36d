// The bearer tokens the host asks for: on GET /metrics when VIGIL_METRICS_TOKEN is set, and on
// the account administration under /admin/vigil (VIGIL_ADMIN_TOKEN).
import { createHash, timingSafeEqual } from 'node:crypto';
import { errorBody } from '@vigil/http-express-adapter';

const digest = (text) => createHash('sha256').update(text).digest();

/**
 * Express middleware: without a token it lets every request through; with one it answers 401
 * (the API's error body, `WWW-Authenticate: Bearer`) unless the request carries
 * `Authorization: Bearer <token>`, compared in constant time.
 */
export function requireBearerToken(token) {
  if (!token) return (_req, _res, next) => next();
  return (req, res, next) => {
    if (hasBearerToken(req, token)) return next();
    res.set('WWW-Authenticate', 'Bearer realm="metrics"').status(401).json(errorBody(401, 'GET /metrics needs Authorization: Bearer <VIGIL_METRICS_TOKEN>'));
  };
}

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
export function hasBearerToken(req, token) {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}
