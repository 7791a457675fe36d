import { createHash } from 'node:crypto';

/** The longest cleaned message kept; longer ones are cut so that grouping keys stay bounded. */
export const MAX_CLEANED_LENGTH = 1000;

// Order matters: the most specific shapes first, so a UUID is not eaten as hex and then numbers.
const RULES: [RegExp, string | ((match: string) => string)][] = [
  [/\bhttps?:\/\/[^\s?#'"]*\?[^\s#'"]*/gi, (url) => `${url.slice(0, url.indexOf('?'))}?<query>`],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g, '<timestamp>'],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, '<ip>'],
  [/\[[0-9a-f]*:[0-9a-f:.]*\](?::\d{1,5})?|\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b|\b(?:[0-9a-f]{1,4}:)+:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?|(?<![\w:])::[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*\b/gi, '<ip>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>'],
  [/"[^"\n]*"/g, '"<value>"'],
  // An apostrophe inside a word (`can't`) does not open a quoted value.
  [/(?<!\w)'[^'\n]*'(?!\w)/g, "'<value>'"],
  // Digits glued to a word's start stay (`v2`, `IPv4`); units after a number do not stop it (`5000ms`).
  [/(?<![A-Za-z_\d.])\d+(?:\.\d+)?/g, '<number>'],
];

/**
 * Replaces the parts of an error message that differ between occurrences of the same error
 * (ids, times, addresses, quoted values, query strings, numbers) so that they group together.
 */
export function cleanErrorMessage(raw: string): string {
  let out = raw;
  for (const [pattern, replacement] of RULES) {
    out = out.replace(pattern, typeof replacement === 'string' ? () => replacement : replacement);
  }
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > MAX_CLEANED_LENGTH ? out.slice(0, MAX_CLEANED_LENGTH) : out;
}

/** SHA-256 (hex) of a cleaned message: the error group's errorHash. */
export function hashErrorMessage(cleaned: string): string {
  return createHash('sha256').update(cleaned, 'utf8').digest('hex');
}
