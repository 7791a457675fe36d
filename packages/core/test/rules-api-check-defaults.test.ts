import { describe, expect, it } from 'vitest';
import { joinBaseUrl, mergeApiCheckDefaults, type ApiCheckDefaultsInput, type ApiRequestDefaultsTarget } from '../src/rules/api-check-defaults.js';

const request = (o: Partial<ApiRequestDefaultsTarget> = {}): ApiRequestDefaultsTarget & { method: string } => ({
  method: 'GET', url: '/health', headers: [], queryParameters: [], assertions: [], basicAuth: null, ...o,
});
const defaults = (o: Partial<ApiCheckDefaultsInput> = {}): ApiCheckDefaultsInput => ({
  url: 'https://api.example.com/v1', headers: [], queryParameters: [], assertions: [], basicAuth: { username: '', password: '' }, ...o,
});
const kv = (key: string, value: string) => ({ key, value });
const assertion = (source: string, comparison: string, target: string, property = '') => ({ source, comparison, target, property, regex: null });

describe('API check defaults of a group', () => {
  it('the group\'s url is the base of a relative url, keeping the base\'s own path', () => {
    expect(mergeApiCheckDefaults(request({ url: '/users?active=1' }), defaults()).url).toBe('https://api.example.com/v1/users?active=1');
    expect(mergeApiCheckDefaults(request({ url: '/users' }), defaults({ url: 'https://api.example.com/v1/' })).url).toBe('https://api.example.com/v1/users');
    expect(mergeApiCheckDefaults(request({ url: '?probe=1' }), defaults()).url).toBe('https://api.example.com/v1?probe=1');
    expect(joinBaseUrl('https://h.example', '/')).toBe('https://h.example/');
  });

  it('an absolute url stays as it is; {{GROUP_BASE_URL}} is filled with the base', () => {
    expect(mergeApiCheckDefaults(request({ url: 'https://other.example.com/x' }), defaults()).url).toBe('https://other.example.com/x');
    expect(mergeApiCheckDefaults(request({ url: '{{GROUP_BASE_URL}}/users' }), defaults({ url: 'https://api.example.com/v1/' })).url)
      .toBe('https://api.example.com/v1/users');
    expect(mergeApiCheckDefaults(request({ url: '{{ GROUP_BASE_URL }}/a?b={{B}}' }), defaults()).url).toBe('https://api.example.com/v1/a?b={{B}}');
  });

  it('without a group base url a relative url stays relative (the run says why it cannot go)', () => {
    expect(mergeApiCheckDefaults(request({ url: '/health' }), defaults({ url: '' })).url).toBe('/health');
    expect(mergeApiCheckDefaults(request({ url: '{{GROUP_BASE_URL}}/x' }), defaults({ url: '  ' })).url).toBe('{{GROUP_BASE_URL}}/x');
  });

  it('headers: the group\'s apply unless the check sets the same name, compared without case', () => {
    const merged = mergeApiCheckDefaults(
      request({ headers: [kv('accept', 'text/plain'), kv('X-Trace', '1')] }),
      defaults({ headers: [kv('Accept', 'application/json'), kv('X-Env', 'prod')] }),
    );
    expect(merged.headers).toEqual([kv('X-Env', 'prod'), kv('accept', 'text/plain'), kv('X-Trace', '1')]);
  });

  it('query parameters: the group\'s apply unless the check sets the key; a key the check repeats stays repeated', () => {
    const merged = mergeApiCheckDefaults(
      request({ queryParameters: [kv('tag', 'a'), kv('tag', 'b')] }),
      defaults({ queryParameters: [kv('tag', 'group'), kv('Tag', 'other-case'), kv('region', 'eu')] }),
    );
    expect(merged.queryParameters).toEqual([kv('Tag', 'other-case'), kv('region', 'eu'), kv('tag', 'a'), kv('tag', 'b')]);
  });

  it('assertions: the group\'s are added to the check\'s, once', () => {
    const ok = assertion('STATUS_CODE', 'EQUALS', '200');
    const json = assertion('HEADERS', 'CONTAINS', 'json', 'content-type');
    const fast = assertion('RESPONSE_TIME', 'LESS_THAN', '500');
    expect(mergeApiCheckDefaults(request({ assertions: [ok, fast] }), defaults({ assertions: [json, { ...ok }] })).assertions).toEqual([ok, fast, json]);
  });

  it('basic auth: the check\'s own when it names a user, else the group\'s when that names one', () => {
    const group = defaults({ basicAuth: { username: 'group', password: 'g' } });
    expect(mergeApiCheckDefaults(request(), group).basicAuth).toEqual({ username: 'group', password: 'g' });
    expect(mergeApiCheckDefaults(request({ basicAuth: { username: '', password: 'x' } }), group).basicAuth).toEqual({ username: 'group', password: 'g' });
    expect(mergeApiCheckDefaults(request({ basicAuth: { username: 'own', password: 'o' } }), group).basicAuth).toEqual({ username: 'own', password: 'o' });
    expect(mergeApiCheckDefaults(request(), defaults()).basicAuth).toBeNull();
  });

  it('keeps the request\'s other fields, changes nothing in place, and leaves a request outside a group alone', () => {
    const own = request({ headers: [kv('A', '1')] });
    const snapshot = structuredClone(own);
    const merged = mergeApiCheckDefaults(own, defaults({ headers: [kv('B', '2')] }));
    expect(merged.method).toBe('GET');
    expect(own).toEqual(snapshot);
    expect(mergeApiCheckDefaults(own, null)).toBe(own);
    expect(mergeApiCheckDefaults(own, undefined)).toBe(own);
  });
});
