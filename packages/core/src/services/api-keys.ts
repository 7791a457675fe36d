import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConflictError, ForbiddenError, UnauthorizedError, ValidationError } from '../errors.js';
import { ApiKeyCreateSchema, type ApiKey, type ApiKeyResponse } from '../model/account.js';
import { parse } from '../model/parse.js';
import type { AuthContext, Authenticator, AuthRequest } from '../ports/authenticator.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, stringId } from './support.js';

const PREFIX_LENGTH = 12;

function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function toResponse(key: ApiKey): ApiKeyResponse {
  const { hash: _hash, ...rest } = key;
  return rest;
}

/** API keys: issued by the host, stored as a SHA-256 hash, the full key shown once. */
export class ApiKeyService {
  constructor(private readonly deps: ServiceDeps) {}

  async create(accountId: string, body: unknown): Promise<{ apiKey: ApiKeyResponse; key: string }> {
    const { name } = parse(ApiKeyCreateSchema, body);
    await this.deps.storage.accounts.get(accountId).then((a) => found(a, 'Account'));
    const key = `vgl_${randomBytes(32).toString('base64url')}`;
    const record = await this.deps.storage.apiKeys.insert({
      id: this.deps.ids.uuid(),
      accountId,
      name,
      prefix: key.slice(0, PREFIX_LENGTH),
      hash: hashKey(key),
      created_at: nowIso(this.deps),
      lastUsedAt: null,
      revokedAt: null,
    });
    return { apiKey: toResponse(record), key };
  }

  /**
   * Registers a key the host chose (e.g. from its environment) unless it is registered already.
   * It must be long enough to be unguessable.
   */
  async ensure(accountId: string, key: string, name = 'host key'): Promise<ApiKeyResponse> {
    if (key.length < 32) throw new ValidationError([{ path: 'key', message: 'must be at least 32 characters' }]);
    const existing = (await this.deps.storage.apiKeys.findByPrefix(key.slice(0, PREFIX_LENGTH))).find((k) => k.hash === hashKey(key));
    if (existing) {
      if (existing.accountId !== accountId) throw new ConflictError('This API key belongs to another account');
      return toResponse(existing);
    }
    await this.deps.storage.accounts.get(accountId).then((a) => found(a, 'Account'));
    return toResponse(await this.deps.storage.apiKeys.insert({
      id: this.deps.ids.uuid(), accountId, name, prefix: key.slice(0, PREFIX_LENGTH), hash: hashKey(key),
      created_at: nowIso(this.deps), lastUsedAt: null, revokedAt: null,
    }));
  }

  async list(accountId: string): Promise<ApiKeyResponse[]> {
    return (await this.deps.storage.apiKeys.list(accountId)).map(toResponse);
  }

  async revoke(accountId: string, rawId: unknown): Promise<void> {
    const id = stringId(rawId);
    if (!(await this.deps.storage.apiKeys.revoke(accountId, id, nowIso(this.deps)))) found(null, 'API key');
  }
}

/**
 * `Authorization: Bearer <key>` plus `x-service-account`, checked against stored key hashes in
 * constant time. The key is never logged.
 */
export class ApiKeyAuthenticator implements Authenticator {
  constructor(private readonly deps: ServiceDeps) {}

  async authenticate(request: AuthRequest): Promise<AuthContext> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? '');
    if (!match) throw new UnauthorizedError('Missing or malformed Authorization header (Bearer <API key>)');
    const key = match[1]!;
    const digest = Buffer.from(hashKey(key), 'hex');
    const candidates = key.length >= PREFIX_LENGTH ? await this.deps.storage.apiKeys.findByPrefix(key.slice(0, PREFIX_LENGTH)) : [];
    const stored = candidates.find((c) => {
      const h = Buffer.from(c.hash, 'hex');
      return h.length === digest.length && timingSafeEqual(h, digest);
    });
    if (!stored || stored.revokedAt !== null) throw new UnauthorizedError('Invalid API key');
    const account = request.account?.trim();
    if (!account) throw new UnauthorizedError('x-service-account header is required');
    if (account !== stored.accountId) throw new ForbiddenError('The API key does not belong to this account');
    await this.deps.storage.apiKeys.touch(stored.id, nowIso(this.deps));
    return { accountId: stored.accountId, apiKeyId: stored.id };
  }
}
