/**
 * Domain errors. They carry a stable `code` and the HTTP status the edge maps them to, but they
 * are not HTTP errors: only the HTTP adapter turns them into a response.
 */
export type VigilErrorCode =
  | 'VALIDATION'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'INVALID_TRANSITION'
  | 'UNAVAILABLE'
  | 'INTERNAL';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The HTTP reason phrase for a status code, as the spec's error body carries it. */
export function reasonPhrase(statusCode: number): string {
  return REASONS[statusCode] ?? 'Error';
}

export class VigilError extends Error {
  readonly code: VigilErrorCode;
  readonly statusCode: number;

  constructor(code: VigilErrorCode, statusCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VigilError';
    this.code = code;
    this.statusCode = statusCode;
  }

  /** The HTTP reason phrase for this error's status (the spec's `error` field). */
  get error(): string {
    return reasonPhrase(this.statusCode);
  }

  /** The spec's error body: `{statusCode, error, message}`. */
  toJSON(): { statusCode: number; error: string; message: string } {
    return { statusCode: this.statusCode, error: this.error, message: this.message };
  }
}

/** Where an invalid value came from, as docs/decisions.md names it in a 400's `validation.source`. */
export type ValidationSource = 'payload' | 'query' | 'params';

export interface ValidationIssue {
  /** Dotted path of the offending field, e.g. `request.port` or `environmentVariables.3.key`. */
  path: string;
  message: string;
}

export class ValidationError extends VigilError {
  readonly source: ValidationSource;
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[], source: ValidationSource = 'payload') {
    super('VALIDATION', 400, formatIssues(issues));
    this.name = 'ValidationError';
    this.source = source;
    this.issues = issues;
  }

  /** The field paths named by this error, without duplicates, in order. */
  get keys(): string[] {
    return [...new Set(this.issues.map((i) => i.path))];
  }

  override toJSON() {
    return { ...super.toJSON(), validation: { source: this.source, keys: this.keys } };
  }
}

function formatIssues(issues: ValidationIssue[]): string {
  if (issues.length === 0) return 'Invalid input';
  return issues.map((i) => (i.path ? `"${i.path}" ${i.message}` : i.message)).join('; ');
}

export class UnauthorizedError extends VigilError {
  constructor(message = 'Missing or invalid API key') {
    super('UNAUTHORIZED', 401, message);
    this.name = 'UnauthorizedError';
  }
}

export class ForbiddenError extends VigilError {
  constructor(message = 'Forbidden') {
    super('FORBIDDEN', 403, message);
    this.name = 'ForbiddenError';
  }
}

export class NotFoundError extends VigilError {
  constructor(message = 'Not Found') {
    super('NOT_FOUND', 404, message);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends VigilError {
  constructor(message: string) {
    super('CONFLICT', 409, message);
    this.name = 'ConflictError';
  }
}

export class PayloadTooLargeError extends VigilError {
  constructor(message = 'Request body is too large') {
    super('PAYLOAD_TOO_LARGE', 413, message);
    this.name = 'PayloadTooLargeError';
  }
}

export class RateLimitedError extends VigilError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, message = 'Rate limit exceeded') {
    super('RATE_LIMITED', 429, message);
    this.name = 'RateLimitedError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A state change that the resource's current state does not allow. */
export class InvalidTransitionError extends VigilError {
  constructor(message: string) {
    super('INVALID_TRANSITION', 409, message);
    this.name = 'InvalidTransitionError';
  }
}

/** A dependency (the database, a provider) cannot be reached; the request may be retried. */
export class UnavailableError extends VigilError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', 503, message, options);
    this.name = 'UnavailableError';
  }
}

/**
 * True when `err` is a VigilError. Checked by shape as well as `instanceof`, because a dual
 * ESM/CJS package can be loaded twice and then has two VigilError classes.
 */
export function isVigilError(err: unknown): err is VigilError {
  if (err instanceof VigilError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const e = err as Partial<VigilError>;
  return typeof e.code === 'string' && typeof e.statusCode === 'number' && typeof e.message === 'string';
}

export function isValidationError(err: unknown): err is ValidationError {
  return isVigilError(err) && err.code === 'VALIDATION' && Array.isArray((err as ValidationError).issues);
}

/**
 * True when `err` carries the error code `code`: a VigilError of that code, or any error object
 * (a storage driver's, one from another copy of this package) whose `code` is that string.
 */
export function hasCode(err: unknown, code: VigilErrorCode): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
