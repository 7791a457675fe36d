import crypto, { createHash } from 'node:crypto';

// crypto.hash (Node 20.12 and later) hashes a short text in a third of createHash's time: slot ids
// are hashed for every scheduled run a store writes, API keys for every request.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** The SHA-256 of `text` (UTF-8), in hex. */
export const sha256Hex = (text: string): string => (oneShot ? oneShot('sha256', text, 'hex') : createHash('sha256').update(text, 'utf8').digest('hex'));
