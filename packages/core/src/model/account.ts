import * as v from 'valibot';
import { TimestampSchema, UuidSchema, nameSchema } from './primitives.js';
import { AlertSettingsSchema, modelObject } from './shared.js';

export const AccountSchema = v.object({
  id: UuidSchema,
  name: v.string(),
  /** Settings that apply to a check whose useGlobalAlertSettings is true. */
  alertSettings: AlertSettingsSchema,
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
});
export type Account = v.InferOutput<typeof AccountSchema>;

const apiKeyEntries = {
  id: UuidSchema,
  accountId: v.string(),
  name: v.string(),
  /** The key's first 12 characters, shown to tell keys apart and used to look a key up. */
  prefix: v.string(),
  created_at: TimestampSchema,
  lastUsedAt: v.nullable(TimestampSchema),
  revokedAt: v.nullable(TimestampSchema),
};

export const ApiKeySchema = v.object({
  ...apiKeyEntries,
  /** Hex SHA-256 of the whole key; the key itself is never stored. */
  hash: v.pipe(v.string(), v.hexadecimal()),
});
export type ApiKey = v.InferOutput<typeof ApiKeySchema>;

export const ApiKeyCreateSchema = modelObject({
  name: nameSchema(200),
});
export type ApiKeyCreate = v.InferOutput<typeof ApiKeyCreateSchema>;

export const ApiKeyResponseSchema = v.object(apiKeyEntries);
export type ApiKeyResponse = v.InferOutput<typeof ApiKeyResponseSchema>;
