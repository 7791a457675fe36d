import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../ports/secret-box.js';

const PREFIX = 'vgl1';

/** Reads a 32-byte key given as a Buffer, 64 hex characters or base64 of 32 bytes. */
export function parseSecretKey(key: Buffer | string): Buffer {
  const buf = typeof key !== 'string'
    ? key
    : /^[0-9a-f]{64}$/i.test(key)
      ? Buffer.from(key, 'hex')
      : Buffer.from(key, 'base64');
  if (buf.length !== 32) {
    throw new Error('The secret key must be 32 bytes (64 hex characters or base64 of 32 bytes)');
  }
  return buf;
}

/** AES-256-GCM with a random 96-bit nonce per value: `vgl1:<iv>:<tag>:<ciphertext>` in base64url. */
export function aesGcmSecretBox(key: Buffer | string): SecretBox {
  const k = parseSecretKey(key);
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [PREFIX, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join(':');
    },
    decrypt(sealed) {
      const parts = sealed.split(':');
      if (parts.length !== 4 || parts[0] !== PREFIX) throw new Error('Not a sealed secret');
      const [, iv, tag, ct] = parts as [string, string, string, string];
      const decipher = createDecipheriv('aes-256-gcm', k, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
    isSealed(value) {
      return value.startsWith(`${PREFIX}:`) && value.split(':').length === 4;
    },
  };
}
