import { createToken } from './token.js';

/**
 * Encrypts secrets at rest: client-certificate keys and passphrases, secret variables, channel
 * secrets, dashboard keys. The key comes from the host and never from the database.
 */
export interface SecretBox {
  encrypt(plaintext: string): string;
  /** Throws when the value was not sealed by this box's key or was altered. */
  decrypt(sealed: string): string;
  isSealed(value: string): boolean;
}

export const SECRET_BOX = createToken<SecretBox>('vigil.secretBox');
