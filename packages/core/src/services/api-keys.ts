import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ConflictError, ForbiddenError, UnauthorizedError, ValidationError } from '../errors.js';
import { ApiKeyCreateSchema, type ApiKey, type ApiKeyResponse } from '../model/account.js';
import { parse } from '../model/parse.js';
import { sha256Hex } from '../sha256.js';
import type { AuthContext, Authenticator, AuthRequest } from '../ports/authenticator.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, stringId } from './support.js';

const PREFIX_LENGTH = 12;

const hashKey = sha256Hex;

function toResponse(key: ApiKey): ApiKeyResponse {
  const { hash: _hash, ...rest } = key;
  return rest;
}

/** API keys: issued by the host, stored as a SHA-256 hash, the full key shown once. */
export class ApiKeyService {
  constructor(private readonly deps: ServiceDeps) {}

  /** A new key for the account: `create(accountId, 'deploy pipeline')` or `create(accountId, { name })`. */
  async create(accountId: string, body: unknown): Promise<{ apiKey: ApiKeyResponse; key: string }> {
    const { name } = parse(ApiKeyCreateSchema, typeof body === 'string' ? { name: body } : body);
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
    const cache = keyCache(this.deps);
    for (const [hash, entry] of cache) if (entry.key.id === id) cache.delete(hash);
  }
}

interface CachedKey {
  key: ApiKey;
  /** Until when (ms) the key is trusted without reading it again. */
  until: number;
  /** When lastUsedAt was last written (ms). */
  touched: number;
}

const MAX_CACHED_KEYS = 10_000;
const TOUCH_EVERY_MS = 60_000;

// Verified keys by hash, per Vigil instance, shared by the authenticator and the key service so
// that a revoke in this process takes effect at once.
const caches = new WeakMap<ServiceDeps, Map<string, CachedKey>>();
function keyCache(deps: ServiceDeps): Map<string, CachedKey> {
  let cache = caches.get(deps);
  if (!cache) caches.set(deps, (cache = new Map()));
  return cache;
}

export interface ApiKeyAuthenticatorOptions {
  /**
   * How long a verified key is trusted before it is read again (default 5). A key revoked by
   * another process stops working within this time; one revoked by this process at once. 0 reads
   * the key on every request.
   */
  cacheSeconds?: number;
}

/**
 * `Authorization: Bearer <key>` plus `x-service-account`, checked against stored key hashes in
 * constant time. The key is never logged; lastUsedAt is written at most once a minute.
 */
export class ApiKeyAuthenticator implements Authenticator {
  private readonly cacheMs: number;
  private readonly reading = new Map<string, Promise<ApiKey | undefined>>();

  constructor(
    private readonly deps: ServiceDeps,
    options: ApiKeyAuthenticatorOptions = {},
  ) {
    this.cacheMs = Math.max(0, options.cacheSeconds ?? 5) * 1000;
  }

  async authenticate(request: AuthRequest): Promise<AuthContext> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? '');
    if (!match) throw new UnauthorizedError('Missing or malformed Authorization header (Bearer <API key>)');
    const key = match[1]!;
    const hash = hashKey(key);
    const now = this.deps.clock.now().getTime();
    const cache = keyCache(this.deps);
    let entry = cache.get(hash);
    if (!entry || entry.until <= now) {
      const stored = await this.lookup(key, hash);
      if (!stored || stored.revokedAt !== null) {
        cache.delete(hash);
        throw new UnauthorizedError('Invalid API key');
      }
      entry = { key: stored, until: now + this.cacheMs, touched: entry?.touched ?? 0 };
      if (this.cacheMs > 0) {
        cache.delete(hash);
        cache.set(hash, entry);
        if (cache.size > MAX_CACHED_KEYS) cache.delete(cache.keys().next().value!);
      }
    }
    const stored = entry.key;
    const account = request.account?.trim();
    if (!account) throw new UnauthorizedError('x-service-account header is required');
    if (account !== stored.accountId) throw new ForbiddenError('The API key does not belong to this account');
    if (now - entry.touched >= TOUCH_EVERY_MS) {
      entry.touched = now;
      await this.deps.storage.apiKeys.touch(stored.id, new Date(now).toISOString());
    }
    return { accountId: stored.accountId, apiKeyId: stored.id };
  }

  /**
   * One read per key at a time: requests that present the same key while it is being read (a
   * client opening many connections at once, with a cold cache) share that read.
   */
  private lookup(key: string, hash: string): Promise<ApiKey | undefined> {
    const pending = this.reading.get(hash);
    if (pending) return pending;
    const read = this.read(key, hash).finally(() => this.reading.delete(hash));
    this.reading.set(hash, read);
    return read;
  }

  private async read(key: string, hash: string): Promise<ApiKey | undefined> {
    const digest = Buffer.from(hash, 'hex');
    const candidates = key.length >= PREFIX_LENGTH ? await this.deps.storage.apiKeys.findByPrefix(key.slice(0, PREFIX_LENGTH)) : [];
    return candidates.find((c) => {
      const h = Buffer.from(c.hash, 'hex');
      return h.length === digest.length && timingSafeEqual(h, digest);
    });
  }
}
