import { describe, expect, it } from 'vitest';
import { tcpRunner, validateTcpCheck } from '../src/index.js';

const body = (request: Record<string, unknown>) => ({ checkType: 'TCP', name: 'db', request: { hostname: 'db.example.com', port: 5432, ...request } });

function issues(check: unknown): { path: string; message: string }[] {
  try {
    validateTcpCheck(check);
    return [];
  } catch (err) {
    expect((err as { code?: string }).code).toBe('VALIDATION');
    return (err as { issues: { path: string; message: string }[] }).issues;
  }
}

describe('validateTcpCheck', () => {
  it('is the runner\'s validate', () => {
    expect(tcpRunner().validate).toBe(validateTcpCheck);
  });

  it.each([
    ['db.example.com', 'IPv4'],
    ['10.0.0.5', 'IPv4'],
    ['::1', 'IPv6'],
    ['[2001:db8::1]', 'IPv6'],
    ['redis_primary.internal', 'IPv4'],
    ['{{DB_HOST}}', 'IPv6'],
  ])('accepts hostname %s with %s', (hostname, ipFamily) => {
    expect(issues(body({ hostname, ipFamily }))).toEqual([]);
  });

  it.each([
    ['tcp://db.example.com', 'IPv4', 'without a scheme'],
    ['db.example.com:5432', 'IPv4', 'must not include the port; set request.port instead'],
    ['db.example.com/health', 'IPv4', 'without a path'],
    ['[db.example.com]', 'IPv4', 'no IPv6 address inside them'],
    ['db example', 'IPv4', 'without a path, credentials or spaces'],
    ['dbé.example.com', 'IPv4', 'only letters, digits'],
    ['127.0.0.1', 'IPv6', 'is an IPv4 address, but request.ipFamily is IPv6'],
    ['::1', 'IPv4', 'is an IPv6 address, but request.ipFamily is IPv4'],
  ])('rejects hostname %s with %s', (hostname, ipFamily, message) => {
    const found = issues(body({ hostname, ipFamily }));
    expect(found).toHaveLength(1);
    expect(found[0]!.path).toBe('request.hostname');
    expect(found[0]!.message).toContain(message);
  });

  it('rejects assertions whose comparison or target do not fit their source, naming each field', () => {
    const found = issues(body({
      assertions: [
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '200' },
        { source: 'RESPONSE_TIME', comparison: 'CONTAINS', target: '2' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: 'fast' },
        { source: 'RESPONSE_TIME', comparison: 'EQUALS', target: '5', property: 'x', regex: '\\d' },
        { source: 'RESPONSE_DATA', comparison: 'GREATER_THAN', target: 'abc' },
        { source: 'RESPONSE_DATA', comparison: 'GREATER_THAN', target: '{{LIMIT}}' },
        { source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'OK', regex: '(\\w+)' },
      ],
    }));
    expect(found).toEqual([
      { path: 'request.assertions.1.comparison', message: 'does not apply to RESPONSE_TIME; use EQUALS, NOT_EQUALS, LESS_THAN or GREATER_THAN' },
      { path: 'request.assertions.2.target', message: 'must be a number of milliseconds' },
      { path: 'request.assertions.3.property', message: 'applies to RESPONSE_DATA only' },
      { path: 'request.assertions.3.regex', message: 'applies to RESPONSE_DATA only' },
      { path: 'request.assertions.4.target', message: 'must be a number for GREATER_THAN' },
    ]);
  });

  it('rejects a body without a request', () => {
    expect(issues({ checkType: 'TCP' })).toEqual([{ path: 'request', message: 'is required' }]);
    expect(issues(null)).toEqual([{ path: 'request', message: 'is required' }]);
  });
});
