import express, { type Request, type Router } from 'express';
import * as v from 'valibot';
import type { DependencyContainer } from 'tsyringe';
import { ForbiddenError, parse, type Logger, type Vigil } from '@vigil/core';
import { errorBody, errorHandler, sendError } from './errors.js';
import { asyncHandler } from './router.js';
import { vigilFrom } from './vigil-from.js';

export interface AdminRouterOptions {
  /**
   * Decides whether a request may administer accounts and keys, e.g. from the host's own session.
   * Required: the admin routes issue credentials, so there is no open default.
   */
  authorize(req: Request): boolean | Promise<boolean>;
  logger?: Logger;
}

const AccountCreateSchema = v.object({
  id: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'))),
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters'))),
});

/**
 * Host-side administration of accounts and API keys. Mount it behind the host's own admin
 * authentication: `app.use('/admin/vigil', vigilAdminRouter(vigil, { authorize: isAdmin }))`.
 *
 * - `POST /accounts` `{id?, name?}`: the account (created when missing), 201
 * - `POST /accounts/{accountId}/api-keys` `{name}`: 201 with the full `key`, shown only here
 * - `GET /accounts/{accountId}/api-keys`: the keys, without secrets
 * - `DELETE /accounts/{accountId}/api-keys/{id}`: revokes the key, 204
 */
export function vigilAdminRouter(source: Vigil | DependencyContainer, options: AdminRouterOptions): Router {
  if (typeof options?.authorize !== 'function') {
    throw new Error('vigilAdminRouter needs an authorize(req) function: it issues API keys');
  }
  const vigil = vigilFrom(source);
  const router = express.Router();
  router.use((req, _res, next) => {
    Promise.resolve()
      .then(() => options.authorize(req))
      .then((allowed) => next(allowed ? undefined : new ForbiddenError('Not allowed to administer Vigil accounts')), next);
  }, express.json({ limit: '16kb' }));
  router.post('/accounts', asyncHandler(async (req, res) => {
    const body = parse(AccountCreateSchema, req.body ?? {});
    res.status(201).json(await vigil.accounts.ensure(body.id, body.name));
  }));
  router.post('/accounts/:accountId/api-keys', asyncHandler(async (req, res) => {
    const { apiKey, key } = await vigil.apiKeys.create(String(req.params.accountId), req.body ?? {});
    res.status(201).json({ ...apiKey, key });
  }));
  router.get('/accounts/:accountId/api-keys', asyncHandler(async (req, res) => {
    await vigil.accounts.get(String(req.params.accountId));
    res.json(await vigil.apiKeys.list(String(req.params.accountId)));
  }));
  router.delete('/accounts/:accountId/api-keys/:id', asyncHandler(async (req, res) => {
    await vigil.apiKeys.revoke(String(req.params.accountId), req.params.id);
    res.status(204).end();
  }));
  router.use((req, res) => sendError(res, 404, errorBody(404, `No route ${req.method} ${req.baseUrl}${req.path}`)));
  router.use(errorHandler(options.logger ?? vigil.deps.logger));
  return router;
}
