import * as v from 'valibot';
import { CodeSchema, TimestampSchema } from './primitives.js';
import { HeaderValueSchema, modelObject } from './shared.js';

const HOST = /^(\*\.)?(?=.{1,253}$)(?:(?!-)[a-z0-9-]{1,63}(?<!-)\.)*(?!-)[a-z0-9-]{1,63}(?<!-)$/i;

const pem = (label: RegExp, what: string) =>
  v.pipe(CodeSchema, v.check((s) => label.test(s), `must be ${what} in PEM text`));

export const CertificatePemSchema = pem(/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/, 'a certificate');
export const PrivateKeyPemSchema = pem(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----/, 'a private key');

export const ClientCertificateCreateSchema = modelObject({
  host: v.pipe(
    v.string(),
    v.regex(HOST, 'must be a host name without scheme, path or port (a leading *. is allowed)'),
    v.toLowerCase(),
  ),
  cert: CertificatePemSchema,
  ca: v.optional(v.nullable(CertificatePemSchema), null),
  key: v.optional(v.nullable(PrivateKeyPemSchema), null),
  passphrase: v.optional(v.nullable(HeaderValueSchema), null),
});
export type ClientCertificateCreate = v.InferOutput<typeof ClientCertificateCreateSchema>;

const publicEntries = {
  id: v.string(),
  host: v.string(),
  cert: v.string(),
  ca: v.nullable(v.string()),
  created_at: TimestampSchema,
};

/** Stored: the key and passphrase only sealed. */
export const ClientCertificateSchema = v.object({
  ...publicEntries,
  accountId: v.string(),
  encryptedKey: v.nullable(v.string()),
  encryptedPassphrase: v.nullable(v.string()),
});
export type ClientCertificate = v.InferOutput<typeof ClientCertificateSchema>;

/** Never the key or the passphrase. */
export const ClientCertificateResponseSchema = v.object(publicEntries);
export type ClientCertificateResponse = v.InferOutput<typeof ClientCertificateResponseSchema>;
