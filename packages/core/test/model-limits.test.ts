import { describe, expect, it } from 'vitest';
import { ApiCheckCreateSchema, TcpCheckCreateSchema } from '../src/model/check.js';
import { AlertChannelCreateSchema } from '../src/model/alert-channel.js';
import { CheckSessionTriggerSchema } from '../src/model/check-session.js';
import { IncidentUpdateCreateSchema } from '../src/model/incident.js';
import { SnippetCreateSchema } from '../src/model/snippet.js';
import { accepts, issuesOf } from './assertions.js';

const x = (n: number) => 'x'.repeat(n);
const tcp = (extra: Record<string, unknown>) => ({ name: 'db', request: { hostname: 'db.example.com', port: 5432 }, ...extra });
const api = (request: Record<string, unknown>) => ({ name: 'api', request: { url: 'https://example.com', ...request } });

describe('limits on free-text fields: at the maximum accepted, one over refused naming the field', () => {
  const cases: [string, (n: number) => [unknown, unknown], number, string][] = [
    ['name', (n) => [TcpCheckCreateSchema, tcp({ name: x(n) })], 255, 'name'],
    ['tag', (n) => [TcpCheckCreateSchema, tcp({ tags: [x(n)] })], 64, 'tags.0'],
    ['tags per resource', (n) => [TcpCheckCreateSchema, tcp({ tags: Array.from({ length: n }, (_, i) => `t${i}`) })], 100, 'tags'],
    ['header key', (n) => [ApiCheckCreateSchema, api({ headers: [{ key: x(n), value: 'v' }] })], 255, 'request.headers.0.key'],
    ['header value', (n) => [ApiCheckCreateSchema, api({ headers: [{ key: 'k', value: x(n) }] })], 4096, 'request.headers.0.value'],
    ['url', (n) => [ApiCheckCreateSchema, api({ url: `https://example.com/${x(n - 20)}` })], 2048, 'request.url'],
    ['long text', (n) => [IncidentUpdateCreateSchema, { status: 'INVESTIGATING', description: x(n) }], 10_000, 'description'],
    ['code', (n) => [SnippetCreateSchema, { name: 's', script: x(n) }], 100_000, 'script'],
    ['webhook header value', (n) => [AlertChannelCreateSchema, { type: 'WEBHOOK', config: { name: 'h', url: 'https://h.example.com', headers: [{ key: 'k', value: x(n) }] } }], 4096, 'config.headers.0.value'],
  ];
  it.each(cases)('%s', (_name, make, max, path) => {
    const [schema, ok] = make(max);
    expect(accepts(schema as never, ok)).toBe(true);
    const [, over] = make(max + 1);
    expect(issuesOf(schema as never, over).map((i) => i.path)).toEqual([path]);
  });
});

describe('an array where an object is expected', () => {
  it('is refused as the whole body, named as the body', () => {
    expect(issuesOf(CheckSessionTriggerSchema, [])).toEqual([{ path: '', message: 'the request body must be an object, not an array' }]);
  });
  it('is refused as a field', () => {
    expect(issuesOf(CheckSessionTriggerSchema, { target: [] })).toEqual([{ path: 'target', message: 'must be an object, not an array' }]);
  });
});
