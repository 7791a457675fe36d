import type { Logger, LogMeta } from '../ports/logger.js';

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

/** Field names whose values a log line never shows, whatever a caller passes. */
const SENSITIVE_KEY = /pass(word|phrase)?$|secret|token|api[-_]?key|authorization|cookie|private[-_]?key|^key$/i;
const REDACTED = '[redacted]';

function redactMeta(meta: LogMeta, depth = 0): LogMeta {
  const walk = (key: string, value: unknown, level: number): unknown => {
    if (SENSITIVE_KEY.test(key) && value !== null && value !== undefined) return REDACTED;
    if (level >= 4 || value === null || typeof value !== 'object' || value instanceof Date) return value;
    if (Array.isArray(value)) return value.map((x) => walk('', x, level + 1));
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, walk(k, x, level + 1)]));
  };
  return Object.fromEntries(Object.entries(meta).map(([k, x]) => [k, walk(k, x, depth)]));
}

/**
 * The logger Vigil hands its engine and services: fields named like a secret (password, secret,
 * token, apiKey, authorization, cookie, privateKey, key) are masked before they reach `inner`.
 * Values are scrubbed where they are made (run secrets, channel secrets); this guards the names.
 */
export function redactingLogger(inner: Logger): Logger {
  if (inner === silentLogger) return inner;
  const at = (level: Level) => (msg: string, meta?: LogMeta) => inner[level](msg, meta === undefined ? undefined : redactMeta(meta));
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: (meta) => redactingLogger(inner.child(redactMeta(meta))),
  };
}
