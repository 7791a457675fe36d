import { isJsonPath, ValidationError, type ValidationIssue } from '@vigil/core';
import { asNumber } from './assertions.js';

const NUMERIC = new Set(['EQUALS', 'NOT_EQUALS', 'LESS_THAN', 'GREATER_THAN']);
const ORDERED = new Set(['LESS_THAN', 'GREATER_THAN']);
const KEYED = new Set(['HAS_KEY', 'NOT_HAS_KEY']);
const NULLS = new Set(['IS_NULL', 'NOT_NULL']);

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
const hasTemplate = (x: unknown) => typeof x === 'string' && x.includes('{{');

/** What is wrong with one assertion for an HTTP response, or null. */
function assertionProblem(a: Record<string, unknown>): { field: string; message: string } | null {
  const { source, comparison } = a;
  const target = typeof a.target === 'string' ? a.target : '';
  const property = typeof a.property === 'string' ? a.property : '';
  const numericTarget = hasTemplate(target) || asNumber(target) !== null;
  if (source === 'STATUS_CODE' || source === 'RESPONSE_TIME') {
    if (!NUMERIC.has(String(comparison)) && !(source === 'STATUS_CODE' && (comparison === 'CONTAINS' || comparison === 'NOT_CONTAINS'))) {
      return { field: 'comparison', message: `does not apply to ${source}; use EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN` };
    }
    if (NUMERIC.has(String(comparison)) && !numericTarget) return { field: 'target', message: `must be a number for ${source}` };
    if (property !== '') return { field: 'property', message: `does not apply to ${source}` };
    if (typeof a.regex === 'string' && a.regex !== '') return { field: 'regex', message: `does not apply to ${source}` };
    return null;
  }
  if (ORDERED.has(String(comparison)) && !numericTarget) return { field: 'target', message: `must be a number for ${String(comparison)}` };
  if (source === 'TEXT_BODY') {
    if (property !== '') return { field: 'property', message: 'does not apply to TEXT_BODY; use JSON_BODY to read a JSON path' };
    if (KEYED.has(String(comparison)) || NULLS.has(String(comparison))) return { field: 'comparison', message: `does not apply to TEXT_BODY; use JSON_BODY` };
  }
  if (source === 'JSON_BODY' && property !== '' && !hasTemplate(property) && !isJsonPath(property)) {
    return { field: 'property', message: 'must be a JSON path such as $.items[0].id or status' };
  }
  if (source === 'HEADERS') {
    if (NULLS.has(String(comparison))) return { field: 'comparison', message: 'does not apply to HEADERS; use IS_EMPTY or NOT_EMPTY' };
    if (KEYED.has(String(comparison)) && property !== '') return { field: 'property', message: `must be empty for ${String(comparison)}: the target names the header` };
  }
  return null;
}

/**
 * The API-check rules that the check schema cannot state: assertions whose comparison, target and
 * property make sense for their source, and a JSON body that is JSON.
 */
export function validateApiCheck(check: unknown): void {
  const request = isObject(check) ? check.request : undefined;
  if (!isObject(request)) throw new ValidationError([{ path: 'request', message: 'is required' }]);
  const issues: ValidationIssue[] = [];
  if (Array.isArray(request.assertions)) {
    request.assertions.forEach((a: unknown, i) => {
      if (!isObject(a)) return;
      const problem = assertionProblem(a);
      if (problem) issues.push({ path: `request.assertions.${i}.${problem.field}`, message: problem.message });
    });
  }
  const body = request.body;
  if (request.bodyType === 'JSON' && typeof body === 'string' && body.trim() !== '' && !hasTemplate(body)) {
    try {
      JSON.parse(body);
    } catch {
      issues.push({ path: 'request.body', message: 'is not JSON, but bodyType is JSON' });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
}
