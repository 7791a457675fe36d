import { createToken } from './token.js';

export interface IdGenerator {
  /** A random UUID (v4) for string ids. */
  uuid(): string;
  /** An unguessable URL-safe token (ping tokens, dashboard keys). */
  token(bytes?: number): string;
}

export const ID_GENERATOR = createToken<IdGenerator>('vigil.idGenerator');
