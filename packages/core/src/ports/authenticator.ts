import { createToken } from './token.js';

/** What an HTTP request offers to prove who it is. */
export interface AuthRequest {
  /** The Authorization header as sent (`Bearer <key>`). */
  authorization?: string | undefined;
  /** The `x-service-account` header as sent. */
  account?: string | undefined;
}

export interface AuthContext {
  accountId: string;
  apiKeyId: string | null;
}

/**
 * Decides which account a request acts for. Throws UnauthorizedError (no or bad credentials) or
 * ForbiddenError (valid key, other account). A host may replace it to use its own sessions.
 */
export interface Authenticator {
  authenticate(request: AuthRequest): Promise<AuthContext>;
}

export const AUTHENTICATOR = createToken<Authenticator>('vigil.authenticator');
