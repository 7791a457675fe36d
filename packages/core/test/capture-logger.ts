import type { LogMeta, Logger } from '../src/index.js';

export interface Line {
  level: string;
  msg: string;
  meta: LogMeta;
}

/** A Logger that keeps every entry, with the fields of its children bound in. */
export function capture(lines: Line[], bound: LogMeta = {}): Logger {
  const at = (level: string) => (msg: string, meta: LogMeta = {}) => {
    lines.push({ level, msg, meta: { ...bound, ...meta } });
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: (meta) => capture(lines, { ...bound, ...meta }) };
}
