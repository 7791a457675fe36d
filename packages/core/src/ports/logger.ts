import { createToken } from './token.js';

export type LogMeta = Record<string, unknown>;

/** Structured logging, as a port. pino fits it as it is; Vigil is silent by default. */
export interface Logger {
  error(msg: string, meta?: LogMeta): void;
  warn(msg: string, meta?: LogMeta): void;
  info(msg: string, meta?: LogMeta): void;
  debug(msg: string, meta?: LogMeta): void;
  child(meta: LogMeta): Logger;
}

export const LOGGER = createToken<Logger>('vigil.logger');
