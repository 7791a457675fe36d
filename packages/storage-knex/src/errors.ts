import { ConflictError, UnavailableError, ValidationError } from '@vigil/core';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P03', '08006', '08001', '08003']);

/** Database errors as Vigil's domain errors: a unique violation is a conflict, a lost connection 503. */
export function mapDbError(err: unknown, database: string): unknown {
  const e = err as { code?: string; message?: string; errno?: number };
  if (e?.code === '23505' || (e?.code === 'SQLITE_CONSTRAINT' && /UNIQUE|PRIMARY KEY/.test(e.message ?? ''))) {
    return new ConflictError('A row with this key already exists');
  }
  // PostgreSQL stores no NUL character in text or JSON; SQLite would. The client's text is at fault.
  if (e?.code === '22021' || e?.code === '22P05') {
    return new ValidationError([{ path: '', message: 'text must not contain the NUL character (\\u0000)' }]);
  }
  if (e?.code && CONNECTION_CODES.has(e.code)) {
    return new UnavailableError(`The database ${database} cannot be reached (${e.code})`, { cause: err });
  }
  if (/Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED/.test(e?.message ?? '')) {
    return new UnavailableError(`The database ${database} cannot be reached`, { cause: err });
  }
  return err;
}

/** Runs a database call with its errors mapped to Vigil's domain errors. */
export function dbCall(database: string) {
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw mapDbError(err, database);
    }
  };
}
