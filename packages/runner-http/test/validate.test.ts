import { describe, expect, it } from 'vitest';
import { validateApiCheck } from '../src/index.js';

const body = (request: Record<string, unknown>) => ({ checkType: 'API', name: 'api', request: { url: 'https://api.example.com/', ...request } });
const a = (source: string, comparison: string, target = '', extra: Record<string, unknown> = {}) => ({ source, comparison, target, property: '', regex: null, ...extra });

function issues(check: unknown): { path: string; message: string }[] {
  try {
    validateApiCheck(check);
    return [];
  } catch (err) {
    return (err as { issues: { path: string; message: string }[] }).issues;
  }
}

describe('validateApiCheck', () => {
  it('accepts assertions that make sense for their source, and templated targets', () => {
    expect(issues(body({
      bodyType: 'JSON', body: '{"a": 1}',
      assertions: [
        a('STATUS_CODE', 'EQUALS', '200'), a('STATUS_CODE', 'CONTAINS', '20'), a('RESPONSE_TIME', 'LESS_THAN', '{{LIMIT}}'),
        a('JSON_BODY', 'HAS_KEY', 'id', { property: '$.items[0]' }), a('JSON_BODY', 'IS_NULL', '', { property: 'owner' }),
        a('HEADERS', 'CONTAINS', 'json', { property: 'content-type' }), a('HEADERS', 'HAS_KEY', 'etag'), a('TEXT_BODY', 'CONTAINS', 'ok', { regex: 'x(y)' }),
      ],
    }))).toEqual([]);
  });

  it('names each assertion that cannot work, and why', () => {
    expect(issues(body({
      assertions: [
        a('RESPONSE_TIME', 'CONTAINS', 'fast'),
        a('STATUS_CODE', 'EQUALS', 'OK'),
        a('STATUS_CODE', 'EQUALS', '200', { property: 'x' }),
        a('TEXT_BODY', 'EQUALS', 'ok', { property: '$.a' }),
        a('TEXT_BODY', 'HAS_KEY', 'a'),
        a('JSON_BODY', 'EQUALS', 'x', { property: '$.a[' }),
        a('JSON_BODY', 'GREATER_THAN', 'many', { property: 'count' }),
        a('HEADERS', 'IS_NULL', '', { property: 'etag' }),
        a('HEADERS', 'HAS_KEY', 'etag', { property: 'etag' }),
      ],
    }))).toEqual([
      { path: 'request.assertions.0.comparison', message: 'does not apply to RESPONSE_TIME; use EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN' },
      { path: 'request.assertions.1.target', message: 'must be a number for STATUS_CODE' },
      { path: 'request.assertions.2.property', message: 'does not apply to STATUS_CODE' },
      { path: 'request.assertions.3.property', message: 'does not apply to TEXT_BODY; use JSON_BODY to read a JSON path' },
      { path: 'request.assertions.4.comparison', message: 'does not apply to TEXT_BODY; use JSON_BODY' },
      { path: 'request.assertions.5.property', message: 'must be a JSON path such as $.items[0].id or status' },
      { path: 'request.assertions.6.target', message: 'must be a number for GREATER_THAN' },
      { path: 'request.assertions.7.comparison', message: 'does not apply to HEADERS; use IS_EMPTY or NOT_EMPTY' },
      { path: 'request.assertions.8.property', message: 'must be empty for HAS_KEY: the target names the header' },
    ]);
  });

  it('a JSON body must be JSON unless it holds placeholders', () => {
    expect(issues(body({ bodyType: 'JSON', body: '{"a": ' }))).toEqual([{ path: 'request.body', message: 'is not JSON, but bodyType is JSON' }]);
    expect(issues(body({ bodyType: 'JSON', body: '{"a": {{A}}}' }))).toEqual([]);
    expect(issues(body({ bodyType: 'RAW', body: '{"a": ' }))).toEqual([]);
  });

  it('requires a request', () => {
    expect(issues({ checkType: 'API' })).toEqual([{ path: 'request', message: 'is required' }]);
  });
});
