import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { ValidationError, type ValidationIssue } from '../errors.js';
import {
  ClientCertificateCreateSchema,
  type ClientCertificate,
  type ClientCertificateResponse,
} from '../model/client-certificate.js';
import { parse } from '../model/parse.js';
import type { ClientCertificateLookup, OpenedCertificate } from '../ports/client-certificates.js';
import type { Page } from '../model/primitives.js';
import { nowIso, type ServiceDeps } from './deps.js';
import { found, mapPage, pageOptions, stringId } from './support.js';

function toResponse(c: ClientCertificate): ClientCertificateResponse {
  return { id: c.id, host: c.host, cert: c.cert, ca: c.ca, created_at: c.created_at };
}

/** Does a certificate's host (possibly `*.example.com`) cover a target host name? */
export function hostMatches(pattern: string, hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (!pattern.startsWith('*.')) return pattern === host;
  const suffix = pattern.slice(1);
  // A wildcard covers exactly one label, as in TLS.
  return host.endsWith(suffix) && !host.slice(0, -suffix.length).includes('.') && host.length > suffix.length;
}

export class ClientCertificateService {
  constructor(private readonly deps: ServiceDeps) {}

  async create(accountId: string, body: unknown): Promise<ClientCertificateResponse> {
    const input = parse(ClientCertificateCreateSchema, body);
    const issues: ValidationIssue[] = [];
    let cert: X509Certificate | null = null;
    try {
      cert = new X509Certificate(input.cert);
    } catch {
      issues.push({ path: 'cert', message: 'is not a readable X.509 certificate' });
    }
    if (input.ca) {
      try {
        new X509Certificate(input.ca);
      } catch {
        issues.push({ path: 'ca', message: 'is not a readable X.509 certificate' });
      }
    }
    if (input.key) {
      try {
        const key = createPrivateKey({ key: input.key, passphrase: input.passphrase ?? undefined });
        const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
        if (cert && !spki.equals(cert.publicKey.export({ type: 'spki', format: 'der' }))) {
          issues.push({ path: 'key', message: 'does not belong to the certificate' });
        }
      } catch {
        issues.push(input.passphrase || /ENCRYPTED/.test(input.key)
          ? { path: 'passphrase', message: 'does not open the private key' }
          : { path: 'key', message: 'is not a readable private key' });
      }
    }
    if (issues.length) throw new ValidationError(issues);
    const box = this.deps.secretBox;
    const record = await this.deps.storage.clientCertificates.insert(accountId, {
      id: this.deps.ids.uuid(),
      host: input.host,
      cert: input.cert,
      ca: input.ca,
      encryptedKey: input.key ? box.encrypt(input.key) : null,
      encryptedPassphrase: input.passphrase ? box.encrypt(input.passphrase) : null,
      created_at: nowIso(this.deps),
    });
    return toResponse(record);
  }

  async get(accountId: string, rawId: unknown): Promise<ClientCertificateResponse> {
    return toResponse(found(await this.deps.storage.clientCertificates.get(accountId, stringId(rawId)), 'Client certificate'));
  }

  async list(accountId: string, rawQuery: unknown): Promise<Page<ClientCertificateResponse>> {
    return mapPage(await this.deps.storage.clientCertificates.list(accountId, pageOptions(rawQuery)), toResponse);
  }

  async delete(accountId: string, rawId: unknown): Promise<void> {
    if (!(await this.deps.storage.clientCertificates.delete(accountId, stringId(rawId)))) found(null, 'Client certificate');
  }

  /** The account's certificates as one run sees them (its job's `clientCertificates`). */
  lookupFor(accountId: string): ClientCertificateLookup {
    return { forHost: (hostname) => this.findForHost(accountId, hostname) };
  }

  /** The certificate for a target host: an exact host first, else a one-label wildcard. */
  async findForHost(accountId: string, hostname: string): Promise<OpenedCertificate | null> {
    const store = this.deps.storage.clientCertificates;
    const host = hostname.toLowerCase();
    // The host itself and the one wildcard that covers it (a wildcard covers one label).
    const dot = host.indexOf('.');
    const all = store.listByHosts
      ? await store.listByHosts(accountId, dot > 0 ? [host, `*${host.slice(dot)}`] : [host])
      : (await store.list(accountId, { limit: 10_000, offset: 0 })).items;
    const match = all.find((c) => c.host === host) ?? all.find((c) => hostMatches(c.host, hostname));
    if (!match) return null;
    const box = this.deps.secretBox;
    return {
      host: match.host,
      cert: match.cert,
      ca: match.ca,
      key: match.encryptedKey ? box.decrypt(match.encryptedKey) : null,
      passphrase: match.encryptedPassphrase ? box.decrypt(match.encryptedPassphrase) : null,
    };
  }
}
