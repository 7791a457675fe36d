import net from 'node:net';
import { ValidationError, type ValidationIssue } from '@vigil/core';
import { asNumber } from './assertions.js';

const TEXT_ONLY = new Set(['IS_EMPTY', 'NOT_EMPTY', 'CONTAINS', 'NOT_CONTAINS']);
const HOSTNAME = /^[A-Za-z0-9._-]+$/;

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const hasTemplate = (x: unknown) => typeof x === 'string' && x.includes('{{');

function hostnameProblem(hostname: string, ipFamily: unknown): string | null {
  if (hostname.includes('://')) return 'must be a hostname or IP address without a scheme (such as tcp://)';
  const bracketed = hostname.startsWith('[') && hostname.endsWith(']');
  const host = bracketed ? hostname.slice(1, -1) : hostname;
  const literal = net.isIP(host);
  if (bracketed && literal !== 6) return 'holds brackets, but no IPv6 address inside them';
  if (literal === 0) {
    if (/[/?#@\s]/.test(host)) return 'must be a hostname or IP address without a path, credentials or spaces';
    if (host.includes(':')) return 'must not include the port; set request.port instead';
    if (!HOSTNAME.test(host)) return 'must hold only letters, digits, dots, hyphens and underscores';
    return null;
  }
  const family = ipFamily === 'IPv6' ? 6 : 4;
  if (literal !== family) return `is an IPv${literal} address, but request.ipFamily is IPv${family}`;
  return null;
}

/**
 * The TCP rules that the check schema cannot state: a hostname without scheme or port that fits
 * the ipFamily, and assertions whose comparison and target make sense for their source.
 */
export function validateTcpCheck(check: unknown): void {
  const request = isObject(check) ? check.request : undefined;
  if (!isObject(request)) throw new ValidationError([{ path: 'request', message: 'is required' }]);
  const issues: ValidationIssue[] = [];

  const { hostname, ipFamily, assertions } = request;
  if (typeof hostname === 'string' && !hasTemplate(hostname)) {
    const problem = hostnameProblem(hostname, ipFamily);
    if (problem) issues.push({ path: 'request.hostname', message: problem });
  }

  if (Array.isArray(assertions)) {
    assertions.forEach((a: unknown, i) => {
      if (!isObject(a)) return;
      const at = (field: string) => `request.assertions.${i}.${field}`;
      const target = typeof a.target === 'string' ? a.target : '';
      const numericTarget = hasTemplate(target) || asNumber(target) !== null;
      if (a.source === 'RESPONSE_TIME') {
        if (TEXT_ONLY.has(String(a.comparison))) {
          issues.push({ path: at('comparison'), message: 'does not apply to RESPONSE_TIME; use EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN' });
        } else if (!numericTarget) {
          issues.push({ path: at('target'), message: 'must be a number of milliseconds' });
        }
        if (typeof a.property === 'string' && a.property !== '') issues.push({ path: at('property'), message: 'applies to RESPONSE_DATA only' });
        if (typeof a.regex === 'string' && a.regex !== '') issues.push({ path: at('regex'), message: 'applies to RESPONSE_DATA only' });
      } else if ((a.comparison === 'LESS_THAN' || a.comparison === 'GREATER_THAN') && !numericTarget) {
        issues.push({ path: at('target'), message: `must be a number for ${a.comparison}` });
      }
    });
  }

  if (issues.length > 0) throw new ValidationError(issues);
}
