import { describe, expect, it } from 'vitest';
import { isAbsoluteHttpUrl, isRelativeApiUrl, isTemplatedUrl } from '../src/model/api-request.js';
import { CheckGroupCreateSchema } from '../src/model/check-group.js';
import {
  ApiCheckCreateSchema,
  ApiCheckResponseSchema,
  ApiCheckUpdateSchema,
  CheckCreateSchemas,
  CheckSchema,
  CheckUpdateSchemas,
  isBuiltinCheckType,
} from '../src/model/check.js';
import { parse } from '../src/model/parse.js';
import { accepts, issuesOf, pathsOf } from './assertions.js';

const api = (request: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'orders API',
  request: { url: 'https://api.example.com/orders', ...request },
  ...extra,
});

describe('API check create', () => {
  it('fills the request defaults and the API response-time defaults', () => {
    const parsed = parse(ApiCheckCreateSchema, api({}, { unknown: 1 }));
    expect(parsed.request).toEqual({
      method: 'GET',
      url: 'https://api.example.com/orders',
      headers: [],
      queryParameters: [],
      body: '',
      bodyType: 'NONE',
      basicAuth: null,
      followRedirects: true,
      skipSSL: false,
      assertions: [],
      ipFamily: 'IPv4',
    });
    expect(parsed).toMatchObject({ frequency: 10, frequencyOffset: null, degradedResponseTime: 10000, maxResponseTime: 20000, shouldFail: false });
    expect(parsed).not.toHaveProperty('unknown');
  });

  it('requires name, request and request.url', () => {
    expect(issuesOf(ApiCheckCreateSchema, {})).toEqual([
      { path: 'name', message: 'is required' },
      { path: 'request', message: 'is required' },
    ]);
    expect(pathsOf(ApiCheckCreateSchema, { name: 'x', request: {} })).toEqual(['request.url']);
    expect(pathsOf(ApiCheckCreateSchema, api({ url: '   ' }))).toEqual(['request.url']);
  });

  it.each([
    ['https://api.example.com/orders?x=1', true],
    ['http://127.0.0.1:8080/', true],
    ['/health', true],
    ['?probe=1', true],
    ['{{BASE}}/health', true],
    ['{{GROUP_BASE_URL}}/health', true],
    ['ftp://files.example.com/', false],
    ['//api.example.com/health', false],
    ['api.example.com/health', false],
    ['https://api.example.com/a b', false],
    [`https://api.example.com/${'a'.repeat(2048)}`, false],
  ])('url %s accepted: %s', (url, ok) => {
    expect(accepts(ApiCheckCreateSchema, api({ url }))).toBe(ok);
  });

  it('trims the url and says what a url must be', () => {
    expect(parse(ApiCheckCreateSchema, api({ url: '  https://api.example.com/  ' })).request.url).toBe('https://api.example.com/');
    expect(issuesOf(ApiCheckCreateSchema, api({ url: 'mailto:ops@example.com' }))).toEqual([{
      path: 'request.url',
      message: "must be an http:// or https:// URL, or a path starting with / that the group's apiCheckDefaults.url completes",
    }]);
  });

  it('rejects a wrong method, bodyType, ipFamily, assertion source or comparison, naming the field', () => {
    expect(pathsOf(ApiCheckCreateSchema, api({
      method: 'FETCH',
      bodyType: 'XML',
      ipFamily: 'IPv5',
      assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS' }, { source: 'STATUS_CODE', comparison: 'MATCHES' }],
    })).sort()).toEqual(['request.assertions.0.source', 'request.assertions.1.comparison', 'request.bodyType', 'request.ipFamily', 'request.method']);
  });

  it('accepts every source docs/decisions.md names for API checks, with property and regex', () => {
    const assertions = [
      { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
      { source: 'TEXT_BODY', comparison: 'CONTAINS', target: 'ok', regex: 'status: (\\w+)' },
      { source: 'JSON_BODY', comparison: 'HAS_KEY', property: '$.items[0]', target: 'id' },
      { source: 'HEADERS', comparison: 'EQUALS', property: 'content-type', target: 'application/json' },
      { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '500' },
    ];
    const parsed = parse(ApiCheckCreateSchema, api({ assertions }));
    expect(parsed.request.assertions.map((a) => a.source)).toEqual(['STATUS_CODE', 'TEXT_BODY', 'JSON_BODY', 'HEADERS', 'RESPONSE_TIME']);
    expect(parsed.request.assertions[0]).toEqual({ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', property: '', regex: null });
    expect(pathsOf(ApiCheckCreateSchema, api({ assertions: [{ source: 'TEXT_BODY', comparison: 'EQUALS', regex: '(' }] }))).toEqual(['request.assertions.0.regex']);
  });

  it('takes headers that are HTTP header names with single-line values, and any query parameters', () => {
    const parsed = parse(ApiCheckCreateSchema, api({
      method: 'POST',
      headers: [{ key: 'X-Api-Key', value: '{{SERVICE_SECRET_KEY}}' }],
      queryParameters: [{ key: 'tag', value: 'a b' }, { key: 'tag', value: 'ü' }],
      body: '{"a":1}',
      bodyType: 'JSON',
      basicAuth: { username: 'ops' },
      followRedirects: false,
      skipSSL: true,
    }));
    expect(parsed.request).toMatchObject({ method: 'POST', bodyType: 'JSON', basicAuth: { username: 'ops', password: '' }, followRedirects: false, skipSSL: true });
    expect(pathsOf(ApiCheckCreateSchema, api({ headers: [{ key: 'Bad Name', value: 'x' }, { key: 'X-Ok', value: 'a\r\nInjected: 1' }] })))
      .toEqual(['request.headers.0.key', 'request.headers.1.value']);
  });

  it.each([
    ['degradedResponseTime', 0, true], ['degradedResponseTime', 30000, true], ['degradedResponseTime', 30001, false],
    ['degradedResponseTime', null, true], ['maxResponseTime', -1, false], ['maxResponseTime', 30000, true],
    ['maxResponseTime', 30001, false], ['maxResponseTime', 2.5, false],
  ])('%s %s accepted: %s', (field, value, ok) => {
    expect(accepts(ApiCheckCreateSchema, api({}, { [field]: value }))).toBe(ok);
  });

  it.each([
    [0, 10, true], [0, 20, true], [0, 30, true], [0, 15, false], [0, null, false],
    [5, 50, true], [5, 51, false], [720, 12, true], [720, 13, false], [3, null, false],
  ])('frequency %s with frequencyOffset %s accepted: %s (the spec\'s rules name API checks)', (frequency, frequencyOffset, ok) => {
    expect(accepts(ApiCheckCreateSchema, api({}, { frequency, frequencyOffset }))).toBe(ok);
  });

  it('names frequencyOffset when it does not fit the frequency', () => {
    expect(issuesOf(ApiCheckCreateSchema, api({}, { frequency: 0 }))).toEqual([
      { path: 'frequencyOffset', message: 'is required when frequency is 0 (10, 20 or 30)' },
    ]);
    expect(issuesOf(ApiCheckCreateSchema, api({}, { frequency: 5, frequencyOffset: 51 }))).toEqual([
      { path: 'frequencyOffset', message: 'must be between 1 and 50 when frequency is 5' },
    ]);
  });
});

describe('API check update, record and response', () => {
  const stored = { id: '7d2b0c5e-3b0a-4c43-9e0f-8f5a3c2a1b00', accountId: 'acc', created_at: '2026-05-01T12:00:00.000Z', updated_at: null };

  it('update applies no defaults and still validates what it is given', () => {
    expect(parse(ApiCheckUpdateSchema, {})).toEqual({});
    expect(pathsOf(ApiCheckUpdateSchema, { request: { url: 'ftp://x' }, maxResponseTime: 40000 })).toEqual(['request.url', 'maxResponseTime']);
  });

  it('is a built-in type: the check variant tells it apart and the service maps it to its schemas', () => {
    const record = parse(CheckSchema, { ...parse(ApiCheckCreateSchema, api()), ...stored, checkType: 'API' });
    expect(record.checkType === 'API' && record.request.method).toBe('GET');
    expect(isBuiltinCheckType('API')).toBe(true);
    expect(CheckCreateSchemas.API).toBe(ApiCheckCreateSchema);
    expect(CheckUpdateSchemas.API).toBe(ApiCheckUpdateSchema);
    expect(pathsOf(ApiCheckResponseSchema, { ...parse(ApiCheckCreateSchema, api()), ...stored, checkType: 'API' })).toEqual(['alertChannels']);
  });
});

describe('API urls', () => {
  it('tells relative, templated and absolute http(s) urls apart', () => {
    expect([isRelativeApiUrl('/a'), isRelativeApiUrl('?a=1'), isRelativeApiUrl('//h/a'), isRelativeApiUrl('https://h/')]).toEqual([true, true, false, false]);
    expect([isTemplatedUrl('{{A}}/x'), isTemplatedUrl('/x')]).toEqual([true, false]);
    expect([isAbsoluteHttpUrl('https://h.example/x'), isAbsoluteHttpUrl('file:///etc/passwd'), isAbsoluteHttpUrl('http://')]).toEqual([true, false, false]);
  });

  it('a group\'s apiCheckDefaults.url is empty, templated or an http(s) URL', () => {
    const group = (url: string) => ({ name: 'g', apiCheckDefaults: { url } });
    expect(parse(CheckGroupCreateSchema, group(' https://api.example.com/v1 ')).apiCheckDefaults.url).toBe('https://api.example.com/v1');
    expect(accepts(CheckGroupCreateSchema, group(''))).toBe(true);
    expect(accepts(CheckGroupCreateSchema, group('{{API_BASE}}'))).toBe(true);
    expect(pathsOf(CheckGroupCreateSchema, group('api.example.com'))).toEqual(['apiCheckDefaults.url']);
  });
});
