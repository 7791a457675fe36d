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

const noop = () => undefined;
export const silentLogger: Logger = {
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
  child: () => silentLogger,
};

type Level = 'error' | 'warn' | 'info' | 'debug';
const LEVELS: Level[] = ['error', 'warn', 'info', 'debug'];

/** One JSON line per entry on stderr, at `level` and above. */
export function consoleLogger(level: Level = 'info', bound: LogMeta = {}): Logger {
  const max = LEVELS.indexOf(level);
  const write = (l: Level) => (msg: string, meta?: LogMeta) => {
    if (LEVELS.indexOf(l) > max) return;
    process.stderr.write(`${JSON.stringify({ level: l, time: new Date().toISOString(), msg, ...bound, ...meta })}\n`);
  };
  return {
    error: write('error'),
    warn: write('warn'),
    info: write('info'),
    debug: write('debug'),
    child: (meta) => consoleLogger(level, { ...bound, ...meta }),
  };
}
